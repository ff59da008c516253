import { readRoutes } from './read-routes.ts';
import { reportRoutes } from './report-routes.ts';
import type { Route } from './router.ts';
import { writeRoutes } from './write-routes.ts';

/** Every route of the simulated site's API (the token endpoints aside), in the order they are matched. */
export const simulatorRoutes: readonly Route[] = [...readRoutes, ...writeRoutes, ...reportRoutes];
