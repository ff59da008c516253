import type { IncomingMessage, ServerResponse } from 'node:http';
import { isJsonObject, type JsonObject, type JsonValue } from '../util/json.ts';
import type { HostileOptions } from './hostile.ts';
import type { SimulatorControl } from './control.ts';
import { parseJsonBody, readBody, sendJson } from './http-io.ts';
import type { FaultOptions, LatencyOptions, ListStyle } from './options.ts';

const num = (v: JsonValue | undefined): number | undefined => (typeof v === 'number' ? v : undefined);

/** `/_sim/...`: the control surface over HTTP, for tests in another process. No auth, no rate limit. */
export async function handleControl(
  control: SimulatorControl,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const path = url.pathname;
  const method = req.method ?? 'GET';
  const parsed = parseJsonBody(method === 'GET' ? '' : await readBody(req));
  if (!parsed.ok) return sendJson(res, 400, { detail: 'body is not JSON' });
  const body: JsonObject = isJsonObject(parsed.value) ? parsed.value : {};
  try {
    if (method === 'GET' && path.startsWith('/_sim/data/')) {
      const name = path.slice('/_sim/data/'.length).replace(/\/$/, '');
      const app = url.searchParams.get('application');
      const org = url.searchParams.get('organization');
      const filter: { application?: number; organization?: number } = {};
      if (app) filter.application = Number(app);
      if (org) filter.organization = Number(org);
      return sendJson(res, 200, control.collection(name, filter));
    }
    if (method === 'GET' && path === '/_sim/counts') return sendJson(res, 200, { ...control.counts() });
    if (method === 'GET' && path === '/_sim/tokens') return sendJson(res, 200, { ...control.tokenCounts() });
    if (method === 'POST' && path === '/_sim/counts/reset') {
      control.resetCounts();
      return sendJson(res, 204, undefined);
    }
    if (method === 'POST' && path === '/_sim/changes') {
      const result = control.applyChanges({
        created: num(body['created']) ?? 0,
        updated: num(body['updated']) ?? 0,
        deleted: num(body['deleted']) ?? 0,
        childEdits: num(body['childEdits']) ?? 0,
        renamed: num(body['renamed']) ?? 0,
      });
      return sendJson(res, 200, { ...result });
    }
    if (method === 'POST' && path === '/_sim/config') {
      applyConfig(control, body);
      return sendJson(res, 200, { ok: true });
    }
    if (method === 'GET' && path === '/_sim/drift')
      return sendJson(res, 200, control.driftReport() as unknown as JsonValue);
    if (method === 'GET' && path === '/_sim/faults') return sendJson(res, 200, { ...control.faultsInjected() });
    if (method === 'POST' && path === '/_sim/credentials')
      return sendJson(res, 201, {
        ...control.issueCredentials({
          keepExisting: body['keepExisting'] === true,
          sameClient: body['sameClient'] === true,
        }),
      });
    if (method === 'POST' && path === '/_sim/credentials/revoke') {
      control.revokeAllCredentials();
      return sendJson(res, 204, undefined);
    }
    if (method === 'POST' && path === '/_sim/tokens/expire') {
      control.expireAccessTokens();
      return sendJson(res, 204, undefined);
    }
    return sendJson(res, 404, { detail: `unknown control route ${method} ${path}` });
  } catch (error) {
    return sendJson(res, 400, { detail: error instanceof Error ? error.message : String(error) });
  }
}

/** Body keys: rate, retryAfter, tokenTtlSeconds, perPageMax (perPageOverMax cap|reject), latency {ms, jitterMs}, faults {...}, listStyle, listStyleByEndpoint, answerShape, drift, hostile (see hostile.ts), permissions, features. */
function applyConfig(control: SimulatorControl, body: JsonObject): void {
  const rate = num(body['rate']);
  if (rate !== undefined) control.setRate(rate);
  const retryAfter = body['retryAfter'];
  if (typeof retryAfter === 'boolean' || typeof retryAfter === 'number') control.setRetryAfter(retryAfter);
  const ttl = num(body['tokenTtlSeconds']);
  if (ttl !== undefined) control.setTokenTtl(ttl);
  const perPageMax = num(body['perPageMax']);
  const overMax = body['perPageOverMax'];
  if (perPageMax !== undefined)
    control.setPerPageMax(perPageMax, overMax === 'cap' || overMax === 'reject' ? overMax : undefined);
  if (isJsonObject(body['latency']))
    control.setLatency({
      ms: num(body['latency']['ms']) ?? 0,
      jitterMs: num(body['latency']['jitterMs']) ?? 0,
    } satisfies LatencyOptions);
  if (isJsonObject(body['faults'])) control.setFaults(body['faults'] as unknown as FaultOptions);
  if (body['listStyle'] === 'bare' || body['listStyle'] === 'envelope') control.setListStyle(body['listStyle']);
  if (body['answerShape'] === 'wrapped' || body['answerShape'] === 'bare') control.setAnswerShape(body['answerShape']);
  if (isJsonObject(body['listStyleByEndpoint'])) {
    for (const [template, style] of Object.entries(body['listStyleByEndpoint'])) {
      if (style === 'bare' || style === 'envelope') control.setListStyle(style satisfies ListStyle, template);
    }
  }
  if (Array.isArray(body['permissions']))
    control.setPermissions(body['permissions'].filter((p): p is string => typeof p === 'string'));
  if (typeof body['drift'] === 'boolean') control.setDrift(body['drift']);
  if (isJsonObject(body['hostile'])) control.setHostile(body['hostile'] as unknown as HostileOptions);
  if (isJsonObject(body['features'])) {
    const f = body['features'];
    control.setFeatures({
      ...(typeof f['financialManagement'] === 'boolean' ? { financialManagement: f['financialManagement'] } : {}),
      ...(typeof f['eligibility'] === 'boolean' ? { eligibility: f['eligibility'] } : {}),
    });
  }
}
