import type { JsonObject } from '../util/json.ts';
import type { Dataset } from './dataset.ts';
import type { HostileOptions } from './hostile.ts';
import type { ScaleName } from './scales.ts';
import type { AnswerShape } from './task-answers.ts';

/** Rows of a list served beside the built-in streams: the same rows always, or per parent id (undefined: 404). */
export type ExtraListRows = readonly JsonObject[] | ((parentId: number) => readonly JsonObject[] | undefined);

export type ListStyle = 'envelope' | 'bare';
export type PerPageOverMax = 'cap' | 'reject';
export type FaultKind = '5xx' | 'truncate' | 'reset' | 'latency';

export interface FaultOptions {
  /** Share of `/api/` requests that get a fault, 0..1. */
  readonly rate: number;
  /** Which faults to draw from (uniformly). Default: all four. */
  readonly kinds?: readonly FaultKind[];
  /** Added delay of a `latency` fault: fixed part and random jitter (ms). Defaults 500 and 500. */
  readonly latencyMs?: number;
  readonly jitterMs?: number;
  /** Seed of the fault sequence (default: the dataset seed). */
  readonly seed?: number;
}

export interface LatencyOptions {
  /** Added to every `/api/` request. */
  readonly ms: number;
  readonly jitterMs?: number;
}

export interface Features {
  readonly financialManagement: boolean;
  readonly eligibility: boolean;
}

export interface SimulatorOptions {
  readonly host?: string;
  /** 0 (default) picks a free port. */
  readonly port?: number;
  readonly scale?: ScaleName;
  readonly seed?: number;
  /** Serve this dataset instead of generating one. */
  readonly dataset?: Dataset;
  /** Requests per second per client (credential set); sliding 1 s window. Default 5; 0 disables. */
  readonly rate?: number;
  /**
   * Send `Retry-After` with 429 responses: `true` for 1 second, or a number of seconds (a site that asks for a long
   * pause). Default false (the spec does not promise the header).
   */
  readonly retryAfter?: boolean | number;
  readonly perPageDefault?: number;
  /** per_page above this is clamped (or refused, see perPageOverMax). Default 100. */
  readonly perPageMax?: number;
  /** What a per_page above perPageMax gets: `cap` (default) pages of perPageMax, `reject` a 400. */
  readonly perPageOverMax?: PerPageOverMax;
  /** Default list style; `bare` returns every row as a JSON array, unpaginated. */
  readonly listStyle?: ListStyle;
  /** Per path template, e.g. `{ '/api/programs/': 'bare' }`. */
  readonly listStyleByEndpoint?: Readonly<Record<string, ListStyle>>;
  /** Access token lifetime. Default 7200. */
  readonly tokenTtlSeconds?: number;
  /** The admin's permission set; default: every permission (see ALL_PERMISSIONS). */
  readonly permissions?: readonly string[];
  readonly features?: Partial<Features>;
  readonly faults?: FaultOptions;
  readonly latency?: LatencyOptions;
  /** Schema drift: records gain fields the spec does not list (see drift.ts). Default false. */
  readonly drift?: boolean;
  /** How task answers are served: `wrapped` {label, response} as the real service does (default), or `bare` (spec 2.5). */
  readonly answerShape?: AnswerShape;
  /**
   * Lists served beside the built-in streams, by path as a stream declares it (`{parent}` for a fan-out list): for a
   * stream a test adds in a catalog of its own (`buildStreamCatalog`). Same as `control.addList` for each entry.
   */
  readonly extraLists?: Readonly<Record<string, ExtraListRows>>;
  /** A hostile or broken site (see hostile.ts); default none. */
  readonly hostile?: HostileOptions;
}

export const ALL_PERMISSIONS = [
  'View Applications',
  'Application Create',
  'Create Applications',
  'Delete Applications',
  'Assign reviews',
  'Custom fields',
  'Financial Management',
  'View/Edit Funds',
  'Award Applications',
  'View users',
  'Manually add users',
  'Assume role',
  'Delete users',
  'Reports',
  'Create programs',
  'Edit program settings',
  'Delete program',
] as const;

/** The mutable run-time settings (changed through `control`). */
export interface SimConfig {
  rate: number;
  /** Seconds of `Retry-After` on a 429; 0 sends none. */
  retryAfterSeconds: number;
  perPageDefault: number;
  perPageMax: number;
  perPageOverMax: PerPageOverMax;
  listStyle: ListStyle;
  listStyleByEndpoint: Record<string, ListStyle>;
  permissions: Set<string>;
  features: Features;
  faults: FaultOptions;
  latency: LatencyOptions;
  answerShape: AnswerShape;
  hostile: HostileOptions;
}

export function configFrom(options: SimulatorOptions): SimConfig {
  return {
    rate: options.rate ?? 5,
    retryAfterSeconds: retryAfterSeconds(options.retryAfter ?? false),
    perPageDefault: options.perPageDefault ?? 25,
    perPageMax: options.perPageMax ?? 100,
    perPageOverMax: options.perPageOverMax ?? 'cap',
    listStyle: options.listStyle ?? 'envelope',
    listStyleByEndpoint: { ...options.listStyleByEndpoint },
    permissions: new Set(options.permissions ?? ALL_PERMISSIONS),
    features: { financialManagement: true, eligibility: true, ...options.features },
    faults: options.faults ?? { rate: 0 },
    latency: options.latency ?? { ms: 0 },
    answerShape: options.answerShape ?? 'wrapped',
    hostile: { ...options.hostile },
  };
}

/** `Retry-After` seconds for a `retryAfter` setting: true is 1 s, false none. */
export function retryAfterSeconds(setting: boolean | number): number {
  if (typeof setting === 'boolean') return setting ? 1 : 0;
  if (!(setting >= 0)) throw new RangeError('retryAfter must be true, false or a number of seconds >= 0');
  return setting;
}
