import { stat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSiteClient, FileCredentialStore, refreshesSettled } from '../../src/credentials/index.ts';
import { AccessTokenRefused, SiteHttpError } from '../../src/source/index.ts';
import { startSimulator } from '../../src/simulator/index.ts';
import { ConfigError, CredentialsError, GrantflowError } from '../../src/util/errors.ts';
import { redact } from '../../src/util/redact.ts';
import { silentLogger } from '../../src/util/logger.ts';
import {
  json,
  MemoryStore,
  startServer,
  testCreds,
  writeCredsFile,
  type Handler,
  type TestServer,
} from '../support/http-server.ts';
import { tempDir } from '../support/temp-dir.ts';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A site whose valid access token changes on each refresh; the old refresh token dies at once. */
function rotatingSite(events: string[], slow401Ms = 0) {
  let generation = 1;
  let access = testCreds.access_token;
  let refresh = testCreds.refresh_token;
  const handler: Handler = async (_req, res, a) => {
    if (a.path === '/api/o/token/') {
      events.push('token');
      const form = new URLSearchParams(a.body);
      if (form.get('refresh_token') !== refresh) return json(res, 400, { error: 'invalid_grant' });
      if (form.get('client_secret') !== testCreds.client_secret) return json(res, 401, { error: 'invalid_client' });
      generation++;
      access = `access-token-gen-${generation}-xxxxxxxx`;
      refresh = `refresh-token-gen-${generation}-yyyyyyyy`;
      await new Promise((r) => setTimeout(r, 30));
      return json(res, 200, { access_token: access, refresh_token: refresh, expires_in: 7200, token_type: 'Bearer' });
    }
    const ok = a.auth === `Bearer ${access}`;
    events.push(ok ? 'api-ok' : 'api-401');
    if (!ok) {
      if (slow401Ms) await new Promise((r) => setTimeout(r, slow401Ms));
      return json(res, 401, { detail: 'Invalid token' });
    }
    json(res, 200, { path: a.path });
  };
  return { handler, current: () => ({ access, refresh }), expire: () => (access = 'expired-by-server-zzzz') };
}

describe('token refresh', () => {
  it('shares one refresh among 10 concurrent 401s and saves before the next API request', async () => {
    const events: string[] = [];
    // All 10 are in flight before the first 401 comes back.
    const site = rotatingSite(events, 400);
    site.expire();
    server = await startServer(site.handler);
    const store = new MemoryStore(testCreds, async () => {
      await new Promise((r) => setTimeout(r, 150)); // a slow disk
      events.push('saved');
    });
    const client = createSiteClient({ baseUrl: server.url, store, rate: 50, concurrency: 10 });
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => client.getJson(`/api/item/${i}/`)));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(events.filter((e) => e === 'token')).toHaveLength(1);
    expect(client.stats.refreshes).toBe(1);
    const tokenAt = events.indexOf('token');
    expect(events.slice(0, tokenAt)).toEqual(Array(10).fill('api-401'));
    const savedAt = events.indexOf('saved');
    expect(savedAt).toBeGreaterThan(tokenAt);
    // Nothing reached the site between the token call and the save.
    expect(events.slice(tokenAt + 1, savedAt)).toEqual([]);
    expect(events.slice(savedAt + 1)).toEqual(Array(10).fill('api-ok'));
    expect(store.saves).toHaveLength(1);
    expect(store.saves[0]!.access_token).toBe(site.current().access);
    // The refresh form carried the right fields, urlencoded, never in the URL.
    const tokenCall = server.arrivals.find((a) => a.path.startsWith('/api/o/token/'))!;
    expect(tokenCall.path).toBe('/api/o/token/');
    expect(Object.fromEntries(new URLSearchParams(tokenCall.body))).toEqual({
      grant_type: 'refresh_token',
      client_id: testCreds.client_id,
      client_secret: testCreds.client_secret,
      refresh_token: testCreds.refresh_token,
    });
    // Rotated tokens are registered for redaction as soon as they are known.
    expect(redact(`x ${site.current().refresh} y`)).toBe('x [REDACTED] y');
    await client.close();
  });

  it('a client that may not refresh (refreshTokens: false) fails a 401 with AccessTokenRefused, sending no refresh', async () => {
    const events: string[] = [];
    const site = rotatingSite(events);
    site.expire();
    server = await startServer(site.handler);
    const store = new MemoryStore(testCreds);
    const client = createSiteClient({ baseUrl: server.url, store, refreshTokens: false });
    await expect(client.getJson('/api/programs/')).rejects.toBeInstanceOf(AccessTokenRefused);
    expect(events).toEqual(['api-401']);
    expect(client.stats.refreshes).toBe(0);
    expect(store.saves).toEqual([]);
    await client.close();
  });

  it('a token response that is not JSON is asked once and never quoted: it may carry the new tokens', async () => {
    const newTokens = 'access_token=NEW-ACCESS-secret-1234&refresh_token=NEW-REFRESH-secret-5678';
    let tokenCalls = 0;
    server = await startServer((_req, res, a) => {
      if (a.path === '/api/o/token/') {
        tokenCalls++;
        res.writeHead(200, { 'content-type': 'application/x-www-form-urlencoded' });
        res.end(newTokens);
        return;
      }
      json(res, 401, { detail: 'Invalid token' });
    });
    const logged: string[] = [];
    const logger = { ...silentLogger, warn: (o: unknown, m?: string) => logged.push(JSON.stringify(o) + (m ?? '')) };
    const client = createSiteClient({ baseUrl: server.url, store: new MemoryStore(testCreds), rate: 50, logger });
    const error = await client.getJson('/api/programs/').then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CredentialsError);
    expect(tokenCalls).toBe(1);
    for (const text of [(error as Error).message, ...logged]) {
      expect(text).not.toContain('NEW-ACCESS');
      expect(text).not.toContain('NEW-REFRESH');
    }
    expect((error as Error).message).toMatch(
      /not a JSON token response .*invalid_grant, generate a new credential set/,
    );
    await client.close();
  });

  it('two processes sharing one credentials file: the one that refreshes second takes the pair the first saved', async () => {
    const { path: dir, remove: cleanup } = await tempDir();
    try {
      const path = join(dir, 'creds.json');
      await writeCredsFile(path, testCreds);
      const site = rotatingSite([]);
      server = await startServer(site.handler);
      const [a, b] = [0, 1].map(() =>
        createSiteClient({ baseUrl: server!.url, store: new FileCredentialStore(path), rate: 50 }),
      );
      await a!.getJson('/api/programs/1/'); // both hold the same pair
      await b!.getJson('/api/programs/1/');
      site.expire();
      await b!.getJson('/api/programs/2/'); // b refreshes: the refresh token a holds is dead now
      const afterB = site.current();
      expect((await a!.getJson('/api/programs/3/')).status).toBe(200);
      expect(a!.stats.refreshes).toBe(0);
      expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ refresh_token: afterB.refresh });
      await a!.close();
      await b!.close();
    } finally {
      await cleanup();
    }
  });

  it('refreshesSettled waits until a refresh under way has saved its new pair (what a second Ctrl-C waits for)', async () => {
    const site = rotatingSite([]);
    site.expire();
    server = await startServer(site.handler);
    let saved = false;
    const store = new MemoryStore(testCreds, async () => {
      await new Promise((r) => setTimeout(r, 300)); // a slow disk
      saved = true;
    });
    const client = createSiteClient({ baseUrl: server.url, store, rate: 50 });
    const request = client.getJson('/api/programs/1/');
    while (server.arrivals.every((a) => a.path !== '/api/o/token/')) await new Promise((r) => setTimeout(r, 5));
    await refreshesSettled();
    expect(saved).toBe(true);
    await request;
    await refreshesSettled(); // none under way: resolves at once
    await client.close();
  });

  it('rotates the credentials file: new pair on disk, mode 0600', async () => {
    const { path: dir, remove: cleanup } = await tempDir();
    try {
      const path = join(dir, 'creds.json');
      await writeCredsFile(path, testCreds, 0o644);
      const events: string[] = [];
      const site = rotatingSite(events);
      site.expire();
      server = await startServer(site.handler);
      const client = createSiteClient({ baseUrl: server.url, store: new FileCredentialStore(path), rate: 50 });
      await client.getJson('/api/programs/1/');
      const onDisk = JSON.parse(await readFile(path, 'utf8')) as Record<string, string>;
      expect(onDisk).toEqual({
        client_id: testCreds.client_id,
        client_secret: testCreds.client_secret,
        access_token: site.current().access,
        refresh_token: site.current().refresh,
      });
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      // A second expiry refreshes again with the rotated refresh token.
      site.expire();
      await client.getJson('/api/programs/2/');
      expect(events.filter((e) => e === 'token')).toHaveLength(2);
      const again = JSON.parse(await readFile(path, 'utf8')) as Record<string, string>;
      expect(again.refresh_token).toBe(site.current().refresh);
      await client.close();
    } finally {
      await cleanup();
    }
  });

  it('invalid_grant → CredentialsError (exit 2) naming what to regenerate, with no secret', async () => {
    const events: string[] = [];
    const site = rotatingSite(events);
    site.expire();
    server = await startServer(site.handler);
    const store = new MemoryStore({ ...testCreds, refresh_token: 'refresh-token-already-used-0000' });
    const client = createSiteClient({ baseUrl: server.url, store, rate: 50 });
    const errs = await Promise.all([1, 2, 3].map((i) => client.getJson(`/api/x/${i}/`).catch((e: unknown) => e)));
    for (const err of errs) {
      expect(err).toBeInstanceOf(CredentialsError);
      const e = err as CredentialsError;
      expect(e.exitCode).toBe(2);
      expect(e.message).toMatch(/refresh token.*integration settings/);
      for (const secret of Object.values(store.current)) expect(e.message).not.toContain(secret);
    }
    expect(events.filter((e) => e === 'token')).toHaveLength(1);
    // Later requests fail at once, without another refresh attempt.
    await expect(client.getJson('/api/x/4/')).rejects.toBeInstanceOf(CredentialsError);
    expect(events.filter((e) => e === 'token')).toHaveLength(1);
    expect(store.saves).toHaveLength(0);
    await client.close();
  });

  it('invalid_client → CredentialsError about the client id / secret', async () => {
    const events: string[] = [];
    const site = rotatingSite(events);
    site.expire();
    server = await startServer(site.handler);
    const store = new MemoryStore({ ...testCreds, client_secret: 'wrong-client-secret-1234' });
    const client = createSiteClient({ baseUrl: server.url, store, rate: 50 });
    const err = await client.getJson('/api/x/').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CredentialsError);
    expect((err as Error).message).toMatch(/client id \/ client secret/);
    expect((err as Error).message).not.toContain('wrong-client-secret-1234');
    await client.close();
  });

  it('a token endpoint error page that echoes the form shows no secret, even URL-encoded', async () => {
    // Characters a form body encodes (`~ / + =` and a space): the echo is not the secret as stored.
    const secrets = { client_secret: 'cs~Az/9+Qk=r w.x', refresh_token: 'rt~Zy/8+Pj==' };
    server = await startServer((_q, res, a) => {
      if (a.path !== '/api/o/token/') return json(res, 401, { detail: 'Invalid token' });
      res.writeHead(400, { 'content-type': 'text/html' });
      res.end(`<html><body><h1>Bad Request</h1><p>Could not process: ${a.body}</p></body></html>`);
    });
    const store = new MemoryStore({ ...testCreds, ...secrets });
    const client = createSiteClient({ baseUrl: server.url, store, rate: 50 });
    const err = await client.getJson('/api/x/').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GrantflowError);
    const message = (err as Error).message;
    expect(message).toContain('client_secret=[REDACTED]&refresh_token=[REDACTED]');
    for (const secret of Object.values(secrets)) {
      for (const form of [secret, encodeURIComponent(secret), new URLSearchParams({ v: secret }).toString().slice(2)])
        expect(message).not.toContain(form);
    }
    await client.close();
  });

  it('a JSON error body that echoes the access token does not show it, even JSON-escaped', async () => {
    const access = 'at-"quoted"-and\\backslashed-0001';
    server = await startServer((_q, res, a) => json(res, 403, { detail: `not allowed for ${a.auth ?? ''}` }));
    const client = createSiteClient({
      baseUrl: server.url,
      store: new MemoryStore({ ...testCreds, access_token: access }),
    });
    const err = await client.getJson('/api/x/').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SiteHttpError);
    expect((err as SiteHttpError).body).toContain('not allowed for Bearer [REDACTED]');
    expect((err as Error).message).not.toContain('backslashed');
    await client.close();
  });

  it('gives up with CredentialsError when even a fresh token gets 401 (wrong site)', async () => {
    server = await startServer((_q, res, a) =>
      a.path === '/api/o/token/'
        ? json(res, 200, { access_token: 'fresh-access-token-9999', refresh_token: 'fresh-refresh-token-9999' })
        : json(res, 401, {}),
    );
    const store = new MemoryStore();
    const client = createSiteClient({ baseUrl: server.url, store, rate: 50 });
    await expect(client.getJson('/api/x/')).rejects.toThrow(/401.*site URL/);
    expect(store.saves).toHaveLength(1); // the rotated pair is still kept
    await client.close();
  });

  it('refreshes proactively before a known expiry, without waiting for a 401', async () => {
    let n = 0;
    server = await startServer((_q, res, a) => {
      if (a.path === '/api/o/token/') {
        n++;
        // 1 s lifetime: the next refresh is due after half of it.
        return json(res, 200, {
          access_token: `short-lived-access-${n}-abcd`,
          refresh_token: `short-refresh-${n}-abcd`,
          expires_in: 1,
        });
      }
      if (a.auth === `Bearer ${testCreds.access_token}`) return json(res, 401, {});
      json(res, 200, {});
    });
    const client = createSiteClient({ baseUrl: server.url, store: new MemoryStore(), rate: 50 });
    await client.getJson('/api/x/'); // 401 → refresh #1
    await client.getJson('/api/x/'); // still fresh
    expect(n).toBe(1);
    await new Promise((r) => setTimeout(r, 600));
    await client.getJson('/api/x/'); // due → refresh #2 first
    expect(n).toBe(2);
    expect(server.arrivals.filter((a) => a.path !== '/api/o/token/' && a.auth?.includes('short-lived'))).toHaveLength(
      3,
    );
    expect(client.stats.byStatus['401']).toBe(1);
    await client.close();
  });

  it('a save slower than the new token lives counts its lifetime from the request: it refreshes again, not fails', async () => {
    // 1 s tokens the site really expires; the first save takes longer than that (a checkpoint on a busy disk).
    let n = 0;
    const issued = new Map<string, number>();
    server = await startServer((_q, res, a) => {
      if (a.path === '/api/o/token/') {
        n++;
        const access = `short-lived-access-${n}-abcd`;
        issued.set(`Bearer ${access}`, Date.now());
        return json(res, 200, { access_token: access, refresh_token: `short-refresh-${n}-abcd`, expires_in: 1 });
      }
      const at = issued.get(a.auth ?? '');
      json(res, at !== undefined && Date.now() - at < 1000 ? 200 : 401, {});
    });
    let saves = 0;
    const store = new MemoryStore(testCreds, async () => {
      if (++saves === 1) await new Promise((r) => setTimeout(r, 1100));
    });
    const client = createSiteClient({ baseUrl: server.url, store, rate: 50 });
    const result = await client.getJson('/api/x/');
    expect(result.status).toBe(200);
    expect(n).toBe(2);
    await client.close();
  });

  it('sends the bearer token and the user agent', async () => {
    server = await startServer((_q, res) => json(res, 200, {}));
    const client = createSiteClient({ baseUrl: server.url, store: new MemoryStore(), rate: 50 });
    await client.getJson('/api/x/');
    expect(server.arrivals[0]!.auth).toBe(`Bearer ${testCreds.access_token}`);
    await client.close();
  });
});

describe('HTTPS rule', () => {
  const store = new MemoryStore();
  it.each(['http://grants.example.org', 'http://10.0.0.5:8080', 'ftp://grants.example.org', 'not a url'])(
    'refuses %s',
    (baseUrl) => {
      expect(() => createSiteClient({ baseUrl, store })).toThrow(ConfigError);
    },
  );
  it.each([
    'https://grants.example.org',
    'http://127.0.0.1:8080',
    'http://127.3.2.1',
    'http://localhost:1',
    'http://[::1]:9',
  ])('accepts %s', async (baseUrl) => {
    const client = createSiteClient({ baseUrl, store });
    await client.close();
  });
});

describe('short token lifetimes under a tight rate limit', () => {
  it('a request queued through 429 pauses past its refreshed token refreshes again instead of failing', async () => {
    // 6 s tokens, a site limiting at the client's own rate (so 429 pauses), 8 requests in flight: some requests
    // wait long enough for the token they were refreshed with to expire too.
    const sim = await startSimulator({ scale: 'tiny', seed: 1, rate: 5, tokenTtlSeconds: 6 });
    const client = createSiteClient({
      baseUrl: sim.url,
      store: new MemoryStore(sim.credentials),
      rate: 5,
      concurrency: 8,
    });
    try {
      const results = await Promise.all(
        Array.from({ length: 60 }, () => client.getJson('/api/programs/', { per_page: 1 })),
      );
      expect(results.every((r) => r.status === 200)).toBe(true);
      expect(client.stats.refreshes).toBeGreaterThanOrEqual(1);
    } finally {
      await client.close();
      await sim.close();
    }
  });
});
