import { describe, expect, it } from 'vitest';
import { checkBaseUrl } from '../../src/source/index.ts';

describe('plain http only to loopback', () => {
  it('refuses a name under .localhost, which a resolver may send anywhere', () => {
    expect(() => checkBaseUrl('http://foo.localhost:8080')).toThrow(/must use https/);
  });
  it('takes loopback addresses and localhost', () => {
    for (const url of ['http://127.0.0.1:8080', 'http://[::1]:8080', 'http://localhost:8080'])
      expect(checkBaseUrl(url).protocol).toBe('http:');
  });
});
