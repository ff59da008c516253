import { randomBytes } from 'node:crypto';

/** Sortable, readable and unique: `20261121T233644Z-9f3a`. */
export function newRunId(now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${randomBytes(2).toString('hex')}`;
}
