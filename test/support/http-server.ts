import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { writeFile } from 'node:fs/promises';
import type { Credentials, CredentialStore } from '../../src/credentials/types.ts';

export interface Arrival {
  readonly t: number;
  readonly method: string;
  readonly path: string;
  readonly auth: string | undefined;
  readonly body: string;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, arrival: Arrival) => void | Promise<void>;

export interface TestServer {
  readonly url: string;
  readonly arrivals: Arrival[];
  /** Most requests in flight at the server at once. */
  readonly maxInFlight: () => number;
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1:0 that records when each request arrived (server side). */
export async function startServer(handler: Handler): Promise<TestServer> {
  const arrivals: Arrival[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const server: Server = createServer((req, res) => {
    const t = performance.now();
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let done = false;
    const finish = () => {
      if (!done) {
        done = true;
        inFlight--;
      }
    };
    res.on('close', finish);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const arrival: Arrival = {
        t,
        method: req.method ?? '',
        path: req.url ?? '',
        auth: req.headers.authorization,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      arrivals.push(arrival);
      Promise.resolve(handler(req, res, arrival)).catch((e: unknown) => {
        res.statusCode = 500;
        res.end(String(e));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    maxInFlight: () => maxInFlight,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A handler answering 429 to a request that arrives while `limit` accepted ones arrived within the last second (a
 * strict sliding window, as a site counting per client), `ok` to the others. A request arrives `transitMs` after it
 * was sent, as over a slower route. When it was sent is `sentAt` (by default, when this server read it): a server in
 * the test's own process reads a request whenever the shared event loop gets to it, a delay a remote server would not
 * add, so a test of the client's pacing counts from the client's own write (`socketWrites`).
 * `seen` lists when each request arrived; `rejected` counts the 429s.
 */
export function strictWindow(
  limit: number,
  ok: Handler,
  options: { transitMs?: (arrival: Arrival) => number; sentAt?: (arrival: Arrival) => number } = {},
): { handler: Handler; seen: number[]; rejected: () => number } {
  const accepted: number[] = [];
  const seen: number[] = [];
  let rejected = 0;
  return {
    handler: async (req, res, arrival) => {
      const transit = options.transitMs?.(arrival) ?? 0;
      const t = (options.sentAt?.(arrival) ?? arrival.t) + transit;
      if (transit > 0) await new Promise((r) => setTimeout(r, transit));
      seen.push(t);
      // Arrival times need not come in order (a late one is handled after later ones): count by time, not by turn.
      if (accepted.filter((a) => a > t - 1000 && a <= t).length >= limit) {
        rejected++;
        json(res, 429, { detail: 'rate limited' }, { 'retry-after': '1' });
        return;
      }
      accepted.push(t);
      return ok(req, res, arrival);
    },
    seen,
    rejected: () => rejected,
  };
}

/**
 * When this process's undici clients wrote each request (by path, the last write of a path), as undici's diagnostics
 * channel reports it: the moment a remote server would start to count the request. `stop` unsubscribes.
 */
export function socketWrites(): { at: (path: string) => number | undefined; stop: () => void } {
  const times = new Map<string, number>();
  const onSend = (message: unknown): void => {
    const { request } = message as { request: { path: string } };
    times.set(request.path, performance.now());
  };
  subscribe('undici:client:sendHeaders', onSend);
  return { at: (path) => times.get(path), stop: () => unsubscribe('undici:client:sendHeaders', onSend) };
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export const testCreds: Credentials = {
  client_id: 'client-id-0001',
  client_secret: 'client-secret-s3cr3t-value',
  access_token: 'access-token-AAAA-0001',
  refresh_token: 'refresh-token-RRRR-0001',
};

/** An in-memory store that logs saves, optionally slowly, into a shared event log. */
export class MemoryStore implements CredentialStore {
  readonly description = 'test credential store';
  saves: Credentials[] = [];
  constructor(
    public current: Credentials = testCreds,
    private readonly onSave?: (c: Credentials) => Promise<void> | void,
  ) {}
  async load(): Promise<Credentials> {
    return this.current;
  }
  async save(c: Credentials): Promise<void> {
    await this.onSave?.(c);
    this.saves.push(c);
    this.current = c;
  }
}

export async function writeCredsFile(path: string, c: unknown, mode = 0o600): Promise<void> {
  await writeFile(path, typeof c === 'string' ? c : JSON.stringify(c), { mode });
}

/** Largest number of arrivals inside any window [t, t + windowMs). */
export function maxInWindow(times: readonly number[], windowMs = 1000): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0; i < sorted.length; i++) {
    let j = i;
    while (j < sorted.length && sorted[j]! - sorted[i]! < windowMs) j++;
    best = Math.max(best, j - i);
  }
  return best;
}
