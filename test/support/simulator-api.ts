import type { SimulatorHandle } from '../../src/simulator/index.ts';
import type { JsonObject, JsonValue } from '../../src/util/json.ts';

export interface ApiResponse {
  status: number;
  body: JsonValue;
  text: string;
  headers: Headers;
}

/** One request with the simulator's current access token (or `token` when given). */
export async function api(
  sim: SimulatorHandle,
  path: string,
  init: { method?: string; body?: JsonValue; token?: string } = {},
): Promise<ApiResponse> {
  const url = path.startsWith('http') ? path : `${sim.url}${path}`;
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers: {
      authorization: `Bearer ${init.token ?? sim.credentials.access_token}`,
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
  });
  const text = await res.text();
  let body: JsonValue = null;
  try {
    body = text ? (JSON.parse(text) as JsonValue) : null;
  } catch {
    body = null;
  }
  return { status: res.status, body, text, headers: res.headers };
}

export function obj(v: JsonValue | undefined): JsonObject {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new Error(`expected an object, got ${JSON.stringify(v)}`);
  return v;
}

export function arr(v: JsonValue | undefined): JsonValue[] {
  if (!Array.isArray(v)) throw new Error(`expected an array, got ${JSON.stringify(v)?.slice(0, 200)}`);
  return v;
}

/** Follows `next` from the first page and returns every record. */
export async function walk(sim: SimulatorHandle, path: string): Promise<{ records: JsonObject[]; pages: number }> {
  const records: JsonObject[] = [];
  let url: string | null = `${sim.url}${path}`;
  let pages = 0;
  while (url) {
    const res = await api(sim, url);
    if (res.status !== 200) throw new Error(`${url} → ${res.status} ${res.text}`);
    const page = obj(res.body);
    pages++;
    for (const r of arr(page['results'])) records.push(obj(r));
    url = typeof page['next'] === 'string' ? page['next'] : null;
  }
  return { records, pages };
}

export function idOf(r: JsonValue | undefined): number {
  return obj(r)['id'] as number;
}
