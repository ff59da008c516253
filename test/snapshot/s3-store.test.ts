/**
 * The S3 store and the publisher over it, in process against a real S3 server (s3rver over HTTP), configured through
 * the environment as a user would: a file larger than a part goes up as a multipart upload and comes back identical;
 * a write that fails part way deletes what it uploaded and leaves the manifest as it was; a note left by a write that
 * was killed is undone (its objects deleted) before the next write; errors a person must fix exit 2.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3Store } from '../../src/snapshot/s3-store.ts';
import { writeSnapshots, type Manifest } from '../../src/snapshot/index.ts';
import { checkSnapshotTarget, undoKilledSnapshotWrite } from '../../src/snapshot/snapshot-target.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import type { Warehouse } from '../../src/warehouse/types.ts';
import { ConfigError, LockedError } from '../../src/util/errors.ts';
import { leaseMs } from '../../src/util/lock-note.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { tempDir } from '../support/harness.ts';
import { startS3Server, type S3Server } from '../support/s3-server.ts';

let s3: S3Server;
let work: Awaited<ReturnType<typeof tempDir>>;
let warehouse: Warehouse;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  s3 = await startS3Server();
  for (const [k, v] of Object.entries(s3.env)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  work = await tempDir('grantflow-s3-store-');
  warehouse = await openWarehouse(join(work.path, 'w.duckdb'), { logger: silentLogger });
  await warehouse.exec(
    `CREATE TABLE grants AS SELECT i::BIGINT AS id, (i * 1.25)::DECIMAL(18,2) AS amount,
            TIMESTAMPTZ '2026-01-01 00:00:00+00' + to_seconds(i) AS at FROM range(500) t(i)`,
  );
  await warehouse.exec(`CREATE TABLE notes AS SELECT i::INTEGER AS id, 'n' || i AS body FROM range(20) t(i)`);
});

afterAll(async () => {
  await warehouse?.close();
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await s3?.close();
  await work?.remove();
});

const url = (prefix: string): string => `s3://${s3.bucket}/${prefix}`;

describe('S3Store', () => {
  it('uploads a file larger than a part in parts and downloads it identical', async () => {
    const store = S3Store.open(url('store'), { forcePathStyle: true });
    try {
      const big = join(work.path, 'big.bin');
      writeFileSync(big, randomBytes(20 * 1024 * 1024 + 123));
      await store.putFile('a/big.bin', big, 'application/octet-stream');
      const back = join(work.path, 'back.bin');
      await store.getFile('a/big.bin', back);
      const digest = (p: string): string => createHash('sha256').update(readFileSync(p)).digest('hex');
      expect(digest(back)).toBe(digest(big));
      expect(await store.list('a/')).toEqual(['a/big.bin']);
      expect(await store.exists('a/big.bin')).toBe(true);
      expect(await store.getText('a/none.json')).toBeNull();
      expect(await store.exists('a/none.json')).toBe(false);
      await store.delete('a/big.bin');
      expect(await store.list('')).toEqual([]);
      // s3rver cannot list multipart uploads (NotImplemented): nothing to abort, and no error.
      expect(await store.abortIncompleteUploads()).toBe(0);
    } finally {
      store.close();
    }
  });

  it('a missing bucket is a setting to fix (exit 2), named in one line', async () => {
    const error = await checkSnapshotTarget('s3://no-such-bucket/x', { s3ForcePathStyle: true }).catch((e) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect(String(error.message)).toMatch(
      /^the snapshot location s3:\/\/no-such-bucket\/x is not writable: NoSuchBucket/,
    );
    expect(String(error.message)).not.toContain('\n');
  });

  it('says to set a region when none is configured (exit 2)', async () => {
    const region = process.env.AWS_REGION;
    delete process.env.AWS_REGION;
    try {
      const error = await checkSnapshotTarget(url('x'), { s3ForcePathStyle: true }).catch((e) => e);
      expect(error).toBeInstanceOf(ConfigError);
      expect(String(error.message)).toMatch(/no AWS region is set; set AWS_REGION/);
    } finally {
      process.env.AWS_REGION = region;
    }
  });
});

describe('publishing to the store', () => {
  const options = (prefix: string, tables: string[]) => ({
    dir: url(prefix),
    runId: `run-${randomBytes(3).toString('hex')}`,
    retain: 2,
    tables,
    s3ForcePathStyle: true,
  });
  const readManifest = async (store: S3Store): Promise<Manifest> =>
    JSON.parse((await store.getText('_manifest.json')) ?? 'null') as Manifest;

  it('a write that fails part way deletes what it uploaded; the manifest still names the last snapshot', async () => {
    const store = S3Store.open(url('fails'), { forcePathStyle: true });
    try {
      const good = await writeSnapshots(warehouse, options('fails', ['grants', 'notes']));
      const before = await store.list('');
      expect(before.sort()).toEqual(['_manifest.json', ...good.tables.flatMap((t) => [t.path, t.latest!])].sort());
      const manifest = await readManifest(store);

      const failed = await writeSnapshots(warehouse, {
        ...options('fails', ['grants', 'missing_table']),
        now: new Date(Date.now() + 5000),
      }).then(
        () => null,
        (e: unknown) => e as Error,
      );
      expect(failed).toBeInstanceOf(Error);
      expect(failed?.message).toMatch(/missing_table/);
      expect((await store.list('')).sort()).toEqual(before.sort());
      expect(await readManifest(store)).toEqual(manifest);
    } finally {
      store.close();
    }
  });

  it("undoes a killed write's objects before the next write, keeping what the manifest names", async () => {
    const store = S3Store.open(url('killed'), { forcePathStyle: true });
    try {
      const good = await writeSnapshots(warehouse, options('killed', ['grants', 'notes']));
      // What a write killed after its first upload leaves: an object under a new folder, and its note.
      const folder = 'snapshot=2099-01-01T00-00-00Z';
      await store.putText(`grants/${folder}/grants.parquet`, 'partial set', 'application/octet-stream');
      await store.putText(
        '.snapshot-pending.tmp',
        JSON.stringify({ folder, tables: ['grants', 'notes'], host: 'elsewhere', pid: 1 }),
        'application/json',
      );
      const removed = await undoKilledSnapshotWrite(url('killed'), 'test', silentLogger, { s3ForcePathStyle: true });
      expect(removed).toEqual([`grants/${folder}/grants.parquet`]);
      expect((await store.list('')).sort()).toEqual(
        ['_manifest.json', ...good.tables.flatMap((t) => [t.path, t.latest!])].sort(),
      );
    } finally {
      store.close();
    }
  });

  it('refuses while a writer on another host renews its lock, and takes over one whose lease ran out', async () => {
    const store = S3Store.open(url('locked'), { forcePathStyle: true });
    try {
      const holder = (renewed: Date): string =>
        JSON.stringify({
          pid: 2 ** 22 + 1,
          host: 'elsewhere.example',
          command: 'grantflow snapshot',
          since: '2026-11-25T07:00:00.000Z',
          renewed: renewed.toISOString(),
        });
      await store.putText('.snapshot-writer.lock', holder(new Date()), 'application/json');
      const refused = await writeSnapshots(warehouse, options('locked', ['notes'])).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(LockedError);
      expect(String((refused as Error).message)).toMatch(/pid \d+ on elsewhere\.example/);
      expect(await store.list('')).toEqual(['.snapshot-writer.lock']);

      await store.putText('.snapshot-writer.lock', holder(new Date(Date.now() - leaseMs - 5_000)), 'application/json');
      const written = await writeSnapshots(warehouse, options('locked', ['notes']));
      expect((await store.list('')).sort()).toEqual(
        ['_manifest.json', ...written.tables.flatMap((t) => [t.path, t.latest!])].sort(),
      );
    } finally {
      store.close();
    }
  });
});
