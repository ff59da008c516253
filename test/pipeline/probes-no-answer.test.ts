/**
 * The doctor's two site probes (the unauthenticated GET and the client check) against sites that accept the
 * connection and then give no HTTP answer: a socket closed at once is "cannot reach" (exit 1, try again later), and
 * an https URL on a plain-http port is the TLS verdict (exit 2, check --site). Real sockets on 127.0.0.1.
 */
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkClient } from '../../src/credentials/client-check.ts';
import { probeSiteWithoutCredentials } from '../../src/source/site-check.ts';
import { ConfigError, ExitCode, GrantflowError } from '../../src/util/errors.ts';
import { startServer, type TestServer } from '../support/http-server.ts';

let hangUp: Server;
let hangUpUrl: string;
let plain: TestServer;

beforeAll(async () => {
  // Accepts, then closes without a byte: the request fails after the connect probe passed.
  hangUp = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => hangUp.listen(0, '127.0.0.1', resolve));
  hangUpUrl = `http://127.0.0.1:${(hangUp.address() as AddressInfo).port}`;
  plain = await startServer((_req, res) => {
    res.end('{}');
  });
});

afterAll(async () => {
  await new Promise((resolve) => hangUp?.close(resolve));
  await plain?.close();
});

const client = { client_id: 'id', client_secret: 'secret' };
const probes = [
  ['the unauthenticated probe', (site: string) => probeSiteWithoutCredentials(site, 5_000)],
  ['the client check', (site: string) => checkClient(site, client, 'check the pair', 5_000)],
] as const;

describe.each(probes)('%s', (_name, probe) => {
  it('a site that hangs up is "cannot reach", exit 1, naming the URL asked', async () => {
    const error: unknown = await probe(hangUpUrl).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GrantflowError);
    expect(error).not.toBeInstanceOf(ConfigError);
    const { message, exitCode, code } = error as GrantflowError;
    expect(message).toMatch(new RegExp(`^cannot reach ${hangUpUrl}/api/\\S+ \\(.+\\); try again later$`));
    expect([exitCode, code]).toEqual([ExitCode.runFailed, 'site_unavailable']);
  });

  it('https on a plain-http port is the TLS verdict, exit 2, naming the origin', async () => {
    const site = plain.url.replace(/^http:/, 'https:');
    const error: unknown = await probe(site).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toMatch(
      new RegExp(`^${site} failed the TLS check \\(\\w+\\); check --site`),
    );
    expect((error as ConfigError).exitCode).toBe(ExitCode.usage);
  });
});
