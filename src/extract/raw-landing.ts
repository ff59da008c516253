import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { constants, createGunzip, createGzip, type Gzip } from 'node:zlib';
import { once } from 'node:events';

/** One line of a raw file: a page as fetched, or the end marker of one walk. */
export type RawLine =
  | {
      readonly type: 'page';
      readonly url: string;
      readonly status: number;
      readonly fetchedAt: string;
      readonly parentId?: number;
      readonly body: string;
    }
  | {
      readonly type: 'walk_end';
      readonly parentId?: number;
      /** The walk saw the whole list (deletions may be inferred). */
      readonly complete: boolean;
      /** The parent had none (e.g. eligibility 404) — recorded so replay clears it too. */
      readonly empty?: boolean;
    };

/**
 * Lands every fetched page under `<dir>/<stream>.jsonl.gz`, compressed as it streams. Each stream file is flushed
 * at every checkpoint so a crash loses at most the pages after the last commit, and replay tolerates a cut tail.
 */
export class RawLanding {
  private readonly files = new Map<string, { gzip: Gzip; file: WriteStream }>();

  constructor(readonly dir: string) {}

  async open(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
  }

  write(stream: string, line: RawLine): void {
    let f = this.files.get(stream);
    if (!f) {
      const gzip = createGzip({ level: 1 });
      const file = createWriteStream(join(this.dir, `${stream}.jsonl.gz`), { flags: 'a', mode: 0o600 });
      gzip.pipe(file);
      f = { gzip, file };
      this.files.set(stream, f);
    }
    f.gzip.write(JSON.stringify(line) + '\n');
  }

  /** Push what is buffered to disk (a sync-flush point that a reader of a cut file can reach). */
  async flush(stream: string): Promise<void> {
    const f = this.files.get(stream);
    if (!f) return;
    await new Promise<void>((resolve) => f.gzip.flush(constants.Z_SYNC_FLUSH, () => resolve()));
  }

  async close(): Promise<void> {
    await Promise.all(
      [...this.files.values()].map(async ({ gzip, file }) => {
        gzip.end();
        await once(file, 'close');
      }),
    );
    this.files.clear();
  }
}

/** Streams of a landed run, in file order. */
export async function listRawStreams(dir: string): Promise<string[]> {
  const names = await readdir(dir);
  return names.filter((n) => n.endsWith('.jsonl.gz')).map((n) => n.slice(0, -'.jsonl.gz'.length));
}

/** Reads a raw file line by line; a file cut by a crash ends at its last complete line. */
export async function* readRawLines(dir: string, stream: string): AsyncGenerator<RawLine> {
  const gunzip = createGunzip({ finishFlush: constants.Z_SYNC_FLUSH });
  const input = createReadStream(join(dir, `${stream}.jsonl.gz`)).pipe(gunzip);
  let cut = false;
  gunzip.on('error', () => {
    cut = true;
    input.emit('end');
  });
  const lines = createInterface({ input, crlfDelay: Infinity });
  for await (const text of lines) {
    if (!text) continue;
    try {
      yield JSON.parse(text) as RawLine;
    } catch {
      // The last line of a file cut mid-write is incomplete; anything before it was whole.
      cut = true;
      break;
    }
  }
  void cut;
}
