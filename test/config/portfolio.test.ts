/** A pipeline file listing "sites" (a portfolio): what it may say, and one clear line for what it may not. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/load-settings.ts';
import { readPortfolioSites, selectPortfolioSites, siteSchema } from '../../src/config/portfolio.ts';
import { ConfigError } from '../../src/util/errors.ts';
import { tempDir } from '../support/temp-dir.ts';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ path: dir, remove: cleanup } = await tempDir('grantflow-portfolio-config-'));
});
afterAll(async () => {
  await cleanup();
});

async function pipeline(content: unknown, name = 'p.json'): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify(content));
  return path;
}

const two = {
  sites: [
    { name: 'north', site: 'https://north.example.org/', credentials: 'creds/north.json' },
    { name: 'south', site: 'https://south.example.org' },
  ],
  rate: 3,
};

describe('a portfolio pipeline file', () => {
  it('lists its sites, credentials relative to its folder, and keeps its other settings for every site', async () => {
    const path = await pipeline(two);
    expect(await readPortfolioSites(path)).toEqual([
      { name: 'north', site: 'https://north.example.org', credentials: join(dir, 'creds/north.json') },
      { name: 'south', site: 'https://south.example.org' },
    ]);
    const settings = await loadSettings({}, { pipeline: path, env: {}, portfolio: true });
    expect(settings.rate).toBe(3);
    expect(siteSchema('north')).toBe('site_north');
  });

  it('is no portfolio without "sites"', async () => {
    expect(await readPortfolioSites(await pipeline({ rate: 3 }, 'one.json'))).toBeNull();
  });

  it.each([
    [[{ name: 'North', site: 'https://a.example' }], /sites\[0\]\.name.*lower-case/],
    [[{ name: 'a', site: 'ftp://a.example' }], /sites\[0\]\.site.*http/],
    [
      [
        { name: 'a', site: 'https://a.example' },
        { name: 'a', site: 'https://b.example' },
      ],
      /names site "a" twice/,
    ],
    [[{ name: 'portfolio', site: 'https://a.example' }], /the views'/],
    [[{ name: 'a', site: 'https://a.example', schema: 'x' }], /sites\[0\]/],
    [[], /at least one site/],
  ])('refuses a bad list of sites in one line: %j', async (sites, message) => {
    const path = await pipeline({ sites }, 'bad.json');
    const error = await readPortfolioSites(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  });

  it('is refused by a command that reads one site, and next to a setting that names one site', async () => {
    const path = await pipeline(two);
    await expect(loadSettings({}, { pipeline: path, env: {} })).rejects.toThrow(/lists "sites".*only sync and doctor/);
    const sites = (await readPortfolioSites(path)) ?? [];
    const withSite = await loadSettings(
      {},
      { pipeline: path, env: { GRANTFLOW_SITE: 'https://x.example' }, portfolio: true },
    );
    expect(() => selectPortfolioSites(sites, undefined, withSite)).toThrow(/GRANTFLOW_SITE.*cannot be used.*"sites"/);
    const withSchema = await loadSettings({ schema: 'x' }, { pipeline: path, env: {}, portfolio: true });
    expect(() => selectPortfolioSites(sites, undefined, withSchema)).toThrow(/--schema.*site_<name>/);
  });

  it('--sites picks some of them, and refuses a name the file does not list', async () => {
    const path = await pipeline(two);
    const sites = (await readPortfolioSites(path)) ?? [];
    const settings = await loadSettings({}, { pipeline: path, env: {}, portfolio: true });
    expect(selectPortfolioSites(sites, 'south', settings).map((s) => s.name)).toEqual(['south']);
    expect(() => selectPortfolioSites(sites, 'south,west', settings)).toThrow(/--sites names "west".*north, south/);
  });
});
