import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
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
 * strict sliding window, as a site counting per client), `ok` to the others. `transitMs` holds a request back before
 * it counts, as a slower route or a connection being opened would: it is seen that much later than it was sent.
 * `seen` lists when each request was counted; `rejected` counts the 429s.
 */
export function strictWindow(
  limit: number,
  ok: Handler,
  transitMs: (arrival: Arrival) => number = () => 0,
): { handler: Handler; seen: number[]; rejected: () => number } {
  const accepted: number[] = [];
  const seen: number[] = [];
  let rejected = 0;
  return {
    handler: async (req, res, arrival) => {
      const transit = transitMs(arrival);
      if (transit > 0) await new Promise((r) => setTimeout(r, transit));
      const t = performance.now();
      seen.push(t);
      while (accepted.length > 0 && accepted[0]! <= t - 1000) accepted.shift();
      if (accepted.length >= limit) {
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
