import { SiteHttpError, SiteResponseError } from '../source/index.ts';
import type { SiteClient } from '../source/types.ts';
import { ConfigError } from '../util/errors.ts';

/**
 * One cheap call before anything is written: proves the URL is the API (JSON, not a web page or a 404) and that the
 * credentials work (refreshing them if the access token expired). A wrong site is a configuration error (exit 2).
 */
export async function preflight(client: SiteClient): Promise<void> {
  try {
    await client.getJson('/api/programs/', { per_page: 1 });
  } catch (error) {
    if (error instanceof SiteResponseError) {
      throw new ConfigError(`${client.baseUrl} does not answer like the grant API (${error.problem}); check --site`, {
        cause: error,
      });
    }
    if (error instanceof SiteHttpError) {
      if (error.status === 404) {
        throw new ConfigError(
          `${client.baseUrl}/api/programs/ was not found (HTTP 404); check that --site is the site's base URL`,
          { cause: error },
        );
      }
      if (error.status === 401) {
        throw new ConfigError(
          `${client.baseUrl} rejected the credentials even after a token refresh (HTTP 401); check --site and the credentials`,
          { cause: error },
        );
      }
      // 403: programs hidden from this user is not fatal; the streams report what they cannot read.
      if (error.status === 403) return;
    }
    throw error;
  }
}
