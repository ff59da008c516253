import { createHash } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempSuffix } from './snapshot-dir.ts';
import { writeFileDurable } from '../util/durable-file.ts';

export interface ManifestColumn {
  readonly name: string;
  readonly type: string;
}

/** One table's latest snapshot, as BI tools and `grantflow status` read it. */
export interface ManifestEntry {
  /** Path of the latest Parquet file, relative to the snapshot directory, with `/` separators. */
  readonly path: string;
  /**
   * `latest/<table>.parquet` (see latest.ts): the same file under a stable name. Absent from entries written before
   * it existed, until the table is written again.
   */
  readonly latest?: string;
  readonly snapshot: string;
  readonly rows: number;
  readonly bytes: number;
  readonly schema: readonly ManifestColumn[];
  readonly sha256: string;
  readonly run_id: string;
  readonly written_at: string;
  /** What the file carries of personal data (docs/privacy.md); absent: `keep`, as before the setting existed. */
  readonly personal_data?: 'keep' | 'pseudonymize' | 'drop';
}

export interface Manifest {
  readonly version: 1;
  readonly updated_at: string;
  readonly run_id: string;
  readonly tables: Readonly<Record<string, ManifestEntry>>;
}

export const manifestName = '_manifest.json';

export function sha256File(path: string): Promise<string> {
  return new Promise((done, fail) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', fail)
      .on('end', () => done(hash.digest('hex')));
  });
}

/** A manifest's text as a manifest, or null when absent or unreadable. */
export function parseManifest(text: string | null): Manifest | null {
  if (text === null) return null;
  try {
    const parsed = JSON.parse(text) as Partial<Manifest>;
    return parsed.version === 1 && typeof parsed.tables === 'object' && parsed.tables !== null
      ? (parsed as Manifest)
      : null;
  } catch {
    return null;
  }
}

/** The manifest of a snapshot folder (tables not in the last run stay listed), or null when absent or unreadable. */
export function readManifest(dir: string): Manifest | null {
  try {
    return parseManifest(readFileSync(join(dir, manifestName), 'utf8'));
  } catch {
    return null;
  }
}

/**
 * Written under a temporary name, fsynced and renamed, so a reader sees the old manifest or the new one, never half,
 * also after a power cut (the files it names were made durable before it).
 */
export function writeManifest(dir: string, manifest: Manifest): void {
  const temp = join(dir, `.${manifestName}.${process.pid}${tempSuffix}`);
  writeFileDurable(join(dir, manifestName), temp, `${JSON.stringify(manifest, null, 2)}\n`);
}
