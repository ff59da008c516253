import { existsSync, readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { readPart, type RawLine } from '../extract/raw-landing.ts';
import type { StreamCatalog } from '../streams/catalog.ts';
import { isJsonObject, type JsonValue } from '../util/json.ts';
import { fsyncFile, renameDurable } from '../util/durable-file.ts';
import type { Logger } from '../util/logger.ts';
import type { PurgedRecords } from './purge.ts';

/** The run folders of the raw dir (run-id.ts), as raw-retention.ts knows them. */
const runFolder = /^\d{8}T\d{6}Z-[0-9a-f]{4}$/;
const rawFile = /^(.+?)(?:\.part\d+)?\.jsonl\.gz$/;

export interface RawPruning {
  /** Raw files rewritten without the purged records. */
  readonly files: number;
  /** Pages dropped whole (a purged parent's children) or rewritten without some records. */
  readonly pages: number;
}

/** The records of a page body (a bare array or an envelope's `results`), or null for another shape. */
function recordsOf(body: JsonValue): JsonValue[] | null {
  if (Array.isArray(body)) return body;
  if (isJsonObject(body) && Array.isArray(body.results)) return body.results;
  return null;
}

/**
 * A line as the purge leaves it: null to drop it (a page or walk end of a purged parent's children), the line
 * without the purged records, or the line itself.
 */
function prunedLine(
  line: RawLine,
  keys: ReadonlySet<string> | undefined,
  purgedParents: ReadonlySet<string> | undefined,
): RawLine | null {
  if (line.parentId !== undefined && purgedParents?.has(String(line.parentId))) return null;
  if (line.type !== 'page' || keys === undefined || line.file !== undefined) return line;
  let body: JsonValue;
  try {
    body = JSON.parse(line.body) as JsonValue;
  } catch {
    return line;
  }
  const records = recordsOf(body);
  if (records === null) return line;
  const keyOf = (r: JsonValue): string | null =>
    isJsonObject(r) && (typeof r.id === 'number' || typeof r.id === 'string')
      ? (line.parentId === undefined ? '' : `${line.parentId}/`) + String(r.id)
      : null;
  const kept = records.filter((r) => {
    const key = keyOf(r);
    return key === null || (!keys.has(key) && !keys.has(String(isJsonObject(r) ? r.id : '')));
  });
  if (kept.length === records.length) return line;
  const rewritten = Array.isArray(body) ? kept : { ...(body as Record<string, JsonValue>), results: kept };
  return { ...line, body: JSON.stringify(rewritten) };
}

/**
 * Rewrites the raw pages of every run under `rawDir` without the records a purge removed: a page of a purged parent's
 * children goes whole, a list page loses the purged records (an envelope keeps its `count`, so a replay of it is an
 * incomplete walk and deletes nothing). Each changed file is written whole under a temporary name, fsynced and renamed
 * over the old one, so a crash leaves one or the other.
 */
export async function pruneRawPages(
  rawDir: string,
  catalog: StreamCatalog,
  purged: PurgedRecords,
  logger: Logger,
): Promise<RawPruning> {
  if (!existsSync(rawDir) || (purged.keys.size === 0 && purged.parents.size === 0)) return { files: 0, pages: 0 };
  let files = 0;
  let pages = 0;
  for (const run of readdirSync(rawDir).filter((n) => runFolder.test(n))) {
    const dir = join(rawDir, run);
    for (const name of readdirSync(dir)) {
      const stream = rawFile.exec(name)?.[1];
      const def = stream === undefined ? undefined : catalog.streamByName(stream);
      if (stream === undefined || def === undefined) continue;
      const keys = purged.keys.get(stream);
      const parents = def.parent === undefined ? undefined : purged.parents.get(def.parent.stream);
      if (keys === undefined && parents === undefined) continue;
      const path = join(dir, name);
      const out: string[] = [];
      let changed = 0;
      for await (const line of readPart(path)) {
        const kept = prunedLine(line, keys, parents);
        if (kept !== line) changed++;
        if (kept !== null) out.push(JSON.stringify(kept));
      }
      if (changed === 0) continue;
      const temp = `${path}.${process.pid}.purge.tmp`;
      await writeFile(temp, gzipSync(out.length > 0 ? `${out.join('\n')}\n` : ''), { mode: 0o600 });
      fsyncFile(temp);
      renameDurable(temp, path);
      files++;
      pages += changed;
    }
  }
  if (files > 0) logger.info({ files, pages }, 'raw pages pruned of purged records');
  return { files, pages };
}
