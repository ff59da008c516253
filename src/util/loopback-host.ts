/**
 * True for 127.0.0.0/8, ::1 and localhost: the only places secrets may go over plain HTTP. A name under .localhost
 * is not one of them: a resolver may send it anywhere.
 */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}
