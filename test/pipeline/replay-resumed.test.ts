/**
 * A resumed run lands each attempt in a part of its own. What an attempt left open (a walk without its end) was
 * never committed, and the resumed attempt walked it again: a replay must load what the sync committed, not the
 * killed attempt's pages.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RawLanding, type RawLine } from '../../src/extract/raw-landing.ts';
import { runReplay } from '../../src/pipeline/replay.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { tempDir } from '../support/temp-dir.ts';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ path: dir, remove: cleanup } = await tempDir('gf-replay-resumed-')));
afterEach(async () => cleanup());

const runId = 'run-resumed';
const page = (url: string, body: unknown, parentId?: number): RawLine => ({
  type: 'page',
  url,
  status: 200,
  fetchedAt: '2026-01-01T00:00:00Z',
  ...(parentId !== undefined ? { parentId } : {}),
  body: JSON.stringify(body),
});
const program = (id: number, name: string): object => ({ id, name, created_at: '2025-01-01T00:00:00Z' });
const note = (id: number, content: string): object => ({ id, content, created_at: '2025-01-01T00:00:00Z' });

/** Lands one attempt: a new RawLanding on the run's folder writes the next part. */
async function attempt(lines: Record<string, RawLine[]>): Promise<void> {
  const landing = new RawLanding(join(dir, runId));
  await landing.open();
  for (const [stream, list] of Object.entries(lines)) for (const l of list) landing.write(stream, l);
  await landing.close();
}

describe.each([true, false])(
  'replay of a killed and resumed run (normalising in a worker: %s)',
  (normaliseInWorker) => {
    it('loads what the resumed attempt committed, not the pages the killed one left open', async () => {
      const programs = 'http://site/api/programs/';
      const notes = 'http://site/api/applications/7/notes/';
      // Killed mid-walk: an old program title, a program deleted before the resume, a parent's notes half read.
      await attempt({
        programs: [page(`${programs}?page=1`, { results: [program(1, 'Old title'), program(2, 'Gone')], next: 'x' })],
        application_notes: [page(`${notes}?page=1`, { results: [note(70, 'old')], next: 'y' }, 7)],
      });
      // The resume walks both again, whole.
      await attempt({
        programs: [
          page(`${programs}?page=1`, { results: [program(1, 'New title')], next: null }),
          { type: 'walk_end', complete: true },
        ],
        application_notes: [
          page(`${notes}?page=1`, { results: [note(71, 'new')], next: null }, 7),
          { type: 'walk_end', parentId: 7, complete: true },
        ],
      });
      const warehouse = await openWarehouse(join(dir, 'w.duckdb'), { logger: silentLogger });
      try {
        const infos = await runReplay({ warehouse, rawDir: dir, runId, siteTimeZone: 'UTC', normaliseInWorker });
        expect(await warehouse.query('SELECT id, name FROM programs WHERE NOT _ref_only ORDER BY id')).toEqual([
          { id: 1, name: 'New title' },
        ]);
        expect(await warehouse.query('SELECT id, content FROM application_notes ORDER BY id')).toEqual([
          { id: 71, content: 'new' },
        ]);
        expect(infos.find((i) => i.stream === 'programs')).toMatchObject({ records: 1, duplicates: 0 });
      } finally {
        await warehouse.close();
      }
    });
  },
);
