/**
 * The baseline a user has today: a serial crawler with plain fetch — one request at a time, no throttle, the
 * site's default per_page, a 1 s sleep after a 429, everything re-downloaded on every run.
 * CLI: node --import tsx bench/naive-crawler.ts <site url> <access token> [list path ...]
 */
export interface CrawlStats {
  requests: number;
  rateLimited: number;
  records: number;
  ms: number;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export async function crawl(site: string, token: string, lists: readonly string[]): Promise<CrawlStats> {
  const stats: CrawlStats = { requests: 0, rateLimited: 0, records: 0, ms: 0 };
  const started = performance.now();
  const get = async (url: string): Promise<{ status: number; body: Json }> => {
    for (;;) {
      stats.requests++;
      const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      const body = (await res.json()) as Json;
      if (res.status !== 429) return { status: res.status, body };
      stats.rateLimited++;
      await new Promise((r) => setTimeout(r, 1000));
    }
  };
  const walk = async (path: string): Promise<Json[]> => {
    const out: Json[] = [];
    let url: string | null = `${site}${path}`;
    while (url) {
      const { status, body } = await get(url);
      if (status !== 200) break;
      if (Array.isArray(body)) return body;
      if (body && typeof body === 'object' && 'results' in body && Array.isArray(body.results)) {
        out.push(...body.results);
        url = typeof body.next === 'string' ? body.next : null;
      } else return [body];
    }
    return out;
  };
  for (const path of lists) {
    const rows = await walk(path);
    stats.records += rows.length;
    // Per-organization endpoints, like grantflow's fan-out.
    if (path === '/api/organizations/')
      for (const org of rows)
        if (org && typeof org === 'object' && !Array.isArray(org))
          for (const sub of ['members', 'teams', 'eligibility'])
            stats.records += (await walk(`/api/organizations/${String(org.id)}/${sub}/`)).length;
    if (path === '/api/applications/' && process.env.NAIVE_FAN_OUT_APPLICATIONS === '1')
      for (const app of rows)
        if (app && typeof app === 'object' && !Array.isArray(app))
          for (const sub of ['stages', 'tasks', 'notes'])
            stats.records += (await walk(`/api/applications/${String(app.id)}/${sub}/`)).length;
  }
  stats.ms = performance.now() - started;
  return stats;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [site, token, ...lists] = process.argv.slice(2);
  if (!site || !token) throw new Error('usage: naive-crawler <site> <token> [list path ...]');
  console.log(JSON.stringify(await crawl(site, token, lists.length > 0 ? lists : ['/api/programs/'])));
}
