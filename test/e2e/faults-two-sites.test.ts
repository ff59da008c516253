/**
 * Two sites pointed at one warehouse (a DuckDB file; a Postgres schema): their ids collide, so a sync of the second
 * would overwrite and soft-delete the first one's rows and resume its killed run. It is refused (exit 2, one line,
 * nothing written), and the first site's next sync resumes its own run, equal to a lone sync. A site that moved to
 * a new address is accepted once with --site-moved. Only the kill needs a process; the runs after it are in process.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import {
  dumpWarehouse,
  postgresSchema,
  proxySite,
  referenceDump,
  startSite,
  summarize,
  syncCliArgs,
  tempDir,
  writeCredentials,
  type TableDump,
} from '../support/harness.ts';
import {
  assertNoSecretsLeaked,
  cli,
  cliInProcess,
  expectSameWarehouse,
  killWhen,
  recordIssuedSecrets,
} from '../support/faults.ts';

let first: SimulatorHandle;
let second: SimulatorHandle;
let work: { path: string; remove: () => Promise<void> };
let reference: Record<string, TableDump>;
const schemas: { drop: () => Promise<void> }[] = [];

beforeAll(async () => {
  recordIssuedSecrets();
  first = await startSite({ scale: 'tiny', seed: 31, latency: { ms: 5 } });
  second = await startSite({ scale: 'tiny', seed: 32 });
  work = await tempDir('grantflow-faults-two-sites-');
  reference = await referenceDump(first, work.path);
});

afterAll(async () => {
  await first?.close();
  await second?.close();
  for (const s of schemas) await s.drop();
  await work?.remove();
});

async function runsOf(target: string, schema?: string): Promise<string> {
  const w = await openWarehouse(target, { schema, logger: silentLogger });
  try {
    return JSON.stringify(await w.listRuns(10));
  } finally {
    await w.close();
  }
}

describe.each(['duckdb', 'postgres'])('a second site pointed at a warehouse (%s)', (dialect) => {
  it("is refused before it writes anything, even while the first site's run waits to be resumed", async () => {
    const dir = join(work.path, dialect);
    await mkdir(dir);
    const pg = dialect === 'postgres' ? await postgresSchema() : null;
    if (pg) schemas.push(pg);
    const target = pg ? ['--warehouse', pg.url, '--schema', pg.schema] : ['--warehouse', join(dir, 'warehouse.duckdb')];
    const [url, schema] = pg ? [pg.url, pg.schema] : [join(dir, 'warehouse.duckdb'), undefined];
    const credsFirst = await writeCredentials(first, join(dir, 'first.json'));
    const credsSecond = await writeCredentials(second, join(dir, 'second.json'));
    const args = (site: string, credentials: string): string[] =>
      syncCliArgs(site, dir, { credentials, warehouse: target });

    // The first site's sync is killed halfway: some streams are committed, its run waits to be resumed.
    first.control.resetCounts();
    const killed = await cli(args(first.url, credsFirst), {
      onSpawn: (child) => killWhen(child, () => first.control.counts().total >= 60),
    });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const before = summarize(await dumpWarehouse(url, { schema }));
    const runsBefore = await runsOf(url, schema);

    const refused = await cliInProcess(args(second.url, credsSecond));
    expect(refused.code, refused.stdout).toBe(2);
    const lines = refused.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('{'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`holds site ${first.url}`);
    expect(lines[0]).toContain(`not ${second.url}`);
    expect(refused.stderr).not.toMatch(/^\s+at /m);
    expect(summarize(await dumpWarehouse(url, { schema }))).toEqual(before);
    expect(await runsOf(url, schema)).toBe(runsBefore);

    const resumed = await cliInProcess(args(first.url, credsFirst));
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/\(resumed\)/);
    await expectSameWarehouse(url, reference, { schema });
  });
});

describe('a site that moved to a new address', () => {
  it('is refused at the new address until --site-moved says so, once', async () => {
    const dir = join(work.path, 'moved');
    await mkdir(dir);
    const credentials = await writeCredentials(first, join(dir, 'creds.json'));
    const synced = await cliInProcess(syncCliArgs(first.url, dir, { credentials }));
    expect(synced.code, synced.stderr).toBe(0);
    // The same site behind another address (a new domain, say).
    const moved = await proxySite(first.url, () => undefined);
    try {
      const refused = await cliInProcess(syncCliArgs(moved.url, dir, { credentials }));
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain('--site-moved');
      const accepted = await cliInProcess([...syncCliArgs(moved.url, dir, { credentials }), '--site-moved']);
      expect(accepted.code, accepted.stderr).toBe(0);
      // The warehouse now holds the new address: the flag is not needed again.
      const next = await cliInProcess(syncCliArgs(moved.url, dir, { credentials }));
      expect(next.code, next.stderr).toBe(0);
      await expectSameWarehouse(join(dir, 'warehouse.duckdb'), reference);
    } finally {
      await moved.close();
    }
  });

  it('no secret appeared in any output', () => {
    assertNoSecretsLeaked();
  });
});
