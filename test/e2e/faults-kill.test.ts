/**
 * SIGKILL of `grantflow sync` at seeded moments in each phase (extraction, a load transaction, a token refresh,
 * snapshot writing), each followed by a normal sync: the warehouse equals an uninterrupted sync's, no key is held
 * twice, no half-written Parquet is visible, and the credentials file is whole, 0600 and still works. A kill right
 * after a commit leaves the committed rows' raw pages on disk, so a replay of the resumed run rebuilds the same tables.
 */
import { join } from 'node:path';
import { Rng } from '../../src/simulator/random.ts';
import { mkdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import {
  postgresSchema,
  referenceDump,
  startSite,
  tempDir,
  writeCredentials,
  type TableDump,
  syncCliArgs,
} from '../support/harness.ts';
import {
  assertNoSecretsLeaked,
  checkCredentialsFile,
  checkSnapshotDir,
  cli,
  cliInProcess,
  expectSameWarehouse,
  killOnStderr,
  killWhen,
  landedTexts,
  recordIssuedSecrets,
} from '../support/faults.ts';

type Phase = 'extraction' | 'load transaction' | 'token refresh' | 'snapshots';
interface KillCase {
  readonly phase: Phase;
  /** Extraction: the n-th site request; load: the n-th open transaction; refresh: the n-th refresh; snapshots: the n-th file. */
  readonly nth: number;
  readonly delayMs: number;
}

// Seeded moments: the same twelve kills on every run. tiny makes ~185 requests, ~25 load transactions, 39 snapshots.
// Kill moments are random but the same on every run of the suite.
const rng = new Rng(20261122);
const random = (): number => rng.next();
const pick = (lo: number, hi: number): number => lo + Math.floor(random() * (hi - lo + 1));
const cases: KillCase[] = [
  ...Array.from({ length: 4 }, () => ({ phase: 'extraction' as const, nth: pick(5, 170), delayMs: 0 })),
  ...Array.from({ length: 3 }, () => ({ phase: 'load transaction' as const, nth: pick(1, 16), delayMs: pick(0, 60) })),
  ...Array.from({ length: 3 }, () => ({ phase: 'token refresh' as const, nth: pick(1, 2), delayMs: 0 })),
  ...Array.from({ length: 2 }, () => ({ phase: 'snapshots' as const, nth: pick(1, 36), delayMs: pick(0, 5) })),
];

let sim: SimulatorHandle;
let reference: Record<string, TableDump>;
let work: { path: string; remove: () => Promise<void> };
let lastDir = '';

beforeAll(async () => {
  recordIssuedSecrets();
  // Short-lived tokens (refresh every ~0.5 s) and 10 ms per request, so one sync spans several refreshes.
  sim = await startSite({ scale: 'tiny', seed: 11, tokenTtlSeconds: 1, latency: { ms: 10 } });
  work = await tempDir('grantflow-faults-kill-');
  reference = await referenceDump(sim, work.path);
});

afterAll(async () => {
  await sim?.close();
  await work?.remove();
});

/**
 * A sync into `dir`; without models and data tests unless it writes snapshots (the snapshot kills count files the
 * model tables are among): the cases compare the extracted tables, and models cost CPU on every run.
 */
function syncArgs(dir: string, snapshot: boolean): string[] {
  return [...syncCliArgs(sim.url, dir, { snapshot }), ...(snapshot ? [] : ['--models', 'false'])];
}

/** Until the site has answered every request it received (bounded: a request of a dead client may never end). */
async function siteAnsweredAll(site: SimulatorHandle): Promise<void> {
  for (let waited = 0; waited < 5_000; waited += 10) {
    const counts = site.control.counts();
    const answered = Object.values(counts.byStatus).reduce((a, b) => a + b, 0);
    if (answered >= counts.total) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('SIGKILL at seeded moments, then a normal sync', () => {
  it.each(cases.map((c, i) => ({ ...c, i, label: `kill ${i} during ${c.phase} (n=${c.nth}, +${c.delayMs} ms)` })))(
    '$label',
    async ({ phase, nth, delayMs, i }) => {
      const dir = join(work.path, `case-${i}`);
      lastDir = dir;
      await mkdir(dir);
      const credsPath = await writeCredentials(sim, join(dir, 'creds.json'));
      const snapshot = phase === 'snapshots';
      sim.control.resetCounts();
      // Refresh cases: 40 ms per request, so a sync spans several refreshes even on a fast machine and the
      // refresh request is held (in flight) when the kill lands.
      sim.control.setLatency({ ms: phase === 'token refresh' ? 40 : 10 });

      const killed = await cli([...syncArgs(dir, snapshot), '--log-level', phase === 'snapshots' ? 'info' : 'warn'], {
        env: phase === 'load transaction' ? { GRANTFLOW_TEST_DELAY_COMMIT_MS: '100' } : {},
        onSpawn: (child) => {
          if (phase === 'extraction') killWhen(child, () => sim.control.counts().total >= nth);
          if (phase === 'token refresh') {
            // The refresh request is held by the simulator's latency when the kill lands: in flight.
            killWhen(child, () => (sim.control.counts().byTemplate['POST /api/o/token/'] ?? 0) >= nth);
          }
          if (phase === 'load transaction') killOnStderr(child, 'grantflow-test: load transaction open', nth, delayMs);
          if (phase === 'snapshots') killOnStderr(child, '"msg":"snapshot written"', nth, delayMs);
        },
      });
      expect(killed.signal, `the kill landed before the run ended (${killed.stderr.slice(-300)})`).toBe('SIGKILL');

      // A refresh the site still held (its latency) when the kill landed rotates the pair after the client died:
      // compared only once the site has answered it, or the comparison below races that rotation. Tokens live
      // ~1 s here, so a kill in any phase may land on a refresh in flight.
      await siteAnsweredAll(sim);
      // The file is whole JSON and 0600 whatever moment the kill hit.
      const afterKill = checkCredentialsFile(credsPath);
      if (afterKill.refresh_token !== sim.credentials.refresh_token) {
        // Killed with the refresh in flight: the site rotated the pair after the client died, so the file's
        // pair is dead (no client can avoid this with rotating refresh tokens). The next run says so, exit 2.
        const refused = await cliInProcess(syncArgs(dir, snapshot));
        expect(refused.code).toBe(2);
        expect(refused.stderr).toMatch(/^grantflow: .*invalid_grant.*\n$/);
        await writeCredentials(sim, credsPath); // an administrator issues the pair again
      }

      const rerun = await cliInProcess(syncArgs(dir, snapshot));
      expect(rerun.code, rerun.stderr).toBe(0);
      await expectSameWarehouse(join(dir, 'warehouse.duckdb'), reference);
      checkCredentialsFile(credsPath);
      if (snapshot) {
        const snaps = await checkSnapshotDir(join(dir, 'snapshots'));
        const written = /snapshots: (\d+) tables written/.exec(rerun.stdout)?.[1];
        expect(snaps.manifestTables).toBe(Number(written));
      }
    },
  );

  it('the credentials file left by the last case works for a further sync', async () => {
    const again = await cliInProcess(syncArgs(lastDir, false));
    expect(again.code, again.stderr).toBe(0);
    checkCredentialsFile(join(lastDir, 'creds.json'));
    await expectSameWarehouse(join(lastDir, 'warehouse.duckdb'), reference);
  });

  it('no secret appeared in any output', async () => {
    for (let i = 0; i < cases.length; i++) checkCredentialsFile(join(work.path, `case-${i}`, 'creds.json'));
    const landed = await landedTexts(work.path);
    expect(landed.length, 'raw pages were landed').toBeGreaterThan(0);
    assertNoSecretsLeaked(landed);
  });
});

describe('SIGKILL right after a commit, then a normal sync, then a replay of the run', () => {
  // The top-level programs list, and the first checkpoint of a fan-out stream: each is committed and the process
  // killed before it goes on; the resumed run does not fetch them again, so their raw pages must be on disk already.
  it.each(['programs', 'application_tasks'])('killed once %s is committed', async (stream) => {
    const dir = join(work.path, `after-commit-${stream}`);
    await mkdir(dir);
    await writeCredentials(sim, join(dir, 'creds.json'));
    sim.control.setLatency({ ms: 10 });
    // No token refresh in these runs: a SIGKILL that lands while one is under way loses the pair the site just
    // rotated (no process can save it), which the token cases above cover; here the kill is about the commit.
    sim.control.setTokenTtl(3600);
    const killed = await cli(syncArgs(dir, false), {
      env: { GRANTFLOW_TEST_DELAY_AFTER_COMMIT_MS: '300' },
      onSpawn: (child) => killOnStderr(child, `grantflow-test: load transaction committed (stream ${stream})`, 1),
    });
    expect(killed.signal, `the kill landed before the run ended (${killed.stderr.slice(-300)})`).toBe('SIGKILL');

    const rerun = await cliInProcess(syncArgs(dir, false));
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stdout).toMatch(/\(resumed\)/);
    const warehouse = join(dir, 'warehouse.duckdb');
    await expectSameWarehouse(warehouse, reference);

    // Both attempts landed under the one run id: replaying it rebuilds the same warehouse, the killed attempt's
    // committed stream included.
    const w = await openWarehouse(warehouse, { logger: silentLogger });
    const runs = await w.listRuns(10).finally(() => w.close());
    expect(runs).toHaveLength(1);
    const replayed = join(dir, 'replayed.duckdb');
    const replay = await cliInProcess([
      'replay',
      '--run',
      runs[0]!.runId,
      '--warehouse',
      replayed,
      '--raw-dir',
      join(dir, 'raw'),
    ]);
    expect(replay.code, replay.stderr).toBe(0);
    await expectSameWarehouse(replayed, reference);
    sim.control.setTokenTtl(1);
  });
});

describe.each(['duckdb', 'postgres'])('grantflow status after a SIGKILL (%s)', (dialect) => {
  it('says the run left running is not running any more, and only then', async () => {
    const dir = join(work.path, `status-${dialect}`);
    await mkdir(dir);
    await writeCredentials(sim, join(dir, 'creds.json'));
    const pgSchema = dialect === 'postgres' ? await postgresSchema() : null;
    const target = pgSchema ? ['--warehouse', pgSchema.url, '--schema', pgSchema.schema] : undefined;
    const status = (): Promise<Awaited<ReturnType<typeof cli>>> =>
      cliInProcess(['status', ...(target ?? ['--warehouse', join(dir, 'warehouse.duckdb')])]);
    const died = /running .*\n +why: no sync is running it: it was killed or crashed, and the next sync resumes it\n/;
    try {
      sim.control.setLatency({ ms: 10 });
      sim.control.resetCounts();
      let live: Awaited<ReturnType<typeof cli>> | null = null;
      const killed = await cli(syncCliArgs(sim.url, dir, { warehouse: target }), {
        onSpawn: (child) => {
          let asked = false;
          killWhen(child, () => {
            const n = sim.control.counts().total;
            // Postgres lets status read while the sync runs: there the run is running, and says nothing more.
            if (pgSchema && n >= 60 && !asked) {
              asked = true;
              sim.control.setLatency({ ms: 300 }); // the sync waits on the site while status starts and reads
              void status().then((r) => (live = r));
            }
            return n >= 60 && (pgSchema === null || live !== null);
          });
        },
      });
      sim.control.setLatency({ ms: 10 });
      expect(killed.signal, killed.stderr).toBe('SIGKILL');
      if (pgSchema) {
        const during = live as Awaited<ReturnType<typeof cli>> | null;
        expect(during?.code, during?.stderr).toBe(0);
        expect(during?.stdout).toMatch(/ running +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d /);
        expect(during?.stdout).not.toMatch(/no sync is running it/);
      }
      const after = await status();
      expect(after.code, after.stderr).toBe(0);
      expect(after.stdout).toMatch(died);
    } finally {
      await pgSchema?.drop();
    }
  });
});
