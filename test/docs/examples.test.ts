/**
 * The docs' examples run: every shell command, pipeline file and SQL block of README.md and docs/*.md
 * (test/support/doc-examples.ts finds them), against the simulator over HTTP, as written but for the substitutions
 * below. A page's blocks run in order in a working folder, so its walk-through builds on its earlier commands; the
 * one-site pages share one folder (a user's checkout: README first, then docs/ in name order), a portfolio has its
 * own. SQL blocks run against one DuckDB and one PostgreSQL warehouse synced in process, on the engines they name.
 */
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { readManifest } from '../../src/snapshot/index.ts';
import { packageRoot } from '../../src/util/package-root.ts';
import {
  docPages,
  optOutReasons,
  readBlocks,
  shellCommands,
  shellWords,
  sqlEngines,
  sqlStatements,
  type DocBlock,
  type ShellCommand,
} from '../support/doc-examples.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';
import { postgresSchema, startSite, syncOnce, tempDir, writeCredentials } from '../support/harness.ts';
import { startS3Server, type S3Server } from '../support/s3-server.ts';
import { suiteDuckdbThreads } from '../support/suite-duckdb.ts';

const pages = docPages(packageRoot);
const blocksOf = new Map(pages.map((page) => [page, readBlocks(packageRoot, page)]));
const allBlocks = [...blocksOf.values()].flat();

/**
 * The portfolio's page, and any block naming its pipeline file or warehouse, run in the portfolio's folder, with
 * sites of its own; the rest share the one-site project folder. Pages run in name order after README, so the
 * portfolio exists when a later page reads it.
 */
const portfolioPage = 'docs/portfolio.md';
const namesPortfolio = /\bportfolio\.(json|duckdb)\b/;

/**
 * What a command a doc shows stands for here, in order: a placeholder for the reader's own site, bucket or secret
 * becomes the simulator's or the local S3 server's. Shown with the opted-out blocks.
 */
interface Substitution {
  readonly from: string | RegExp;
  readonly to: string;
  readonly why: string;
}

/** Commands of a block that are not run, and why: the suite itself stands for them. */
const skippedCommands: Readonly<Record<string, string>> = {
  'npm ci': 'the suite runs from an installed checkout',
  'npm test': 'the suite itself',
};

/** Statements the suite's PostgreSQL needs before a page's SQL, which assumes them (run in the same transaction). */
const sqlPreconditions: Readonly<Record<string, readonly string[]>> = {
  'docs/postgres.md': ['CREATE ROLE analysts NOLOGIN'],
};

interface Folder {
  readonly dir: string;
  readonly env: Record<string, string>;
  readonly substitutions: readonly Substitution[];
}

let site: SimulatorHandle;
let north: SimulatorHandle;
let south: SimulatorHandle;
let s3: S3Server;
let project: Folder;
let portfolio: Folder;
let sqlDir: string;
let pgSchema: Awaited<ReturnType<typeof postgresSchema>>;
const cleanup: (() => Promise<void>)[] = [];
let commandsRun = 0;

function substitutionsFor(f: Folder | undefined): readonly Substitution[] {
  return f?.substitutions ?? [];
}

beforeAll(async () => {
  site = await startSite();
  north = await startSite({ seed: 11 });
  south = await startSite({ seed: 12 });
  s3 = await startS3Server('analytics-bucket', ['snapshots']);
  cleanup.push(
    () => site.close(),
    () => north.close(),
    () => south.close(),
    () => s3.close(),
  );

  const projectDir = await tempDir('grantflow-docs-project-');
  cleanup.push(projectDir.remove);
  // A checkout: its pipelines/ are there to copy from, and the reader saved the site's credentials as creds.json.
  cpSync(join(packageRoot, 'pipelines'), join(projectDir.path, 'pipelines'), { recursive: true });
  await writeCredentials(site, join(projectDir.path, 'creds.json'));
  project = {
    dir: projectDir.path,
    env: {
      // A reader's environment: the site and credentials for commands that do not name them, and an S3 account.
      GRANTFLOW_SITE: site.url,
      GRANTFLOW_CREDENTIALS: 'creds.json',
      ...s3.env,
      // The simulator has no rate limit: the docs' default pace would only add waiting.
      GRANTFLOW_RATE: '1000',
    },
    substitutions: [
      { from: 'https://yoursite.example.com', to: site.url, why: "the reader's site: the simulator" },
      { from: 'npm run demo', to: 'grantflow demo --scale tiny', why: 'the demo on the tiny site (cheaper)' },
      { from: 'http://127.0.0.1:9000', to: s3.endpoint, why: 'MinIO: the local S3 server' },
      { from: 'AWS_ACCESS_KEY_ID=grantflow', to: `AWS_ACCESS_KEY_ID=${s3.accessKeyId}`, why: "the S3 server's key" },
      { from: 'AWS_SECRET_ACCESS_KEY=...', to: `AWS_SECRET_ACCESS_KEY=${s3.secretAccessKey}`, why: 'its secret' },
    ],
  };

  const portfolioDir = await tempDir('grantflow-docs-portfolio-');
  cleanup.push(portfolioDir.remove);
  await writeCredentials(north, join(portfolioDir.path, 'north.json'));
  const southCredentials = south.credentials as unknown as Record<string, string>;
  portfolio = {
    dir: portfolioDir.path,
    env: {
      ...Object.fromEntries(
        Object.entries(southCredentials).map(([key, value]) => [`GRANTFLOW_SOUTH_${key.toUpperCase()}`, value]),
      ),
      GRANTFLOW_RATE: '1000',
    },
    substitutions: [
      { from: 'https://north.example.org', to: north.url, why: 'site north: a simulator' },
      { from: 'https://south.example.org', to: south.url, why: 'site south: another simulator' },
    ],
  };

  // The warehouses SQL blocks read: one sync each; DuckDB's with models and snapshots (the docs read both).
  const sql = await tempDir('grantflow-docs-sql-');
  cleanup.push(sql.remove);
  sqlDir = sql.path;
  const credentials = await writeCredentials(site, join(sqlDir, 'creds.json'));
  const duckdb = await syncOnce(site, {
    credentials,
    warehouse: join(sqlDir, 'data/warehouse.duckdb'),
    snapshot: true,
    snapshots: join(sqlDir, 'data/snapshots'),
  });
  expect(duckdb.status).toBe('succeeded');
  pgSchema = await postgresSchema();
  cleanup.push(pgSchema.drop);
  const postgres = await syncOnce(site, {
    credentials,
    warehouse: pgSchema.url,
    schema: pgSchema.schema,
    models: false,
  });
  expect(postgres.status).toBe('succeeded');
}, 180_000);

afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
  console.log(`doc examples: ${commandsRun} grantflow commands run (in process)`);
});

/** Where a block is, for messages and the listing. */
const where = (block: DocBlock, line = block.line): string => `${block.page}:${line}`;

describe('the docs’ code blocks', () => {
  it('each has a language, and each one not run says why, with a known reason', () => {
    const untagged = allBlocks.filter((b) => b.lang === '').map((b) => where(b));
    expect(untagged, 'a fence without a language (use text for output)').toEqual([]);
    const optedOut = allBlocks.filter((b) => b.optOut !== undefined);
    const unknown = optedOut.filter((b) => !(optOutReasons as readonly string[]).includes(b.optOut!));
    expect(
      unknown.map((b) => `${where(b)}: ${b.optOut}`),
      `reasons: ${optOutReasons.join('; ')}`,
    ).toEqual([]);
    const unnamed = allBlocks.filter((b) => b.kind === 'json' && !b.optOut && !b.fileName).map((b) => where(b));
    expect(unnamed, 'a JSON block names its file on the line above (`name.json`:) or is marked').toEqual([]);
    console.log(
      [
        'doc examples not run (file:line reason):',
        ...optedOut.map((b) => `  ${where(b)} ${b.optOut}`),
        'commands not run:',
        ...Object.entries(skippedCommands).map(([command, why]) => `  ${command}: ${why}`),
        'substitutions:',
        ...[...substitutionsFor(project), ...substitutionsFor(portfolio)].map((s) => `  ${String(s.from)} -> ${s.why}`),
        `  snapshot=<a UTC time> -> the snapshot the manifest names`,
        // Names only: the values hold secrets.
        `environment (project): ${Object.keys(project.env).join(' ')}`,
        `environment (portfolio): ${Object.keys(portfolio.env).join(' ')}`,
      ].join('\n'),
    );
  });
});

const runnablePages = pages.filter((page) => blocksOf.get(page)!.some((b) => b.kind && !b.optOut));

describe.each(runnablePages)('%s', (page) => {
  it('runs as written', { timeout: 300_000 }, async () => {
    const blocks = blocksOf.get(page)!.filter((b) => b.kind && !b.optOut);
    const commandText = blocks
      .filter((b) => b.kind === 'shell')
      .map((b) => b.text)
      .join('\n');
    for (const block of blocks) {
      const folder = page === portfolioPage || namesPortfolio.test(block.text) ? portfolio : project;
      if (block.kind === 'shell') for (const command of shellCommands(block)) await runCommand(block, command, folder);
      else if (block.kind === 'json') await writePipelineFile(block, folder, commandText);
      // A named SQL file is a model of the reader's: the page's commands build it.
      else if (block.fileName) writeInto(folder, block.fileName, block.text);
      else await runSql(block);
    }
  });
});

function writeInto(folder: Folder, name: string, text: string): void {
  const path = join(folder.dir, name);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${text}\n`);
}

/** A pipeline file: written where the doc names it; checked by `config` unless a command of the page reads it. */
async function writePipelineFile(block: DocBlock, folder: Folder, commands: string): Promise<void> {
  const name = block.fileName!;
  writeInto(folder, name, substitute(block.text, folder.substitutions));
  if (commands.includes(name)) return;
  const result = await cli(['config', '--pipeline', name], folder, {});
  expect(result.code, `${where(block)}: grantflow config --pipeline ${name}\n${result.stderr}`).toBe(0);
}

function substitute(text: string, substitutions: readonly Substitution[]): string {
  return substitutions.reduce((t, s) => t.replaceAll(s.from, s.to), text);
}

/**
 * A `grantflow` command of a page, in the test's process (`runCliInProcess`: what main.ts runs, its exit code, stdout
 * and stderr apart): no example is about the process itself, and each spawned one cost about a second of CPU.
 */
async function cli(args: readonly string[], folder: Folder, env: Record<string, string>) {
  commandsRun++;
  return runCliInProcess(args, { cwd: folder.dir, env: { ...folder.env, ...env } });
}

/** One command line: `a && b` in turn, `export` and `NAME=value` prefixes kept for the page, `grantflow` run. */
async function runCommand(block: DocBlock, command: ShellCommand, folder: Folder): Promise<void> {
  const expected = Number(/\bexits? (\d)\b/.exec(command.comment)?.[1] ?? 0);
  for (const part of substitute(command.text, folder.substitutions).split(' && ')) {
    if (skippedCommands[part.trim()] !== undefined) continue;
    const words = shellWords(part);
    if (words[0] === 'export') {
      for (const assignment of words.slice(1)) {
        const [name, ...value] = assignment.split('=');
        folder.env[name!] = value.join('=');
      }
      continue;
    }
    const env: Record<string, string> = {};
    while (/^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? '')) {
      const [name, ...value] = words.shift()!.split('=');
      env[name!] = value.join('=');
    }
    if (words[0] === 'npx') words.shift();
    const label = `${where(block, command.line)}: ${command.text}`;
    expect(words[0], `${label}: not a grantflow command; run it here or mark the block`).toBe('grantflow');
    const redirect = words.indexOf('>');
    const output = redirect < 0 ? undefined : words.splice(redirect, 2)[1];
    const result = await cli(words.slice(1), folder, env);
    expect(result.code, `${label}\n${result.stdout.slice(-2000)}\n${result.stderr.slice(-2000)}`).toBe(expected);
    if (output !== undefined) writeFileSync(join(folder.dir, output), result.stdout);
  }
}

async function runSql(block: DocBlock): Promise<void> {
  const statements = sqlStatements(substituteSnapshot(block.text));
  for (const engine of sqlEngines(block)) {
    if (engine === 'duckdb') await runDuckdb(block, statements);
    else await runPostgres(block, statements);
  }
}

/** A snapshot the doc names by its time: the one the manifest of the SQL warehouse's snapshots names for the table. */
function substituteSnapshot(text: string): string {
  const manifest = readManifest(join(sqlDir, 'data/snapshots'));
  return text.replace(/snapshot=\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ\/(\w+)\.parquet/g, (match, table: string) => {
    const path = manifest?.tables[table]?.path;
    return path === undefined ? match : path.slice(path.indexOf('/') + 1);
  });
}

const isQuery = (statement: string): boolean => /^\s*(select|with)\b/i.test(statement);

async function runDuckdb(block: DocBlock, statements: readonly string[]): Promise<void> {
  // Read-only, and relative paths (data/snapshots/...) resolve in the SQL warehouse's folder, as in a reader's.
  const instance = await DuckDBInstance.create(join(sqlDir, 'data/warehouse.duckdb'), {
    access_mode: 'READ_ONLY',
    threads: String(suiteDuckdbThreads),
    file_search_path: sqlDir,
  });
  const connection = await instance.connect();
  try {
    for (const statement of statements) {
      const reader = await connection.runAndReadAll(statement);
      if (isQuery(statement))
        expect(reader.getRows().length, `${where(block)} on DuckDB: ${statement}`).toBeGreaterThan(0);
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** In a transaction rolled back at the end: a doc's DDL (roles, schemas) leaves nothing on the shared server. */
async function runPostgres(block: DocBlock, statements: readonly string[]): Promise<void> {
  const client = new pg.Client({ connectionString: pgSchema.url });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query(`SET LOCAL search_path TO "${pgSchema.schema}"`);
    for (const statement of sqlPreconditions[block.page] ?? []) await client.query(statement);
    for (const statement of statements) {
      const result = await client.query(statement);
      if (isQuery(statement)) expect(result.rowCount, `${where(block)} on PostgreSQL: ${statement}`).toBeGreaterThan(0);
    }
  } finally {
    await client.query('ROLLBACK').catch(() => undefined);
    await client.end();
  }
}
