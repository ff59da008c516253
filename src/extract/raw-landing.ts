import { createReadStream, createWriteStream, existsSync, type WriteStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { constants, createGunzip, createGzip, type Gzip } from 'node:zlib';
import { once } from 'node:events';
import type { FetchedPage } from '../source/types.ts';
import type { JsonObject } from '../util/json.ts';
import { GrantflowError } from '../util/errors.ts';
import { fsyncDirAsync, fsyncFd, mkdirDurable } from '../util/durable-file.ts';

/** One line of a raw file: a page as fetched, or the end marker of one walk. */
export type RawLine =
  | {
      readonly type: 'page';
      readonly url: string;
      readonly status: number;
      readonly fetchedAt: string;
      readonly parentId?: number;
      /** A page of the second walk that confirms deletions (see confirmWalk): its repeats are not duplicates. */
      readonly confirming?: true;
      /** A downloaded file (report_downloads): how `body` holds it, and what the download knew of its report. */
      readonly file?: RawFile;
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

/** A file landed whole: CSV as its (redacted) text, any other format as base64 of its exact bytes. */
export interface RawFile {
  readonly contentType: string | null;
  readonly encoding: 'utf8' | 'base64';
  readonly context: JsonObject;
}

/** The raw line of a page as fetched; `parentId` for fan-out walks, `confirming` for a second walk. */
export function pageLine(
  page: Pick<FetchedPage, 'url' | 'status' | 'fetchedAt' | 'body'>,
  extra: { readonly parentId?: number; readonly confirming?: true } = {},
): RawLine {
  return { type: 'page', url: page.url, status: page.status, fetchedAt: page.fetchedAt, ...extra, body: page.body };
}

/** One stream's file: the compressor piped into it, and the first error either met (reported by `flush`). */
interface LandingFile {
  readonly gzip: Gzip;
  readonly file: WriteStream;
  readonly path: string;
  /** Set once the file is open. */
  fd?: number;
  /** The folder's entry for the file is on the disk (fsynced once, at its first flush). */
  entryDurable?: boolean;
  error?: Error;
}

/**
 * Lands every fetched page under `<dir>/<stream>.jsonl.gz`, compressed as it streams. Each stream file is flushed
 * and fsynced before every commit (not after every page: that would cost a disk flush per request), so a kill or a
 * power cut loses at most pages that were never committed, and replay tolerates a cut tail.
 */

export class RawLanding {
  private readonly files = new Map<string, LandingFile>();

  constructor(readonly dir: string) {}

  open(): Promise<void> {
    // Durable now: a file fsynced later is lost with a run folder whose entry never reached the disk.
    mkdirDurable(this.dir);
    return Promise.resolve();
  }

  write(stream: string, line: RawLine): void {
    let f = this.files.get(stream);
    if (!f) {
      const gzip = createGzip({ level: 1 });
      // A resumed run writes a part of its own: appending after a stream a kill cut off would make it unreadable.
      const path = join(this.dir, freePartName(this.dir, stream));
      const file = createWriteStream(path, { flags: 'wx', mode: 0o600 });
      gzip.pipe(file);
      const entry: LandingFile = { gzip, file, path };
      // A full disk or a file that cannot be created: kept for the next flush to report (before the commit it
      // precedes), instead of an unhandled error event that would end the process with a stack trace.
      const failed = (error: Error): void => {
        entry.error ??= error;
      };
      gzip.on('error', failed);
      file.on('error', failed);
      file.on('open', (fd: number) => {
        entry.fd = fd;
      });
      f = entry;
      this.files.set(stream, f);
    }
    if (!f.error) f.gzip.write(JSON.stringify(line) + '\n');
  }

  /**
   * Push what is buffered into the file (a sync-flush point that a reader of a cut file can reach) and onto the disk;
   * resolves once the bytes are fsynced (and, the first time, the file's entry in the folder), so neither a kill nor
   * a power cut right after a commit that follows can take them with it.
   */
  async flush(stream: string): Promise<void> {
    const f = this.files.get(stream);
    if (!f) return;
    if (!f.error) await new Promise<void>((resolve) => f.gzip.flush(constants.Z_SYNC_FLUSH, () => resolve()));
    // The flushed bytes may still wait in the pipe (file stream backpressure) or in the file stream's own buffer;
    // an empty write's callback runs once every write queued before it is done.
    while (!f.error && f.gzip.readableLength > 0) await new Promise((resolve) => setImmediate(resolve));
    if (!f.error)
      await new Promise<void>((resolve) =>
        f.file.write(Buffer.alloc(0), (error) => {
          if (error) f.error ??= error;
          resolve();
        }),
      );
    if (!f.error && f.fd !== undefined) {
      try {
        await fsyncFd(f.fd);
        if (!f.entryDurable) await fsyncDirAsync(this.dir);
        f.entryDurable = true;
      } catch (error) {
        f.error ??= error as Error;
      }
    }
    if (f.error)
      throw new GrantflowError(
        `raw pages of ${stream} could not be written to ${f.path}: ${f.error.message} (the rows they hold were not committed; free the space or pass --land-raw false, then sync again to resume)`,
      );
  }

  async close(): Promise<void> {
    await Promise.all(
      [...this.files.values()].map(async ({ gzip, file }) => {
        gzip.end();
        // A file that failed is destroyed already: its close has happened, or happens without further writes.
        if (!file.closed) await once(file, 'close');
      }),
    );
    this.files.clear();
  }
}

/**
 * The stream's pages on disk before the rows they hold commit: a resume does not fetch a committed walk again, so
 * pages lost after its commit would be missing from the run's raw files, and from a replay of it, for good. Pages
 * that cannot be written fail the stream before it commits anything (its staged rows are discarded).
 */
export async function flushBeforeCommit(
  raw: RawLanding | null | undefined,
  stream: string,
  discard: () => Promise<void>,
): Promise<void> {
  try {
    await raw?.flush(stream);
  } catch (error) {
    await discard();
    throw error;
  }
}

/** `<stream>.jsonl.gz`, then `<stream>.part2.jsonl.gz`, ... for the attempts of a resumed run. */
const partPattern = /^(.+?)(?:\.part(\d+))?\.jsonl\.gz$/;

function partName(stream: string, part: number): string {
  return part === 1 ? `${stream}.jsonl.gz` : `${stream}.part${part}.jsonl.gz`;
}

function freePartName(dir: string, stream: string): string {
  for (let part = 1; ; part++) {
    const name = partName(stream, part);
    if (!existsSync(join(dir, name))) return name;
  }
}

/** Streams of a landed run. */
export async function listRawStreams(dir: string): Promise<string[]> {
  const streams = new Set<string>();
  for (const name of await readdir(dir)) {
    const m = partPattern.exec(name);
    if (m) streams.add(m[1]!);
  }
  return [...streams];
}

/**
 * Where one part of a stream's raw file ends: the next part was written by a later attempt (a resumed run), so a
 * walk the part left open (pages without their `walk_end`) was never committed.
 */
export interface PartEnd {
  readonly type: 'part_end';
}

/**
 * Every line of every part of a stream, in order; a part cut by a crash ends at its last complete line. With
 * `partEnds`, a `part_end` line follows each part.
 */
export function readRawLines(dir: string, stream: string): AsyncGenerator<RawLine>;
export function readRawLines(
  dir: string,
  stream: string,
  options: { partEnds: true },
): AsyncGenerator<RawLine | PartEnd>;
export async function* readRawLines(
  dir: string,
  stream: string,
  options: { partEnds?: boolean } = {},
): AsyncGenerator<RawLine | PartEnd> {
  const parts = (await readdir(dir))
    .map((name) => ({ name, m: partPattern.exec(name) }))
    .filter((p) => p.m?.[1] === stream)
    .map((p) => ({ name: p.name, part: Number(p.m?.[2] ?? 1) }))
    .sort((a, b) => a.part - b.part);
  for (const { name } of parts) {
    yield* readPart(join(dir, name));
    if (options.partEnds) yield { type: 'part_end' };
  }
}

/** The lines of one raw file (a part); a part cut by a crash ends at its last complete line. */
export async function* readPart(path: string): AsyncGenerator<RawLine> {
  // Large chunks: with the defaults (64 KiB in, 16 KiB out) stream bookkeeping cost as much as the inflating.
  const gunzip = createReadStream(path, { highWaterMark: 1 << 20 }).pipe(
    createGunzip({ finishFlush: constants.Z_SYNC_FLUSH, chunkSize: 1 << 18 }),
  );
  // Lines are split on the bytes and each is decoded alone ("\n" never occurs inside a multi-byte UTF-8 sequence).
  // Decoding whole chunks into one string made every line of a chunk two-byte once any character of the chunk was
  // outside Latin-1, and V8 parses two-byte JSON on a slower path.
  // The start of a line that continues in the next chunk, in pieces joined once the line ends (a page can span
  // many chunks).
  const carried: Buffer[] = [];
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      let from = 0;
      for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, from)) {
        let text: string;
        if (carried.length > 0) {
          carried.push(chunk.subarray(from, nl));
          text = Buffer.concat(carried).toString('utf8');
          carried.length = 0;
        } else text = chunk.toString('utf8', from, nl);
        from = nl + 1;
        if (text) yield JSON.parse(text) as RawLine;
      }
      if (from < chunk.length) carried.push(chunk.subarray(from));
    }
  } catch (error) {
    // A part cut by a kill ends in a broken deflate block or a half line: what came before it is whole.
    if (!(error instanceof SyntaxError) && (error as NodeJS.ErrnoException).code?.startsWith('Z_') !== true)
      throw error;
  }
}
