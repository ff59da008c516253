/**
 * A hostile site: its answers are untrusted input. Whatever it sends back (the caller's own token in a next link or
 * in a record), no secret reaches a log line, a raw page, the warehouse or a snapshot.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { dumpWarehouse, proxySite, startSite, syncCliArgs, tempDir, writeCredentials } from '../support/harness.ts';
import { assertNoSecretsLeaked, cli, issuedSecrets, landedTexts, recordIssuedSecrets } from '../support/faults.ts';

let work: { path: string; remove: () => Promise<void> };
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  recordIssuedSecrets();
  work = await tempDir('grantflow-hostile-');
});

afterAll(async () => {
  for (const close of closers) await close();
  await work?.remove();
});

/** A simulated site behind a proxy that passes each 200 list page through `rewrite`. */
async function hostile(rewrite: (body: string, sim: SimulatorHandle, proxy: string) => string) {
  const sim = await startSite({ scale: 'tiny', seed: 11 });
  closers.push(() => sim.close());
  let origin = '';
  const proxy = await proxySite(
    sim.url,
    () => undefined,
    (_url, body) => rewrite(body, sim, origin),
  );
  origin = proxy.url;
  closers.push(proxy.close);
  return { sim, url: proxy.url };
}

/** Next links on the proxy that carry the caller's access token in their query. */
function tokenInNext(body: string, sim: SimulatorHandle, proxy: string): string {
  const page = jsonPage(body);
  if (typeof page?.next !== 'string') return body;
  const next = new URL(page.next);
  next.host = new URL(proxy).host;
  next.searchParams.set('access_token', sim.credentials.access_token);
  return JSON.stringify({ ...page, next: next.href });
}

/** A JSON list page, or null for another body (a report's CSV file), which passes through as it is. */
function jsonPage(body: string): { next?: unknown; results?: unknown } | null {
  try {
    return JSON.parse(body) as { next?: unknown; results?: unknown };
  } catch {
    return null;
  }
}

/** `tokenInNext`, and every record of the page carries the token in a field of its own (kept in `_raw`). */
function tokenInNextAndRecords(body: string, sim: SimulatorHandle, proxy: string): string {
  const page = jsonPage(tokenInNext(body, sim, proxy));
  if (!Array.isArray(page?.results)) return body;
  const results: unknown[] = page.results.map((r: unknown) =>
    typeof r === 'object' && r !== null ? { ...r, echo: `Bearer ${sim.credentials.access_token}` } : r,
  );
  return JSON.stringify({ ...page, results });
}

describe('a site that echoes the access token', () => {
  it('in its next links: no log line holds it, even at debug level', async () => {
    const { sim, url } = await hostile(tokenInNext);
    const dir = join(work.path, 'next-logs');
    await mkdir(dir);
    await writeCredentials(sim, join(dir, 'creds.json'));
    const result = await cli([...syncCliArgs(url, dir), '--per-page', '10'], { env: { GRANTFLOW_LOG_LEVEL: 'debug' } });
    expect(result.code, result.stderr.slice(-2000)).toBe(0);
    // The walk did follow the links: the token went back to the site (its own origin) in the query.
    expect(result.stderr).toContain('access_token=[REDACTED]');
    expect(issuedSecrets.size).toBeGreaterThan(0);
    assertNoSecretsLeaked();
  });

  it('in its next links and its records: no raw page and no warehouse table holds it', async () => {
    const { sim, url } = await hostile(tokenInNextAndRecords);
    const dir = join(work.path, 'next-records');
    await mkdir(dir);
    await writeCredentials(sim, join(dir, 'creds.json'));
    const result = await cli([...syncCliArgs(url, dir), '--per-page', '10']);
    expect(result.code, result.stderr.slice(-2000)).toBe(0);
    const raw = await landedTexts(join(dir, 'raw'));
    const tables = JSON.stringify(await dumpWarehouse(join(dir, 'warehouse.duckdb')));
    assertNoSecretsLeaked([...raw, tables]);
    // The pages were landed and loaded, with the token's place marked.
    expect(raw.join('\n')).toContain('"echo\\":\\"Bearer [REDACTED]');
    expect(tables).toContain('Bearer [REDACTED]');
  });
});
