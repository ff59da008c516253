import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSiteClient, type SiteClientOptions } from '../../src/credentials/index.ts';
import { SiteHttpError, SiteResponseError, SiteUnavailableError } from '../../src/source/index.ts';
import { ConfigError, GrantflowError, StoppedError } from '../../src/util/errors.ts';
import { json, MemoryStore, startServer, testCreds, type Handler, type TestServer } from '../support/http-server.ts';
import { tempDir } from '../support/temp-dir.ts';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(handler: Handler, options: Partial<SiteClientOptions> = {}) {
  server = await startServer(handler);
  return createSiteClient({
    baseUrl: server.url,
    store: new MemoryStore(),
    rate: 50,
    retryBaseMs: 5,
    ...options,
  });
}

/** Answers with `bad` for the first `n` requests, then 200 {ok: true}. */
function failFirst(n: number, bad: Handler): Handler {
  let count = 0;
  return (req, res, a) => {
    if (count++ < n) return bad(req, res, a);
    json(res, 200, { ok: true });
  };
}

describe('429 handling', () => {
  it('honours Retry-After in seconds, then succeeds', async () => {
    const client = await setup(
      failFirst(1, (_q, res) => json(res, 429, { detail: 'slow down' }, { 'retry-after': '1' })),
    );
    const out = await client.getJson('/api/x/');
    expect(out.body).toEqual({ ok: true });
    const [first, second] = server!.arrivals;
    expect(second!.t - first!.t).toBeGreaterThanOrEqual(990);
    expect(client.stats.rateLimited).toBe(1);
    expect(client.stats.byStatus).toEqual({ '200': 1, '429': 1 });
    await client.close();
  });

  it('honours Retry-After as an HTTP date', async () => {
    const client = await setup(
      failFirst(1, (_q, res) => json(res, 429, {}, { 'retry-after': new Date(Date.now() + 2000).toUTCString() })),
    );
    await client.getJson('/api/x/');
    const [first, second] = server!.arrivals;
    // HTTP dates have whole-second resolution: at least ~1 s of the 2 s remains.
    expect(second!.t - first!.t).toBeGreaterThanOrEqual(900);
    await client.close();
  });

  it('backs off without Retry-After and carries on', async () => {
    const client = await setup(failFirst(2, (_q, res) => json(res, 429, {})));
    const out = await client.getJson('/api/x/');
    expect(out.status).toBe(200);
    expect(client.stats.rateLimited).toBe(2);
    await client.close();
  });
});

describe('transient failures are retried', () => {
  it('5xx with an HTML body', async () => {
    const client = await setup(
      failFirst(2, (_q, res) => {
        res.writeHead(502, { 'content-type': 'text/html' });
        res.end('<!doctype html><h1>Bad gateway</h1>');
      }),
    );
    expect((await client.getJson('/api/x/')).body).toEqual({ ok: true });
    expect(client.stats.retries).toBe(2);
    await client.close();
  });

  it('200 with HTML or truncated JSON', async () => {
    let n = 0;
    const client = await setup((_q, res) => {
      n++;
      if (n === 1) {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<!doctype html><p>maintenance</p>');
      } else if (n === 2) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"results": [{"id": 1}, {"id":');
      } else json(res, 200, { results: [{ id: 1 }], next: null });
    });
    const pages = [];
    for await (const p of client.paginate('/api/programs/')) pages.push(p);
    expect(pages).toHaveLength(1);
    expect(pages[0]!.records).toEqual([{ id: 1 }]);
    expect(client.stats.retries).toBe(2);
    await client.close();
  });

  it('a reset connection and a body cut short', async () => {
    let n = 0;
    const client = await setup((req, res) => {
      n++;
      if (n === 1) req.socket.destroy();
      else if (n === 2) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"ok": tr');
        setTimeout(() => req.socket.destroy(), 10);
      } else json(res, 200, { ok: true });
    });
    expect((await client.getJson('/api/x/')).body).toEqual({ ok: true });
    expect(n).toBe(3);
    // Every attempt counts as a request, those that got no answer too.
    expect(client.stats.requests).toBe(n);
    await client.close();
  });

  it('a server that never answers times out and is retried', async () => {
    let n = 0;
    const client = await setup(
      (_q, res) => {
        if (n++ === 0) return; // hang
        json(res, 200, { ok: true });
      },
      { timeoutMs: 300 },
    );
    expect((await client.getJson('/api/x/')).body).toEqual({ ok: true });
    expect(client.stats.requests).toBe(n);
    expect(client.stats.byStatus).toEqual({ '200': 1, network: 1 });
    await client.close();
  });
});

describe('giving up', () => {
  it('throws SiteUnavailableError naming the URL and the last problem, never a token', async () => {
    const client = await setup((_q, res) => json(res, 503, { detail: 'down' }), { maxRetries: 2 });
    const err = await client.getJson('/api/programs/', { page: 2 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SiteUnavailableError);
    const e = err as SiteUnavailableError;
    expect(e.exitCode).toBe(1);
    expect(e.message).toContain('/api/programs/?page=2');
    expect(e.message).toContain('HTTP 503');
    expect(e.message).not.toContain(testCreds.access_token);
    expect(server!.arrivals).toHaveLength(3);
    await client.close();
  });

  it('throws SiteResponseError for a 200 that stays HTML', async () => {
    const client = await setup(
      (_q, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<!doctype html><html>login</html>');
      },
      { maxRetries: 1 },
    );
    const err = await collect(client.paginate('/api/programs/')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SiteResponseError);
    expect((err as Error).message).toMatch(/expected a JSON array or an object with `results`; got HTML <!doctype/);
    await client.close();
  });

  it('does not retry 403/404 and exposes status, body and error code', async () => {
    const client = await setup((_q, res) => json(res, 404, { error: 'not_enabled', detail: 'Eligibility is off' }));
    const err = await client.getJson('/api/organizations/1/eligibility/').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SiteHttpError);
    const e = err as SiteHttpError;
    expect(e.status).toBe(404);
    expect(e.errorCode).toBe('not_enabled');
    expect(e.body).toContain('Eligibility is off');
    expect(e).toBeInstanceOf(GrantflowError);
    expect(server!.arrivals).toHaveLength(1);
    await client.close();
  });
});

async function collect<T, R>(gen: AsyncGenerator<T, R>): Promise<{ items: T[]; info: R }> {
  const items: T[] = [];
  for (;;) {
    const r = await gen.next();
    if (r.done) return { items, info: r.value };
    items.push(r.value);
  }
}

describe('the time one request waits out 429s is bounded', () => {
  it('a site answering 429 with Retry-After again and again fails the request once the waits would pass the cap', async () => {
    const client = await setup((_q, res) => json(res, 429, { detail: 'slow down' }, { 'retry-after': '1' }), {
      maxRateLimitWaitMs: 2_500,
    });
    const failure = await client.getJson('/api/a/').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(SiteUnavailableError);
    expect((failure as Error).message).toMatch(/HTTP 429 after 2 s of waiting, the most one request waits/);
    // Two waits of 1 s fit under 2.5 s; the third would not, so the request ends at its third 429.
    expect(client.stats.rateLimited).toBe(3);
    expect(server!.arrivals).toHaveLength(3);
    await client.close();
  });
});

describe('a stop (the abort signal) gives up requests that are waiting, not sent', () => {
  it('a request in a Retry-After pause, and one queued behind it, fail at once; nothing more is sent', async () => {
    const stop = new AbortController();
    const client = await setup((_q, res) => json(res, 429, { detail: 'slow down' }, { 'retry-after': '300' }), {
      signal: stop.signal,
      concurrency: 1,
    });
    const paused = client.getJson('/api/a/');
    const queued = client.getJson('/api/b/');
    await expect.poll(() => client.stats.rateLimited).toBe(1);
    stop.abort();
    await expect(paused).rejects.toBeInstanceOf(StoppedError);
    await expect(queued).rejects.toBeInstanceOf(StoppedError);
    expect(server!.arrivals.map((a) => a.path)).toEqual(['/api/a/']);
    await client.close();
  });

  it('once stopped, no request starts: a call fails at once and the site sees nothing', async () => {
    const stop = new AbortController();
    const client = await setup((_q, res) => json(res, 200, { ok: true }), { signal: stop.signal });
    stop.abort();
    await expect(client.getJson('/api/a/')).rejects.toBeInstanceOf(StoppedError);
    const pages = client.paginate('/api/b/');
    await expect(pages.next()).rejects.toBeInstanceOf(StoppedError);
    expect(server!.arrivals).toEqual([]);
    await client.close();
  });

  it("a request in a retry's backoff fails at once", async () => {
    const stop = new AbortController();
    const client = await setup((_q, res) => json(res, 503, {}), { signal: stop.signal, retryBaseMs: 600_000 });
    const failing = client.getJson('/api/a/');
    await expect.poll(() => client.stats.retries).toBe(1);
    stop.abort();
    await expect(failing).rejects.toBeInstanceOf(StoppedError);
    expect(server!.arrivals).toHaveLength(1);
    await client.close();
  });

  it('a token refresh is not abandoned: the rotated pair is saved', async () => {
    const stop = new AbortController();
    const store = new MemoryStore();
    let refreshes = 0;
    const client = await setup(
      (req, res) => {
        if (req.url === '/api/o/token/') {
          // The refresh is answered once the stop has come.
          refreshes++;
          stop.abort();
          return json(res, 200, { access_token: 'fresh-access', refresh_token: 'fresh-refresh', expires_in: 3600 });
        }
        if (req.headers.authorization === 'Bearer fresh-access') return json(res, 200, { ok: true });
        json(res, 401, { detail: 'expired' });
      },
      { signal: stop.signal, store },
    );
    await expect(client.getJson('/api/a/')).rejects.toBeInstanceOf(StoppedError);
    expect(refreshes).toBe(1);
    expect(store.saves.at(-1)).toMatchObject({ access_token: 'fresh-access', refresh_token: 'fresh-refresh' });
    await client.close();
  });
});

describe('TLS failures are configuration errors, not outages', () => {
  it('a self-signed certificate fails at once (exit 2), after one handshake', async () => {
    const { path: dir, remove: cleanup } = await tempDir('gf-tls-');
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-days',
          '2',
          '-subj',
          '/CN=127.0.0.1',
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
        ],
        { stdio: 'ignore' },
      );
      let handshakes = 0; // TCP connections: a retry would open another
      const tls = createHttpsServer(
        { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
        (_q, res) => json(res, 200, { ok: true }),
      );
      tls.on('connection', () => handshakes++);
      await new Promise<void>((done) => tls.listen(0, '127.0.0.1', done));
      const port = (tls.address() as AddressInfo).port;
      const client = createSiteClient({
        baseUrl: `https://127.0.0.1:${port}`,
        store: new MemoryStore(),
        rate: 50,
        retryBaseMs: 5,
      });
      try {
        const err = await client.getJson('/api/programs/').catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ConfigError);
        expect((err as ConfigError).exitCode).toBe(2);
        expect((err as Error).message).toMatch(/failed the TLS check \(DEPTH_ZERO_SELF_SIGNED_CERT\); check --site/);
        expect(handshakes).toBe(1);
      } finally {
        await client.close();
        await new Promise((done) => tls.close(done));
      }
    } finally {
      await cleanup();
    }
  });

  it('an https URL on a plain-http port fails at once', async () => {
    server = await startServer((_q, res) => json(res, 200, { ok: true }));
    const client = createSiteClient({
      baseUrl: server.url.replace('http:', 'https:'),
      store: new MemoryStore(),
      rate: 50,
      retryBaseMs: 5,
    });
    const err = await client.getJson('/api/programs/').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/failed the TLS check \(ERR_SSL_/);
    await client.close();
  });
});

describe('error pages that echo the request', () => {
  // A token of its own: a piece of it in a message is a leak, whatever else the message holds.
  const token = `tok-${'Q7x'.repeat(10)}-end`;
  const store = () => new MemoryStore({ ...testCreds, access_token: token });
  const echo = (pad: number) => `<html><body><h1>Bad Gateway</h1><pre>${'.'.repeat(pad)} Authorization: Bearer `;

  it('a 5xx page is redacted before it is cut: no piece of the token reaches the message', async () => {
    // The 120 characters the message quotes end inside the token.
    const client = await setup(
      (_q, res, a) => {
        res.writeHead(502, { 'content-type': 'text/html' });
        res.end(`${echo(50)}${a.auth?.slice('Bearer '.length) ?? ''}</pre></body></html>`);
      },
      { maxRetries: 1, store: store() },
    );
    const err = await client.getJson('/api/programs/').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SiteUnavailableError);
    expect((err as Error).message).toContain('Authorization: Bearer [RED');
    expect((err as Error).message).not.toContain(token.slice(0, 8));
    await client.close();
  });

  it('a 4xx body is redacted before it is cut to 500 characters', async () => {
    const client = await setup((_q, res, a) => json(res, 400, { detail: `${'x'.repeat(470)} ${a.auth ?? ''}` }), {
      store: store(),
    });
    const err = await client.getJson('/api/programs/').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SiteHttpError);
    expect((err as SiteHttpError).body).not.toContain(token.slice(0, 8));
    expect((err as Error).message).not.toContain(token.slice(0, 8));
    await client.close();
  });
});

describe('an enormous answer', () => {
  it('an endless body fails the request once past the cap, without reading on or retrying', async () => {
    let written = 0;
    const total = 64 * 2 ** 20;
    const client = await setup(
      (_q, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        res.write('{"results": [');
        // Keeps writing until the client drops the connection (or, without a cap, 64 MiB of spaces and then a close).
        const pump = (): void => {
          while (written < total && !res.destroyed) {
            written += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          if (!res.destroyed) res.end(']}');
        };
        pump();
      },
      { maxBodyBytes: 2 ** 20 },
    );
    const err = await client.getJson('/api/programs/').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SiteResponseError);
    expect((err as Error).message).toMatch(/larger than 1048576 bytes/);
    expect(written).toBeLessThan(total);
    expect(server!.arrivals).toHaveLength(1);
    await client.close();
  });

  it('a declared Content-Length past the cap is refused before the body is read', async () => {
    const client = await setup(
      (_q, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(2 ** 30) });
        res.write('{"results": []');
      },
      { maxBodyBytes: 2 ** 20 },
    );
    const err = await client.getJson('/api/programs/').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SiteResponseError);
    expect((err as Error).message).toMatch(/larger than/);
    expect(server!.arrivals).toHaveLength(1);
    await client.close();
  });
});
