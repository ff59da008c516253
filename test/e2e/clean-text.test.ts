/**
 * Issue 44: site text (an error body, a field name) never reaches the terminal raw. A site sends terminal escapes
 * (clear screen, window title) and a line break followed by a forged summary line; sync, status and doctor, run in
 * process, print it escaped: no ESC, BEL or CR in their output and no line of the site's making. On both engines.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { postgresSchema, siteWithWarehouse } from '../support/harness.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

const forged = '\u001b[2J\u001b]0;owned\u0007\r\nFORGED LINE: 0 failed, all good';

/** Output that moves no cursor, sets no title and holds no line the site wrote. */
function expectClean(output: string): void {
  for (const raw of ['\u001b', '\u0007', '\r']) expect(output).not.toContain(raw);
  expect(output).not.toMatch(/^FORGED LINE/m);
}

describe.each(['duckdb', 'postgres'])('site text on the screen (%s)', (dialect) => {
  it('is printed escaped by sync, status and doctor', async () => {
    const s = await siteWithWarehouse({
      scale: 'tiny',
      seed: 44,
      hostile: {
        forgedField: { template: '/api/applications/', name: `x${forged}` },
        errorBody: { template: '/api/funds/', status: 400, body: `bad request${forged}` },
      },
    });
    cleanup.push(s.remove);
    let target = ['--warehouse', s.warehouse];
    if (dialect === 'postgres') {
      const pg = await postgresSchema();
      cleanup.push(pg.drop);
      target = ['--warehouse', pg.url, '--schema', pg.schema];
    }
    const common = ['--site', s.sim.url, '--credentials', s.credentials, ...target, '--models', 'false'];

    const sync = await runCliInProcess(['sync', ...common]);
    // The funds list failed with the site's body, and the forged field was read: both are in what was printed.
    expect(sync.stdout).toMatch(/^ {2}funds +failed .*bad request\\x1b\[2J/m);
    expectClean(sync.stdout + sync.stderr);

    const status = await runCliInProcess(['status', ...target]);
    expect(status.stdout).toMatch(/why: .*bad request\\x1b/);
    expect(status.stdout).toContain('x\\x1b[2J\\x1b]0;owned\\x07\\r\\nFORGED LINE');
    expectClean(status.stdout + status.stderr);

    // doctor probes the programs list: now answering the same body.
    s.sim.control.setHostile({ errorBody: { template: '/api/programs/', status: 400, body: `bad request${forged}` } });
    const doctor = await runCliInProcess(['doctor', ...common]);
    expect(doctor.stdout).toMatch(/^FAIL {2}site .*bad request\\x1b/m);
    expectClean(doctor.stdout + doctor.stderr);
  });
});
