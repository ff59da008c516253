import type { JsonObject, JsonValue } from '../util/json.ts';
import type { Dataset } from './dataset.ts';
import type { Features, SimConfig } from './options.ts';

export interface RouteContext {
  readonly ds: Dataset;
  readonly config: SimConfig;
  readonly params: Readonly<Record<string, number>>;
  readonly query: URLSearchParams;
  readonly body: JsonValue | undefined;
}

/** A handler answers with a response, or with rows that the server filters, orders and paginates. */
export type RouteResult =
  | { readonly status: number; readonly body?: JsonValue }
  /** A file sent as it is (a report download). */
  | { readonly status: number; readonly file: { readonly contentType: string; readonly body: Buffer } }
  | { readonly list: readonly JsonObject[]; readonly desc?: boolean; readonly filters?: readonly string[] };

export interface Route {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** e.g. `/api/applications/{id}/tasks/{task_id}/`; the counts use it as the key. */
  readonly template: string;
  /** Every permission listed is needed (403 otherwise). */
  readonly permissions?: readonly string[];
  /** A disabled feature answers 403 (financial management) or 404 (eligibility). */
  readonly feature?: keyof Features;
  readonly handler: (ctx: RouteContext) => RouteResult;
}

export interface RouteMatch {
  readonly route: Route;
  readonly params: Record<string, number>;
}

export class Router {
  private readonly compiled: { route: Route; segments: string[] }[] = [];

  constructor(routes: readonly Route[]) {
    for (const route of routes) this.add(route);
  }

  /** A route matched after the ones before it (the simulator's extra lists are added while it runs). */
  add(route: Route): void {
    this.compiled.push({ route, segments: route.template.split('/') });
  }

  /** The template of a path regardless of method (for counting), or undefined. */
  templateOf(path: string): string | undefined {
    return this.find(path, undefined)?.route.template;
  }

  match(method: string, path: string): RouteMatch | 'method_not_allowed' | undefined {
    const found = this.find(path, method);
    if (found) return found;
    return this.find(path, undefined) ? 'method_not_allowed' : undefined;
  }

  private find(path: string, method: string | undefined): RouteMatch | undefined {
    const parts = path.split('/');
    outer: for (const { route, segments } of this.compiled) {
      if (method !== undefined && route.method !== method) continue;
      if (segments.length !== parts.length) continue;
      const params: Record<string, number> = {};
      for (let i = 0; i < segments.length; i++) {
        const seg = segments[i] as string;
        const part = parts[i] as string;
        if (seg.startsWith('{')) {
          if (!/^\d{1,15}$/.test(part)) continue outer;
          params[seg.slice(1, -1)] = Number(part);
        } else if (seg !== part) continue outer;
      }
      return { route, params };
    }
    return undefined;
  }
}

export const notFound = (what = 'Not found.'): RouteResult => ({ status: 404, body: { detail: what } });
export const badRequest = (body: JsonObject): RouteResult => ({ status: 400, body });
export const ok = (body: JsonValue, status = 200): RouteResult => ({ status, body });
export const noContent: RouteResult = { status: 204 };
