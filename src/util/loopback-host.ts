import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';

/**
 * True for 127.0.0.0/8, ::1 and localhost: the only places secrets may go over plain HTTP. A name under .localhost
 * is not one of them: a resolver may send it anywhere. `localhost` itself is checked again where it is resolved
 * (`loopbackOnlyLookup`): a hosts file or resolver may send it elsewhere too.
 */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || isLoopbackAddress(h);
}

/** An IP address in 127.0.0.0/8 or ::1 (also written out in full, or as an IPv4-mapped IPv6 address). */
export function isLoopbackAddress(address: string): boolean {
  if (isIP(address) === 4) return address.startsWith('127.');
  if (isIP(address) !== 6) return false;
  // The URL parser writes an IPv6 address in its one short form: ::1, and ::ffff:7fxx:xxxx for 127.x.x.x.
  const short = new URL(`http://[${address}]`).hostname;
  return short === '[::1]' || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(short);
}

/** The error code of a connection `loopbackOnlyLookup` refused. */
export const notLoopbackCode = 'ENOTLOOPBACK';

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for sockets that may carry secrets over plain HTTP: resolves as Node does, then fails the connection
 * unless every address the name resolved to is a loopback one, so the check is made on where the bytes go.
 */
export function loopbackOnlyLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const off = addresses.filter((a) => !isLoopbackAddress(a.address));
    if (off.length > 0) {
      const error: NodeJS.ErrnoException = new Error(
        `${hostname} resolves to ${off.map((a) => a.address).join(', ')}, not to this machine: plain http is ` +
          'refused off this machine (use https://)',
      );
      error.code = notLoopbackCode;
      return callback(error, []);
    }
    if (options.all) return callback(null, addresses);
    const first = addresses[0];
    if (!first)
      return callback(Object.assign(new Error(`${hostname} resolves to no address`), { code: 'ENOTFOUND' }), []);
    callback(null, first.address, first.family);
  });
}
