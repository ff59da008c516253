import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type SimulatorHandle } from '../../src/simulator/index.ts';
import { api } from '../support/simulator-api.ts';

let sim: SimulatorHandle;
beforeAll(async () => {
  sim = await startSimulator({ scale: 'tiny', seed: 11 });
});
afterAll(() => sim.close());

describe('rate limit', () => {
  it('allows 5 per second per client by default, then 429 JSON (no Retry-After unless configured)', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => api(sim, '/api/programs/')));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(3);
    const limited = results.find((r) => r.status === 429);
    expect(limited?.body).toHaveProperty('detail');
    expect(limited?.headers.get('retry-after')).toBeNull();
    sim.control.setRetryAfter(true);
    sim.control.setRate(2);
    const more = await Promise.all(Array.from({ length: 3 }, () => api(sim, '/api/programs/')));
    expect(more.filter((r) => r.status === 429)).toHaveLength(1);
    expect(more.find((r) => r.status === 429)?.headers.get('retry-after')).toBe('1');
    // A site that asks for a long pause.
    sim.control.setRetryAfter(300);
    sim.control.setRate(1);
    const paused = await Promise.all(Array.from({ length: 2 }, () => api(sim, '/api/programs/')));
    expect(paused.find((r) => r.status === 429)?.headers.get('retry-after')).toBe('300');
    expect(() => sim.control.setRetryAfter(-1)).toThrow(RangeError);
    sim.control.setRetryAfter(false);
  });

  it('the token endpoint counts too; another credential set has its own window', async () => {
    sim.control.setRate(2);
    const c = sim.credentials;
    const form = new URLSearchParams({
      grant_type: 'refresh_token',
      client_id: c.client_id,
      client_secret: c.client_secret,
      refresh_token: 'not-it',
    });
    const statuses = await Promise.all(
      Array.from({ length: 3 }, () =>
        fetch(`${sim.url}/api/o/token/`, { method: 'POST', body: form }).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 429)).toHaveLength(1);
    const other = sim.control.issueCredentials({ keepExisting: true });
    expect((await api(sim, '/api/programs/', { token: other.access_token })).status).toBe(200);
    sim.control.setRate(0);
  });
});

describe('faults', () => {
  it('fire at the configured rate, seeded, with HTML 5xx bodies, truncated JSON and resets', async () => {
    sim.control.setRate(0);
    sim.control.setFaults({ rate: 0.2, seed: 99, latencyMs: 1, jitterMs: 2 });
    let ok = 0,
      html5xx = 0,
      truncated = 0,
      reset = 0;
    const n = 400;
    for (let i = 0; i < n; i++) {
      try {
        const res = await fetch(`${sim.url}/api/programs/`, {
          headers: { authorization: `Bearer ${sim.credentials.access_token}` },
        });
        const text = await res.text();
        if (res.status >= 500) {
          expect(res.headers.get('content-type')).toContain('text/html');
          expect(text).toContain('<html>');
          html5xx++;
        } else {
          try {
            JSON.parse(text);
            ok++;
          } catch {
            truncated++;
          }
        }
      } catch {
        reset++;
      }
    }
    const injected = sim.control.faultsInjected();
    const total = injected['5xx'] + injected.truncate + injected.reset + injected.latency;
    // 0.2 × 400 = 80 expected; the seeded sequence makes this exact, the bounds say what matters.
    expect(total).toBeGreaterThan(50);
    expect(total).toBeLessThan(110);
    expect(html5xx).toBe(injected['5xx']);
    expect(truncated).toBe(injected.truncate);
    expect(reset).toBe(injected.reset);
    expect(ok + html5xx + truncated + reset).toBe(n);
    sim.control.setFaults({ rate: 0 });
  });

  it('the token endpoint only gets faults that happen before processing: no rotated token is lost', async () => {
    sim.control.setFaults({
      rate: 0.5,
      seed: 5,
      kinds: ['5xx', 'truncate', 'reset', 'latency'],
      latencyMs: 1,
      jitterMs: 1,
    });
    for (let i = 0; i < 30; i++) {
      const c = sim.credentials;
      const res = await fetch(`${sim.url}/api/o/token/`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          client_id: c.client_id,
          client_secret: c.client_secret,
          refresh_token: c.refresh_token,
        }),
      });
      const text = await res.text();
      if (res.status === 200) expect(JSON.parse(text)).toHaveProperty('refresh_token');
      else {
        expect(res.status).toBeGreaterThanOrEqual(500);
        // Not processed: the old refresh token still works.
        expect(sim.credentials.refresh_token).toBe(c.refresh_token);
      }
    }
    sim.control.setFaults({ rate: 0 });
  });

  it('adds configured latency to every request', async () => {
    sim.control.setLatency({ ms: 50 });
    const t0 = Date.now();
    await api(sim, '/api/programs/');
    // Not a performance assertion: the delay is a floor the simulator must add.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(45);
    sim.control.setLatency({ ms: 0 });
  });
});
