import type { JsonObject } from '../util/json.ts';
import type { Route, Router } from './router.ts';

/**
 * Lists the site serves besides its own routes: an endpoint the spec does not list, served to show that grantflow
 * extracts one declared at run time (registerStream). Plain GET lists, paginated and styled as every list, needing no
 * permission. `rows` is read at each request, so a test changes what the list serves by changing the array.
 */
export function addExtraList(router: Router, path: string, rows: readonly JsonObject[]): void {
  if (!/^\/api\/[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*\/$/.test(path))
    throw new Error(`an extra list's path is /api/<name>/ without parameters; got "${path}"`);
  // A path the site serves is refused, so a test cannot shadow one of its routes (nor add the same list twice).
  if (router.templateOf(path) !== undefined) throw new Error(`${path} is already served`);
  const route: Route = { method: 'GET', template: path, handler: () => ({ list: rows }) };
  router.add(route);
}
