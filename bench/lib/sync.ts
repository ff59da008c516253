/** One in-process sync with benchmark settings: silent, no models or snapshots unless asked. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { settingsSchema, type SettingsInput } from '../../src/config/settings.ts';
import { runSync, type SyncResult } from '../../src/pipeline/sync.ts';
import type { Credentials } from '../../src/credentials/types.ts';
import { silentLogger } from '../../src/util/logger.ts';

export interface BenchSite {
  readonly url: string;
  readonly credentials: Credentials;
}

export async function writeCreds(site: BenchSite, dir: string): Promise<string> {
  const path = join(dir, 'credentials.json');
  await writeFile(path, JSON.stringify(site.credentials), { mode: 0o600 });
  return path;
}

/** `credentials` must be a file written once per site (the client rotates tokens into it). */
export async function benchSync(
  site: BenchSite,
  dir: string,
  credentials: string,
  settings: SettingsInput = {},
): Promise<SyncResult> {
  const result = await runSync({
    settings: settingsSchema.parse({
      site: site.url,
      credentials,
      warehouse: join(dir, 'warehouse.duckdb'),
      snapshots: join(dir, 'snapshots'),
      rawDir: join(dir, 'raw'),
      landRaw: false,
      models: false,
      snapshot: false,
      logLevel: 'silent',
      ...settings,
    }),
    logger: silentLogger,
    env: {},
    tty: false,
  });
  if (result.status !== 'succeeded') throw new Error(`bench sync ended ${result.status}`);
  return result;
}
