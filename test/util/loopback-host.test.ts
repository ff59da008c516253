import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { checkBaseUrl, probeConnect } from '../../src/source/index.ts';
import { isLoopbackAddress, loopbackOnlyLookup } from '../../src/util/loopback-host.ts';

function lookup(hostname: string, all: boolean): Promise<{ code?: string; addresses: string[] }> {
  return new Promise((resolve) =>
    loopbackOnlyLookup(hostname, { all }, (err, address) =>
      resolve({
        code: err?.code,
        addresses: typeof address === 'string' ? [address] : address.map((a) => a.address),
      }),
    ),
  );
}

describe('plain http only to loopback', () => {
  it('refuses a name under .localhost, which a resolver may send anywhere', () => {
    expect(() => checkBaseUrl('http://foo.localhost:8080')).toThrow(/must use https/);
  });
  it('takes loopback addresses and localhost', () => {
    for (const url of ['http://127.0.0.1:8080', 'http://[::1]:8080', 'http://localhost:8080'])
      expect(checkBaseUrl(url).protocol).toBe('http:');
  });

  it('tells loopback addresses in any spelling from the others', () => {
    for (const a of ['127.0.0.1', '127.255.0.9', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1'])
      expect(isLoopbackAddress(a), a).toBe(true);
    for (const a of ['10.0.0.1', '128.0.0.1', '::2', '::ffff:10.0.0.1', 'fe80::1', 'localhost', ''])
      expect(isLoopbackAddress(a), a).toBe(false);
  });

  it('decides on the resolved address: a connection to one off this machine fails before a byte is sent', async () => {
    // An address is resolved as itself, so these need no DNS: the name check passed, the address is what counts.
    expect(await lookup('10.1.2.3', false)).toMatchObject({ code: 'ENOTLOOPBACK', addresses: [] });
    expect(await lookup('10.1.2.3', true)).toMatchObject({ code: 'ENOTLOOPBACK', addresses: [] });
    expect((await lookup('127.0.0.1', true)).addresses).toEqual(['127.0.0.1']);
    const local = await lookup('localhost', true);
    expect(local.code).toBeUndefined();
    expect(local.addresses.length).toBeGreaterThan(0);
    expect(local.addresses.every(isLoopbackAddress)).toBe(true);
  });

  it('still connects to a site on localhost', async () => {
    const server = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      await expect(probeConnect(`http://localhost:${port}`)).resolves.toBeUndefined();
    } finally {
      server.close();
    }
  });
});
