import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readdir, stat, symlink, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { GrantflowError } from '../../src/util/errors.ts';
import { listRawStreams, RawLanding, readRawLines, type RawLine } from '../../src/extract/raw-landing.ts';
import { traceFs, type FsEvent } from '../support/fs-trace.ts';
import { tempDir } from '../support/temp-dir.ts';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ path: dir, remove: cleanup } = await tempDir('gf-raw-')));
afterEach(async () => cleanup());

const page = (n: number): Extract<RawLine, { type: 'page' }> => ({
  type: 'page',
  url: `http://x/api/a/?page=${n}`,
  status: 200,
  fetchedAt: 't',
  body: `[{"id":${n},"note":"${'é🚀'.repeat(50)}"}]`,
});

async function readAll(stream: string): Promise<RawLine[]> {
  const out: RawLine[] = [];
  for await (const line of readRawLines(dir, stream)) out.push(line);
  return out;
}

describe('raw landing', () => {
  it('a file that cannot be written fails the flush with the path and the cause, not the process', async () => {
    // A dangling link where the file goes: existsSync says free, the exclusive open fails (as a full disk would).
    await symlink(join(dir, 'missing', 'target'), join(dir, 'applications.jsonl.gz'));
    const landing = new RawLanding(dir);
    await landing.open();
    landing.write('applications', page(1));
    const flushed = landing.flush('applications');
    await expect(flushed).rejects.toBeInstanceOf(GrantflowError);
    await expect(flushed).rejects.toThrow(
      /raw pages of applications could not be written to .*applications\.jsonl\.gz: .*EEXIST/,
    );
    landing.write('applications', page(2)); // later pages are not written either, and nothing throws
    await expect(landing.flush('applications')).rejects.toThrow(/could not be written/);
    await landing.close();
  });

  it('a flush (which precedes every commit) returns once the pages are fsynced, and the new file entry too', async () => {
    const runDir = join(dir, 'run-1');
    const file = join(runDir, 'applications.jsonl.gz');
    const trace = traceFs();
    try {
      const landing = new RawLanding(runDir);
      await landing.open();
      const fsyncs = (events: readonly FsEvent[], path: string) =>
        events.flatMap((e, i) => (e.op === 'fsync' && e.path === path ? [i] : []));
      // The run folder's own entry is on the disk before any page is.
      expect(fsyncs(trace.events, dir)).toHaveLength(1);
      for (const n of [1, 2]) {
        const from = trace.events.length;
        landing.write('applications', page(n));
        await landing.flush('applications');
        const events = trace.events.slice(from);
        const lastWrite = events.findLastIndex((e) => e.op === 'write' && e.path === file);
        expect(lastWrite, `page ${n} written`).toBeGreaterThan(-1);
        expect(
          fsyncs(events, file).filter((i) => i > lastWrite),
          `page ${n} fsynced after its write`,
        ).toHaveLength(1);
        // The file entry in the run folder: once, at its first flush.
        expect(fsyncs(events, runDir)).toHaveLength(n === 1 ? 1 : 0);
      }
      await landing.close();
    } finally {
      trace.restore();
    }
    const lines: RawLine[] = [];
    for await (const line of readRawLines(runDir, 'applications')) lines.push(line);
    expect(lines).toEqual([page(1), page(2)]);
  });

  it('reads back every line written, as written', async () => {
    const landing = new RawLanding(dir);
    await landing.open();
    for (let i = 0; i < 50; i++) landing.write('applications', page(i));
    landing.write('applications', { type: 'walk_end', complete: true });
    await landing.close();
    expect(await listRawStreams(dir)).toEqual(['applications']);
    const lines = await readAll('applications');
    expect(lines).toEqual([...Array.from({ length: 50 }, (_, i) => page(i)), { type: 'walk_end', complete: true }]);
  });

  it('reads back pages larger than a read chunk, with multi-byte characters across the chunk boundaries', async () => {
    const landing = new RawLanding(dir);
    await landing.open();
    // ~600 KB pages of 2-, 4- and 1-byte characters (the reader inflates 256 KiB at a time), between small ones.
    const big = (n: number): RawLine => ({ ...page(n), body: `[{"id":${n},"note":"${'é🚀a'.repeat(75_000 + n)}"}]` });
    const written = [page(0), big(1), big(2), page(3), big(4), { type: 'walk_end', complete: true } as const];
    for (const line of written) landing.write('applications', line);
    await landing.close();
    expect(await readAll('applications')).toEqual(written);
  });

  it('a part cut by a kill keeps what was flushed, and a resumed run lands a readable part of its own', async () => {
    const first = new RawLanding(dir);
    await first.open();
    for (let i = 0; i < 20; i++) first.write('tasks', page(i));
    await first.flush('tasks');
    const flushedSize = (await stat(join(dir, 'tasks.jsonl.gz'))).size;
    for (let i = 20; i < 400; i++) first.write('tasks', page(i));
    await first.flush('tasks');
    await first.close();
    // The kill: the file ends somewhere after the first flush point.
    const full = (await stat(join(dir, 'tasks.jsonl.gz'))).size;
    await truncate(join(dir, 'tasks.jsonl.gz'), flushedSize + Math.floor((full - flushedSize) / 2));

    const resumed = new RawLanding(dir);
    await resumed.open();
    for (let i = 1000; i < 1005; i++) resumed.write('tasks', page(i));
    await resumed.close();
    expect((await readdir(dir)).sort()).toEqual(['tasks.jsonl.gz', 'tasks.part2.jsonl.gz']);
    expect(await listRawStreams(dir)).toEqual(['tasks']);

    const ids = (await readAll('tasks')).map((l) => (l.type === 'page' ? Number(/"id":(\d+)/.exec(l.body)?.[1]) : -1));
    const beforeCut = ids.filter((id) => id < 1000);
    // Everything up to the first flush survives, in order, and nothing after the cut is invented.
    expect(beforeCut.slice(0, 20)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(beforeCut).toEqual(Array.from({ length: beforeCut.length }, (_, i) => i));
    expect(beforeCut.length).toBeLessThan(400);
    expect(ids.slice(beforeCut.length)).toEqual([1000, 1001, 1002, 1003, 1004]);
  });
});
