import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type SimulatorHandle } from '../../src/simulator/index.ts';
import { api, obj } from '../support/simulator-api.ts';

let sim: SimulatorHandle;
beforeAll(async () => {
  sim = await startSimulator({ scale: 'tiny', seed: 3, rate: 0 });
});
afterAll(() => sim.close());

async function post(
  path: string,
  body: Record<string, string>,
  json = false,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded' },
    body: json ? JSON.stringify(body) : new URLSearchParams(body).toString(),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const refreshBody = (
  c: { client_id: string; client_secret: string; refresh_token: string },
  extra: Record<string, string> = {},
) => ({
  grant_type: 'refresh_token',
  client_id: c.client_id,
  client_secret: c.client_secret,
  refresh_token: c.refresh_token,
  ...extra,
});

describe('auth', () => {
  it('401 JSON without a token or with a wrong one', async () => {
    const res = await fetch(`${sim.url}/api/programs/`);
    expect(res.status).toBe(401);
    expect(await res.json()).toHaveProperty('detail');
    expect((await api(sim, '/api/programs/', { token: 'nope' })).status).toBe(401);
  });

  it('refresh rotates: the used refresh token and the old access token die at once (urlencoded and JSON)', async () => {
    for (const json of [false, true]) {
      const old = sim.credentials;
      const res = await post('/api/o/token/', refreshBody(old), json);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ expires_in: 7200, token_type: 'Bearer' });
      expect(res.body['access_token']).not.toBe(old.access_token);
      expect(res.body['refresh_token']).not.toBe(old.refresh_token);
      expect((await api(sim, '/api/programs/', { token: old.access_token })).status).toBe(401);
      expect((await api(sim, '/api/programs/', { token: String(res.body['access_token']) })).status).toBe(200);
      const again = await post('/api/o/token/', refreshBody(old), json);
      expect(again).toEqual({ status: 403, body: { error: 'invalid_grant' } });
      expect(sim.credentials.refresh_token).toBe(res.body['refresh_token']);
    }
  });

  it('invalid_client, invalid_scope (without rotating), scope echoed', async () => {
    const c = sim.credentials;
    expect(await post('/api/o/token/', { ...refreshBody(c), client_secret: 'wrong' })).toEqual({
      status: 403,
      body: { error: 'invalid_client' },
    });
    expect(await post('/api/o/token/', refreshBody(c, { scope: 'applicant' }))).toEqual({
      status: 400,
      body: { error: 'invalid_scope' },
    });
    expect((await api(sim, '/api/programs/')).status).toBe(200);
    const ok = await post('/api/o/token/', refreshBody(c, { scope: 'admin' }));
    expect(ok.status).toBe(200);
    expect(ok.body['scope']).toBe('admin');
  });

  it('access tokens expire after the configured ttl; a refresh fixes it', async () => {
    sim.control.setTokenTtl(2);
    const res = await post('/api/o/token/', refreshBody(sim.credentials));
    expect(res.body['expires_in']).toBe(2);
    expect((await api(sim, '/api/programs/')).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2100));
    const expired = await api(sim, '/api/programs/');
    expect(expired.status).toBe(401);
    expect(String(obj(expired.body)['detail'])).toMatch(/expired/i);
    sim.control.setTokenTtl(7200);
    expect((await post('/api/o/token/', refreshBody(sim.credentials))).status).toBe(200);
    expect((await api(sim, '/api/programs/')).status).toBe(200);
    sim.control.expireAccessTokens();
    expect((await api(sim, '/api/programs/')).status).toBe(401);
    expect((await post('/api/o/token/', refreshBody(sim.credentials))).status).toBe(200);
  });

  it('revocation (both body variants) kills the refresh token and its access token', async () => {
    for (const variant of ['refresh_token', 'token'] as const) {
      const c = sim.control.issueCredentials();
      const body: Record<string, string> =
        variant === 'refresh_token'
          ? { client_id: c.client_id, client_secret: c.client_secret, refresh_token: c.refresh_token }
          : { client_id: c.client_id, client_secret: c.client_secret, token: c.refresh_token, token_hint: 'refresh' };
      const res = await fetch(`${sim.url}/api/o/revoke_token/`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(body),
      });
      expect(res.status).toBe(204);
      expect((await api(sim, '/api/programs/', { token: c.access_token })).status).toBe(401);
      expect((await post('/api/o/token/', refreshBody(c))).body).toEqual({ error: 'invalid_grant' });
    }
  });

  it('issuing a new set invalidates the old one; revokeAll kills everything', async () => {
    const old = sim.control.issueCredentials();
    const fresh = sim.control.issueCredentials();
    expect((await api(sim, '/api/programs/', { token: old.access_token })).status).toBe(401);
    expect((await api(sim, '/api/programs/', { token: fresh.access_token })).status).toBe(200);
    sim.control.revokeAllCredentials();
    expect((await api(sim, '/api/programs/', { token: fresh.access_token })).status).toBe(401);
    expect((await post('/api/o/token/', refreshBody(fresh))).body).toEqual({ error: 'invalid_grant' });
    const http = await fetch(`${sim.url}/_sim/credentials`, { method: 'POST' });
    const creds = (await http.json()) as { access_token: string };
    expect((await api(sim, '/api/programs/', { token: creds.access_token })).status).toBe(200);
  });
});
