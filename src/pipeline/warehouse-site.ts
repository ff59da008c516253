import { ConfigError } from '../util/errors.ts';
import { isJsonObject } from '../util/json.ts';
import type { RunRecord } from '../warehouse/types.ts';

/**
 * One warehouse holds one site. Two sites share ids (application 1 exists on both), so a second site's loads would
 * overwrite the first's rows by key, its complete scans soft-delete the first's other rows, its fan-out would skip
 * parents whose change markers happen to match, and its sync would resume the first site's killed run, reporting
 * streams of the other site as "already done". So every run records its site (summary.site) and a sync of another
 * site is refused before it writes anything (exit 2).
 */

/** The site a run record names; undefined for runs of versions that did not record it. */
export function siteOfRun(run: RunRecord | undefined): string | undefined {
  const site = isJsonObject(run?.summary) ? run.summary.site : undefined;
  return typeof site === 'string' ? site : undefined;
}

/** The scheme (a site moved to https), host case, a default port and trailing slashes do not make another site. */
function normalised(site: string): string {
  try {
    const url = new URL(site);
    return `${url.host}${url.pathname.replace(/\/+$/, '')}`;
  } catch {
    return site.replace(/\/+$/, '');
  }
}

/**
 * Refuses a sync of `site` into a warehouse whose last run synced another one, unless `siteMoved` says the site moved
 * to this address (its ids and data are the same).
 */
export function checkWarehouseSite(
  last: RunRecord | undefined,
  site: string,
  siteMoved: boolean,
  warehouse: string,
): void {
  const held = siteOfRun(last);
  if (held === undefined || siteMoved || normalised(held) === normalised(site)) return;
  throw new ConfigError(
    `the warehouse ${warehouse} holds site ${held} (run ${last?.runId ?? '?'}), not ${site}: a second site's rows ` +
      "would overwrite and soft-delete the first one's (their ids collide); sync this site into another --warehouse " +
      `(or --schema), or, if ${held} moved to ${site}, run 'grantflow sync --site-moved' once`,
  );
}
