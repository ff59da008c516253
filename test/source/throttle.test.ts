import { afterEach, describe, expect, it } from 'vitest';
import { createSiteClient } from '../../src/source/index.ts';
import { json, maxInWindow, MemoryStore, startServer, type TestServer } from './helpers.ts';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function burst(rate: number, requests: number, latencyMs: number) {
  server = await startServer(async (_req, res) => {
    await new Promise((r) => setTimeout(r, latencyMs));
    json(res, 200, { ok: true });
  });
  const client = createSiteClient({ baseUrl: server.url, store: new MemoryStore(), rate, concurrency: 8 });
  try {
    await Promise.all(Array.from({ length: requests }, (_, i) => client.getJson(`/api/item/${i}/`)));
    return { times: server.arrivals.map((a) => a.t), maxInFlight: server.maxInFlight(), stats: client.stats };
  } finally {
    await client.close();
  }
}

describe('rate limiter', () => {
  it('never lets more than 5 requests start in any one-second window, with several in flight', async () => {
    const { times, maxInFlight, stats } = await burst(5, 16, 450);
    expect(times).toHaveLength(16);
    expect(maxInWindow(times)).toBeLessThanOrEqual(5);
    // Requests keep starting while earlier ones wait on the slow server.
    expect(maxInFlight).toBeGreaterThanOrEqual(2);
    expect(stats.requests).toBe(16);
    expect(stats.byStatus['200']).toBe(16);
  });

  it('spaces requests evenly at other rates too', async () => {
    const { times } = await burst(10, 25, 200);
    expect(maxInWindow(times)).toBeLessThanOrEqual(10);
    const sorted = [...times].sort((a, b) => a - b);
    for (let i = 1; i < sorted.length; i++) {
      // Even spacing, not bursts: no two arrivals closely together (1/10 s apart, minus loopback jitter).
      expect(sorted[i]! - sorted[i - 1]!).toBeGreaterThan(40);
    }
  });
});
