import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { JsonValue } from '../../src/util/json.ts';

/** Every file under `dir`, recursively: where a test searches what grantflow wrote for values it must not hold. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** Every string a JSON value holds (keys aside), for the values the site served. */
export function strings(v: JsonValue | undefined): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.flatMap(strings);
  if (v !== null && typeof v === 'object') return Object.values(v).flatMap(strings);
  return [];
}
