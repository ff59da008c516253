/**
 * Refresh marks (RefreshMark, markCredentialRefresh): a process refused a refresh token as used waits, with
 * `waitForOthers`, until every other process that marked a refresh of the same warehouse's credentials has released
 * its mark (saved its pair), and not for a mark whose process is gone. On both engines, the warehouse not created.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingsSchema } from '../../src/config/settings.ts';
import { markCredentialRefresh } from '../../src/warehouse/index.ts';
import { postgresSchema, tempDir } from '../support/harness.ts';

let dir: Awaited<ReturnType<typeof tempDir>>;
const cleanup: (() => Promise<void>)[] = [];

beforeAll(async () => {
  dir = await tempDir('grantflow-refresh-mark-');
  cleanup.push(dir.remove);
});

afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

/** Resolves `waiting` and reports whether it resolved before `release` ran (it must not). */
async function order(waiting: Promise<void>, release: () => Promise<void>): Promise<string[]> {
  const events: string[] = [];
  const waited = waiting.then(() => events.push('waited'));
  // Time for a wait that does not wait to end first.
  await sleep(300);
  events.push('released');
  await release();
  await waited;
  return events;
}

describe.each(['duckdb', 'postgres'])('refresh marks (%s)', (dialect) => {
  async function target(name: string): Promise<{ warehouse: string; schema?: string; exists: () => boolean }> {
    if (dialect === 'duckdb') {
      const file = join(dir.path, `${name}.duckdb`);
      return { warehouse: file, exists: () => existsSync(file) };
    }
    const s = await postgresSchema();
    cleanup.push(s.drop);
    return { warehouse: s.url, schema: s.schema, exists: () => false };
  }
  const settingsOf = (t: { warehouse: string; schema?: string }) =>
    settingsSchema.parse({ warehouse: t.warehouse, ...(t.schema ? { schema: t.schema } : {}) });

  it("waits for another process's mark until it is released, and marks never wait for each other", async () => {
    const t = await target('two');
    const settings = settingsOf(t);
    const winner = await markCredentialRefresh(settings);
    const loser = await markCredentialRefresh(settings);
    // A third mark taken while the winner holds its own: marks do not exclude each other.
    const third = await markCredentialRefresh(settings);
    await third.release();
    expect(await order(loser.waitForOthers(), () => winner.release())).toEqual(['released', 'waited']);
    await loser.release();
    expect(t.exists(), 'the warehouse is not created').toBe(false);
    if (dialect === 'duckdb') expect(readdirSync(dir.path).filter((n) => n.startsWith('two.'))).toEqual([]);
  });

  it('does not wait for a mark whose process is gone', async () => {
    const t = await target('gone');
    const settings = settingsOf(t);
    if (dialect === 'duckdb') {
      // A note left by a process killed mid-refresh: its pid is gone.
      const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
      await new Promise((done) => child.on('exit', done));
      const note = join(dir.path, `gone.duckdb.refresh.${child.pid}-1`);
      writeFileSync(note, JSON.stringify({ pid: child.pid }));
      const mark = await markCredentialRefresh(settings);
      await mark.waitForOthers();
      expect(existsSync(note), 'the dead mark is removed').toBe(false);
    } else {
      // A session holding a mark ends (its process killed): Postgres releases its lock.
      const other = await markCredentialRefresh(settings);
      const mark = await markCredentialRefresh(settings);
      const sessions = new pg.Client({ connectionString: t.warehouse });
      await sessions.connect();
      try {
        expect(
          await order(mark.waitForOthers(), async () => {
            await sessions.query(
              `SELECT pg_terminate_backend(pid) FROM pg_locks
                WHERE locktype = 'advisory' AND granted AND objid = hashtext($1)::oid AND pid <> pg_backend_pid()
                  AND mode = 'ShareLock'`,
              [t.schema],
            );
          }),
        ).toEqual(['released', 'waited']);
      } finally {
        await sessions.end();
        await other.release();
      }
    }
  });
});

describe('refresh marks of a DuckDB file whose folder is not there yet', () => {
  it('create the folder for their notes, kept while another mark is in it, removed once empty', async () => {
    const folder = join(dir.path, 'new', 'nested');
    const settings = settingsSchema.parse({ warehouse: join(folder, 'w.duckdb') });
    const first = await markCredentialRefresh(settings);
    const second = await markCredentialRefresh(settings);
    expect(readdirSync(folder)).toHaveLength(2);
    await second.release();
    expect(readdirSync(folder)).toHaveLength(1);
    // The mark that created the folders removes them, empty: a first run whose check failed leaves nothing.
    await first.release();
    expect(existsSync(join(dir.path, 'new'))).toBe(false);
  });
});
