/**
 * Snapshots to an S3-compatible store (`--snapshots s3://bucket/prefix`): a real S3 server (s3rver, over HTTP) and the
 * real CLI, configured as a user would (AWS_ENDPOINT_URL, AWS_* credentials, GRANTFLOW_S3_FORCE_PATH_STYLE). A sync
 * puts every table's Parquet file and the manifest under the prefix, and DuckDB reads each object back with the rows
 * and types of the warehouse table; a sync killed during the upload leaves the previous manifest current with every
 * object it names; the next sync deletes what the killed one uploaded; retention deletes old snapshots' objects.
 * Runs a test signals, kills or pauses are processes; the others run in process (`cliInProcess`).
 */
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import type { Manifest } from '../../src/snapshot/index.ts';
import { modelNames, startSite, syncCliArgs, tempDir, writeCredentials, type CliResult } from '../support/harness.ts';
import { cli, cliInProcess, killOnStderr } from '../support/faults.ts';
import { startS3Server, type S3Server } from '../support/s3-server.ts';
import { tables as catalog } from '../../src/streams/registry.ts';

let sim: SimulatorHandle;
let s3: S3Server;
let client: S3Client;
let work: Awaited<ReturnType<typeof tempDir>>;

/** Every table a successful sync snapshots: the core tables and the models. */
const expectedTables = [...catalog.filter((t) => t.kind !== 'bookkeeping').map((t) => t.name), ...modelNames].sort();

beforeAll(async () => {
  sim = await startSite({ scale: 'tiny', seed: 26 });
  s3 = await startS3Server();
  work = await tempDir('grantflow-s3-snapshots-');
  await writeCredentials(sim, join(work.path, 'creds.json'));
  // The test's own client, told everything explicitly: it checks what grantflow stored, not how grantflow connects.
  client = new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  });
});

afterAll(async () => {
  client?.destroy();
  await s3?.close();
  await sim?.close();
  await work?.remove();
});

/**
 * `grantflow sync` of the site into `<work>/<name>/` with its snapshots at `s3://bucket/<prefix>`. Its temporary
 * folders go under `<work>` too, where a test sees the one a killed upload staged its Parquet files in.
 */
function bucketSync(name: string, prefix: string, extra: readonly string[] = []): string[] {
  const dir = join(work.path, name);
  return [
    ...syncCliArgs(sim.url, dir, { snapshot: true, credentials: join(work.path, 'creds.json') }),
    '--snapshots',
    `s3://${s3.bucket}/${prefix}`,
    '--retain-snapshots',
    '2',
    '--log-level',
    'info',
    ...extra,
  ];
}

const bucketEnv = (): NodeJS.ProcessEnv => ({ TMPDIR: work.path, ...s3.env });

/** That sync in process: what it stores is the subject. */
function syncToBucket(name: string, prefix: string): Promise<CliResult> {
  return cliInProcess(bucketSync(name, prefix), { env: bucketEnv() });
}

/** That sync as a process, for a test that signals, kills or pauses it (the pause hook is read once at import). */
function spawnSyncToBucket(
  name: string,
  prefix: string,
  options: Parameters<typeof cli>[1] = {},
  extra: readonly string[] = [],
): Promise<CliResult> {
  return cli(bucketSync(name, prefix, extra), { ...options, env: { ...bucketEnv(), ...options.env } });
}

async function keysUnder(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `${prefix}/`, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) keys.push(o.Key!.slice(prefix.length + 1));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys.sort();
}

async function getBytes(key: string): Promise<Buffer> {
  const reply = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
  return Buffer.from(await reply.Body!.transformToByteArray());
}

async function readManifest(prefix: string): Promise<Manifest> {
  return JSON.parse((await getBytes(`${prefix}/_manifest.json`)).toString('utf8')) as Manifest;
}

/** The folders uploads staged their Parquet files in and did not remove. */
const stagingFolders = (): string[] => readdirSync(work.path).filter((n) => n.startsWith('grantflow-snapshot-'));
const folderOf = (path: string): string => path.split('/')[1]!;

/** The snapshot folders of each table present under the prefix. */
async function foldersByTable(prefix: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const key of await keysUnder(prefix)) {
    const [table, folder] = key.split('/');
    if (folder?.startsWith('snapshot=')) out[table!] = [...new Set([...(out[table!] ?? []), folder])].sort();
  }
  return out;
}

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** Every object the manifest names is there, whole (its checksum), and so is its latest object, the same bytes. */
async function expectManifestObjectsPresent(prefix: string, manifest: Manifest): Promise<void> {
  const keys = new Set(await keysUnder(prefix));
  for (const [table, entry] of Object.entries(manifest.tables)) {
    expect(keys.has(entry.path), `${table}: ${entry.path} is missing`).toBe(true);
    expect(sha256(await getBytes(`${prefix}/${entry.path}`)), `checksum of ${table}`).toBe(entry.sha256);
    expect(entry.latest).toBe(`latest/${table}.parquet`);
    expect(sha256(await getBytes(`${prefix}/latest/${table}.parquet`)), `latest of ${table}`).toBe(entry.sha256);
  }
}

const latestKeys = (manifest: Manifest): string[] => Object.keys(manifest.tables).map((t) => `latest/${t}.parquet`);

/** ETag and modification time of each table's latest object. */
async function latestStamps(prefix: string, tables: readonly string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const t of tables) {
    const head = await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: `${prefix}/latest/${t}.parquet` }));
    out[t] = `${head.ETag} ${head.LastModified?.toISOString()}`;
  }
  return out;
}

// Each test runs one or more whole CLI syncs, which take minutes on a loaded machine.
describe('snapshots to an S3-compatible store', { timeout: 300_000 }, () => {
  const prefix = 'analytics/grantflow';
  let manifest: Manifest;
  let first: CliResult;

  it('a sync puts every table and the manifest under the prefix, and DuckDB reads each back', async () => {
    first = await syncToBucket('main', prefix);
    expect(first.code, first.stderr).toBe(0);
    manifest = await readManifest(prefix);
    expect(Object.keys(manifest.tables).sort()).toEqual(expectedTables);
    // The layout: <table>/snapshot=<stamp>/<table>.parquet, latest/<table>.parquet, and nothing else (no temporary,
    // no note).
    const keys = await keysUnder(prefix);
    expect(keys).toEqual(
      ['_manifest.json', ...Object.values(manifest.tables).map((e) => e.path), ...latestKeys(manifest)].sort(),
    );
    await expectManifestObjectsPresent(prefix, manifest);
    for (const [table, entry] of Object.entries(manifest.tables)) {
      expect(entry.path).toMatch(
        new RegExp(`^${table}/snapshot=\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\dZ/${table}\\.parquet$`),
      );
    }

    const duck = await DuckDBInstance.create(join(work.path, 'main', 'warehouse.duckdb'), { access_mode: 'READ_ONLY' });
    const conn = await duck.connect();
    try {
      let nonEmpty = 0;
      for (const [table, entry] of Object.entries(manifest.tables)) {
        const file = join(work.path, `${table}.parquet`);
        await writeFile(file, await getBytes(`${prefix}/${entry.path}`));
        const sql = (s: string): string => s.replace('$file', `'${file}'`);
        const [counted] = (
          await conn.runAndReadAll(sql('SELECT count(*) AS n FROM read_parquet($file)'))
        ).getRowObjects();
        // Models live in the warehouse's analytics schema, the rest in its main one.
        const from = (modelNames as readonly string[]).includes(table) ? `analytics."${table}"` : `"${table}"`;
        const [held] = (await conn.runAndReadAll(`SELECT count(*) AS n FROM ${from}`)).getRowObjects();
        expect(Number(counted!.n), `rows of ${table}`).toBe(Number(held!.n));
        expect(entry.rows, `manifest rows of ${table}`).toBe(Number(held!.n));
        if (entry.rows > 0) nonEmpty++;
        const types = (rows: Record<string, unknown>[]): string[] =>
          rows.map((r) => `${String(r.column_name)} ${String(r.column_type)}`);
        const fileTypes = types(
          (await conn.runAndReadAll(sql('DESCRIBE SELECT * FROM read_parquet($file)'))).getRowObjects(),
        );
        // The table's columns as a snapshot file holds them (docs/snapshots.md): no _raw, JSON as text, and the
        // snapshot's time last.
        const tableTypes = types((await conn.runAndReadAll(`DESCRIBE ${from}`)).getRowObjects())
          .filter((c) => !c.startsWith('_raw '))
          .map((c) => c.replace(/ JSON$/, ' VARCHAR'));
        expect(fileTypes, `types of ${table}`).toEqual([...tableTypes, '_snapshot_at TIMESTAMP WITH TIME ZONE']);
        expect(entry.schema.map((c) => `${c.name} ${c.type}`)).toEqual(fileTypes);
      }
      expect(nonEmpty).toBeGreaterThan(10);
    } finally {
      conn.closeSync();
      duck.closeSync();
    }
  });

  it('says where the snapshots went and never prints the secret key', () => {
    expect(first.stdout).toContain(`snapshots: ${expectedTables.length} tables written to s3://${s3.bucket}/${prefix}`);
    expect(first.stdout + first.stderr).not.toContain(s3.secretAccessKey);
  });

  it('a sync stopped (SIGTERM) during the upload deletes what it uploaded; the manifest stays', async () => {
    const before = await readManifest(prefix);
    const keysBefore = await keysUnder(prefix);
    const tables = Object.keys(before.tables);
    const step = `snapshot uploaded ${tables[1]}`;
    const stopped = await spawnSyncToBucket('main', prefix, {
      env: { GRANTFLOW_TEST_PAUSE_AT: step, GRANTFLOW_TEST_PAUSE_MS: '600000' },
      onSpawn: (child) => {
        let seen = '';
        let sent = false;
        child.stderr?.on('data', (d: Buffer) => {
          seen += d.toString();
          // Once: a second signal exits at once, without undoing anything.
          if (!sent && seen.includes(`grantflow-test: paused at ${step}`)) {
            sent = true;
            child.kill('SIGTERM');
          }
        });
      },
    });
    expect(stopped.code, stopped.stderr.slice(-500)).toBe(1);
    expect(stopped.stdout, stopped.stderr.slice(-500)).toMatch(/the last good snapshot stays current/);
    expect(await readManifest(prefix)).toEqual(before);
    expect(await keysUnder(prefix)).toEqual(keysBefore);
  });

  it('a sync killed during the upload leaves the previous manifest current; the next sync deletes its objects', async () => {
    const before = await readManifest(prefix);
    const tables = Object.keys(before.tables);
    const step = `snapshot uploaded ${tables[tables.length >> 1]}`;
    const killed = await spawnSyncToBucket('main', prefix, {
      env: { GRANTFLOW_TEST_PAUSE_AT: step },
      onSpawn: (child) => killOnStderr(child, `grantflow-test: paused at ${step}`, 1),
    });
    expect(killed.signal, `the kill landed (${killed.stderr.slice(-300)})`).toBe('SIGKILL');
    expect(await readManifest(prefix)).toEqual(before);
    await expectManifestObjectsPresent(prefix, before);
    // The killed run's objects are there, in a folder no manifest names, with its note.
    const keys = await keysUnder(prefix);
    const named = new Set([...Object.values(before.tables).map((e) => e.path), ...latestKeys(before)]);
    const orphans = keys.filter((k) => k.endsWith('.parquet') && !named.has(k));
    expect(orphans.length).toBeGreaterThan(0);
    expect(keys).toContain('.snapshot-pending.tmp');
    const staged = stagingFolders();
    expect(staged, 'the killed upload left its local files').toHaveLength(1);

    // The next sync deletes them as soon as it holds the run lock, even when it never gets to its own snapshot.
    const pauseAt = 'sync extraction finished';
    const early = await spawnSyncToBucket('main', prefix, {
      env: { GRANTFLOW_TEST_PAUSE_AT: pauseAt },
      onSpawn: (child) => killOnStderr(child, `grantflow-test: paused at ${pauseAt}`, 1),
    });
    expect(early.signal, `the kill landed (${early.stderr.slice(-300)})`).toBe('SIGKILL');
    expect(await keysUnder(prefix)).toEqual(
      ['_manifest.json', ...Object.values(before.tables).map((e) => e.path), ...latestKeys(before)].sort(),
    );

    const next = await syncToBucket('main', prefix);
    expect(next.code, next.stderr).toBe(0);
    const after = await readManifest(prefix);
    await expectManifestObjectsPresent(prefix, after);
    const left = await keysUnder(prefix);
    for (const orphan of orphans) expect(left, 'an object of the killed upload').not.toContain(orphan);
    expect(left.filter((k) => k.startsWith('.'))).toEqual([]);
    expect(stagingFolders(), 'the local files of the killed upload').toEqual([]);
    expect(next.stderr).toContain('removed the local files of a killed upload');
    // Only the snapshots some manifest named: the one current before the kill (retained, a reader may use it) and ours.
    const folders = await foldersByTable(prefix);
    for (const table of tables) {
      expect(folders[table], table).toEqual(
        [folderOf(before.tables[table]!.path), folderOf(after.tables[table]!.path)].sort(),
      );
    }
  });

  it('retention deletes the objects of snapshots beyond the newest two, after the new manifest', async () => {
    const before = await readManifest(prefix);
    const oldest = await foldersByTable(prefix);
    const next = await syncToBucket('main', prefix);
    expect(next.code, next.stderr).toBe(0);
    const after = await readManifest(prefix);
    await expectManifestObjectsPresent(prefix, after);
    const folders = await foldersByTable(prefix);
    for (const table of Object.keys(after.tables)) {
      const kept = [folderOf(before.tables[table]!.path), folderOf(after.tables[table]!.path)].sort();
      expect(folders[table], table).toEqual(kept);
      const removed = oldest[table]!.filter((f) => !kept.includes(f));
      expect(removed, `${table}: an older snapshot was there to remove`).toHaveLength(1);
    }
  });

  it('a sync --streams copies only the tables it touched to latest/; a reader meanwhile finds every table', async () => {
    const before = await readManifest(prefix);
    const tables = Object.keys(before.tables);
    const stampsBefore = await latestStamps(prefix, tables);
    // Paused once latest/ of the first touched table is replaced: what a reader of latest/ sees mid-publish.
    const step = 'snapshot latest placed';
    let midPublish: Promise<Record<string, string>> | null = null;
    const result = await spawnSyncToBucket(
      'main',
      prefix,
      {
        env: { GRANTFLOW_TEST_PAUSE_AT: step, GRANTFLOW_TEST_PAUSE_MS: '3000' },
        onSpawn: (child) => {
          let seen = '';
          child.stderr?.on('data', (d: Buffer) => {
            seen += d.toString();
            if (midPublish === null && seen.includes(`grantflow-test: paused at ${step}`)) {
              midPublish = (async () => {
                const out: Record<string, string> = {};
                for (const t of tables) out[t] = sha256(await getBytes(`${prefix}/latest/${t}.parquet`));
                return out;
              })();
            }
          });
        },
      },
      ['--streams', 'funds'],
    );
    expect(result.code, result.stderr).toBe(0);
    expect(midPublish, 'the pause was reached').not.toBeNull();
    const after = await readManifest(prefix);
    const seen = await midPublish!;
    for (const t of tables) {
      expect([before.tables[t]!.sha256, after.tables[t]!.sha256], `latest of ${t} mid-publish`).toContain(seen[t]);
    }
    await expectManifestObjectsPresent(prefix, after);
    const stampsAfter = await latestStamps(prefix, tables);
    const rewritten = tables.filter((t) => after.tables[t]!.run_id === after.run_id);
    const kept = tables.filter((t) => after.tables[t]!.run_id !== after.run_id);
    // The stream's table and a model reading it are written again; tables only other streams write are not (nor
    // the models none of whose tables the run changed, which it did not rebuild).
    expect(rewritten).toEqual(expect.arrayContaining(['funds', 'fund_utilization']));
    expect(kept).toEqual(expect.arrayContaining(['applications', 'awards', 'payments']));
    for (const t of kept) {
      expect(after.tables[t], `${t}: the earlier run's entry`).toEqual(before.tables[t]);
      expect(stampsAfter[t], `${t}: the same latest object`).toBe(stampsBefore[t]);
    }
    // funds rows carry the run that merged them: new bytes, a new object.
    expect(stampsAfter.funds).not.toBe(stampsBefore.funds);
  });
});

describe('grantflow snapshot to an s3:// location', { timeout: 180_000 }, () => {
  it('writes every table of the warehouse, path-style by its flag', async () => {
    const { GRANTFLOW_S3_FORCE_PATH_STYLE: _flagInstead, ...env } = s3.env;
    const result = await cliInProcess(
      [
        'snapshot',
        '--warehouse',
        join(work.path, 'main', 'warehouse.duckdb'),
        '--snapshots',
        `s3://${s3.bucket}/by-command`,
        '--s3-force-path-style',
      ],
      { env },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`tables written to s3://${s3.bucket}/by-command (snapshot `);
    const manifest = await readManifest('by-command');
    expect(Object.keys(manifest.tables).sort()).toEqual(expectedTables);
    await expectManifestObjectsPresent('by-command', manifest);
  });
});

describe('doctor and settings with an s3:// snapshot location', { timeout: 180_000 }, () => {
  const doctorArgs = (snapshots: string): string[] => [
    'doctor',
    '--site',
    sim.url,
    '--credentials',
    join(work.path, 'creds.json'),
    '--warehouse',
    join(work.path, 'doctor.duckdb'),
    '--snapshots',
    snapshots,
  ];
  const snapshotsLine = (out: string): string => out.split('\n').find((l) => /^(ok|FAIL)\s+snapshots /.test(l)) ?? '';

  it('doctor puts and deletes a probe object in a writable bucket', async () => {
    const result = await cliInProcess(doctorArgs(`s3://${s3.bucket}/doctor`), { env: s3.env });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(snapshotsLine(result.stdout)).toMatch(/^ok\s+snapshots\s+s3:\/\/grantflow-test\/doctor is writable/);
    expect(await keysUnder('doctor')).toEqual([]);
  });

  it('doctor fails with exit 2 on unknown credentials or a missing bucket, without printing the secret', async () => {
    // s3rver checks the key id, not a v4 signature: an unknown key id is what it refuses.
    const secret = `wrong-secret-${s3.secretAccessKey}`;
    const badKey = await cliInProcess(doctorArgs(`s3://${s3.bucket}/doctor`), {
      env: { ...s3.env, AWS_ACCESS_KEY_ID: 'AKIAUNKNOWNKEY000000', AWS_SECRET_ACCESS_KEY: secret },
    });
    expect(badKey.code).toBe(2);
    expect(snapshotsLine(badKey.stdout)).toMatch(/^FAIL\s+snapshots .*InvalidAccessKeyId/);
    expect(badKey.stdout + badKey.stderr).not.toContain(secret);

    const noBucket = await cliInProcess(doctorArgs('s3://no-such-bucket/x'), { env: s3.env });
    expect(noBucket.code).toBe(2);
    expect(snapshotsLine(noBucket.stdout)).toMatch(/^FAIL\s+snapshots .*NoSuchBucket/);
  });

  it('refuses a URL that names no S3 location, before anything is written (exit 2)', async () => {
    for (const [url, why] of [
      ['gs://bucket/x', /no other kind of URL names a snapshot location/],
      ['s3://Bad_Bucket/x', /not a bucket name/],
    ] as const) {
      const result = await cliInProcess([
        'snapshot',
        '--warehouse',
        join(work.path, 'none.duckdb'),
        '--snapshots',
        url,
      ]);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(why);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});
