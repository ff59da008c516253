import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Credentials } from '../credentials/types.ts';
import { TokenStore } from './auth.ts';
import { createControl, type SimulatorControl } from './control.ts';
import { handleControl } from './control-http.ts';
import { RequestCounter } from './counts.ts';
import type { Dataset } from './dataset.ts';
import { Drift } from './drift.ts';
import { FaultInjector, type Fault } from './faults.ts';
import { generateDataset } from './generate.ts';
import { parseFormOrJson, parseJsonBody, readBody, sendHtmlError, sendJson, sendJsonText, sleep } from './http-io.ts';
import { deepJson, deepRecord, endlessIdBase, endlessPage, type EndlessList } from './hostile.ts';
import type { JsonObject } from '../util/json.ts';
import { FilterCache, paginate } from './listing.ts';
import { configFrom, type SimConfig, type SimulatorOptions } from './options.ts';
import { SlidingWindowLimiter } from './rate-limit.ts';
import { Router } from './router.ts';
import { simulatorRoutes } from './routes.ts';

export interface SimulatorHandle {
  /** Base URL, e.g. `http://127.0.0.1:43121` (paths start with `/api/`). */
  readonly url: string;
  readonly port: number;
  /** The newest credential set's CURRENT tokens (they change when a client refreshes). */
  readonly credentials: Credentials;
  readonly control: SimulatorControl;
  close(): Promise<void>;
}

const TOKEN_PATH = '/api/o/token/';
const REVOKE_PATH = '/api/o/revoke_token/';

interface Parts {
  ds: Dataset;
  config: SimConfig;
  tokens: TokenStore;
  counter: RequestCounter;
  faults: FaultInjector;
  limiter: SlidingWindowLimiter;
  router: Router;
  filterCache: FilterCache;
  drift: Drift;
  baseUrl: string;
}

/** Starts the simulated site on a real loopback socket. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<SimulatorHandle> {
  const ds = options.dataset ?? generateDataset({ scale: options.scale ?? 'tiny', seed: options.seed ?? 1 });
  const config = configFrom(options);
  const tokens = new TokenStore(options.tokenTtlSeconds ?? 7200);
  tokens.issue();
  const parts: Parts = {
    ds,
    config,
    tokens,
    counter: new RequestCounter(),
    faults: new FaultInjector(config.faults, ds.seed),
    limiter: new SlidingWindowLimiter(config.rate),
    router: new Router(simulatorRoutes),
    filterCache: new FilterCache(),
    drift: new Drift(options.drift ?? false),
    baseUrl: '',
  };
  const control = createControl(parts);
  for (const [path, rows] of Object.entries(options.extraLists ?? {})) control.addList(path, rows);
  const server = createServer({ keepAlive: true }, (req, res) => {
    handle(parts, control, req, res).catch((error: unknown) => {
      if (!res.headersSent)
        sendJson(res, 500, { detail: `simulator error: ${error instanceof Error ? error.message : String(error)}` });
      else res.destroy();
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  parts.baseUrl = url;
  return {
    url,
    port,
    get credentials() {
      return tokens.current();
    },
    control,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(p: Parts, control: SimulatorControl, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', p.baseUrl);
  const path = url.pathname;
  const method = req.method ?? 'GET';
  if (path.startsWith('/_sim/')) return handleControl(control, req, res, url);
  const template = path === TOKEN_PATH || path === REVOKE_PATH ? path : (p.router.templateOf(path) ?? path);
  p.counter.record(method, template, path, url.search);
  const reply = (
    status: number,
    body?: Parameters<typeof sendJson>[2],
    opts?: Parameters<typeof sendJson>[3],
  ): void => {
    p.counter.status(status);
    // The one point where drift (off by default) reaches answers: records of a 200 GET gain unlisted fields.
    const sent = status === 200 && method === 'GET' ? p.drift.decorateBody(p.ds, template, body) : body;
    sendJson(res, status, sent as typeof body, opts);
  };
  if (!path.startsWith('/api/')) return reply(404, { detail: 'Not found.' });

  const { ms, jitterMs } = p.config.latency;
  if (ms > 0 || (jitterMs ?? 0) > 0) await sleep(ms + Math.floor(Math.random() * (jitterMs ?? 0)));
  const raw = method === 'GET' || method === 'HEAD' ? '' : await readBody(req);

  const isTokenPath = path === TOKEN_PATH || path === REVOKE_PATH;
  const form = isTokenPath ? parseFormOrJson(raw) : undefined;
  const auth = isTokenPath ? undefined : p.tokens.authenticate(req.headers.authorization);
  const clientKey =
    (isTokenPath ? p.tokens.clientKeyFor(form?.['client_id']) : auth?.clientKey) ??
    `anon:${req.socket.remoteAddress ?? ''}`;
  if (!p.limiter.allow(clientKey)) {
    return reply(
      429,
      { detail: 'Request was throttled. Expected available in 1 second.' },
      p.config.retryAfterSeconds > 0 ? { headers: { 'Retry-After': String(p.config.retryAfterSeconds) } } : {},
    );
  }

  const fault: Fault | null = p.faults.roll(isTokenPath);
  if (fault?.kind === '5xx') {
    p.counter.status(fault.status);
    return sendHtmlError(res, fault.status);
  }
  if (fault?.kind === 'reset') {
    p.counter.status('reset');
    req.socket.destroy();
    return;
  }
  if (fault?.kind === 'latency') await sleep(fault.ms);
  const truncate = fault?.kind === 'truncate';

  if (isTokenPath) {
    if (method !== 'POST') return reply(405, { detail: `Method "${method}" not allowed.` });
    if (!form) return reply(400, { error: 'invalid_request' });
    const out = path === TOKEN_PATH ? p.tokens.refresh(form) : p.tokens.revoke(form);
    return reply(out.status, out.body, { headers: { 'Cache-Control': 'no-store' } });
  }
  if (!auth?.ok) {
    const detail =
      auth?.reason === 'expired'
        ? 'Access token expired.'
        : auth?.reason === 'invalid'
          ? 'Invalid token.'
          : 'Authentication credentials were not provided.';
    return reply(401, { detail }, { headers: { 'WWW-Authenticate': 'Bearer realm="api"' } });
  }
  const match = p.router.match(method, path);
  if (match === undefined) return reply(404, { detail: 'Not found.' });
  if (match === 'method_not_allowed') return reply(405, { detail: `Method "${method}" not allowed.` });
  const { route, params } = match;
  if (route.feature === 'eligibility' && !p.config.features.eligibility)
    return reply(404, { detail: 'Eligibility is not enabled on this site.' });
  if (route.feature === 'financialManagement' && !p.config.features.financialManagement)
    return reply(403, { detail: 'Financial Management is not enabled on this site.' });
  const missing = (route.permissions ?? []).filter((perm) => !p.config.permissions.has(perm));
  if (missing.length > 0)
    return reply(403, { detail: `You do not have permission to perform this action (needs: ${missing.join(', ')}).` });
  const body = parseJsonBody(raw);
  if (!body.ok) return reply(400, { detail: 'JSON parse error.' });

  const result = route.handler({ ds: p.ds, config: p.config, params, query: url.searchParams, body: body.value });
  if ('file' in result) {
    // Sent whole: a cut file with a consistent length is what no client can tell from a shorter report.
    p.counter.status(result.status);
    res.writeHead(result.status, {
      'Content-Type': result.file.contentType,
      'Content-Length': result.file.body.length,
    });
    res.end(result.file.body);
    return;
  }
  if ('status' in result) return reply(result.status, result.body, { truncate: truncate && result.status === 200 });
  let rows = p.filterCache.filter(
    `${route.template}|${path}`,
    p.ds.version,
    result.list,
    url.searchParams,
    result.filters ?? [],
  );
  const { endless, deepRecord: deep, forgedField, errorBody } = p.config.hostile;
  const host = req.headers.host ? `http://${req.headers.host}` : p.baseUrl;
  if (endless?.template === route.template) return reply(200, hostileEndlessPage(endless, rows, url, host, p.config));
  if (errorBody?.template === route.template) {
    p.counter.status(errorBody.status);
    return sendJsonText(res, errorBody.status, errorBody.body);
  }
  if (forgedField?.template === route.template)
    rows = rows.map((r) => ({ ...(r as JsonObject), [forgedField.name]: 1 })) as typeof rows;
  const style = p.config.listStyleByEndpoint[route.template] ?? p.config.listStyle;
  if (style === 'bare') {
    const all = result.desc ? [...rows].reverse() : rows;
    return reply(200, all as Parameters<typeof sendJson>[2], { truncate });
  }
  const page = paginate(rows, result.desc ?? false, {
    baseUrl: host,
    path,
    query: url.searchParams,
    perPageDefault: p.config.perPageDefault,
    perPageMax: p.config.perPageMax,
    perPageOverMax: p.config.perPageOverMax,
  });
  if (deep?.template === route.template && page.status === 200 && page.body.next === null) {
    // Sent as text: JSON.stringify cannot write a value thousands of levels deep.
    const results = [...(page.body.results as JsonObject[]), deepRecord(rows[0], endlessIdBase - 1)];
    p.counter.status(200);
    return sendJsonText(res, 200, deepJson({ ...page.body, results }, deep.depth));
  }
  return reply(page.status, page.body, { truncate: truncate && page.status === 200 });
}

/** A page of an endless list (hostile.ts): `page` and `per_page` read as a list's are. */
function hostileEndlessPage(
  endless: EndlessList,
  rows: readonly JsonObject[],
  url: URL,
  host: string,
  config: SimConfig,
): JsonObject {
  const per = Number.parseInt(url.searchParams.get('per_page') ?? '', 10);
  const perPage = per > 0 ? Math.min(per, config.perPageMax) : config.perPageDefault;
  const page = Math.max(1, Number.parseInt(url.searchParams.get('page') ?? '1', 10) || 1);
  const link = (n: number): string => {
    const q = new URLSearchParams(url.searchParams);
    q.set('page', String(n));
    return `${host}${url.pathname}?${q.toString()}`;
  };
  return endlessPage(endless, rows, page, perPage, link);
}
