/**
 * Test-only hook (fault suite): the first step whose name starts with GRANTFLOW_TEST_PAUSE_AT says so on stderr and
 * waits GRANTFLOW_TEST_PAUSE_MS (default 10 s), or until SIGINT/SIGTERM arrives, so a test can kill or signal the
 * process at that exact step (the CLI's own signal handlers, registered earlier, run first).
 */
const pauseAt = process.env.GRANTFLOW_TEST_PAUSE_AT ?? '';
const pauseMs = Number(process.env.GRANTFLOW_TEST_PAUSE_MS ?? 0) || 10_000;
let paused = false;

export async function testPause(step: string): Promise<void> {
  if (paused || pauseAt === '' || !step.startsWith(pauseAt)) return;
  paused = true;
  process.stderr.write(`grantflow-test: paused at ${step}\n`);
  await new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    const timer = setTimeout(done, pauseMs);
    process.on('SIGINT', done);
    process.on('SIGTERM', done);
  });
}
