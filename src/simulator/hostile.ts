import type { JsonObject } from '../util/json.ts';

/**
 * A hostile or broken site (off by default), for the tests of grantflow's bounds: lists that never end, records
 * inventing field names on every page, a record nested past any sane depth, a report column named `__proto__`.
 */
export interface HostileOptions {
  /** The list at this path template (`/api/applications/`) never ends: see EndlessList. */
  readonly endless?: EndlessList;
  /** The last page of the list at this path template gains one record nested `depth` levels deep. */
  readonly deepRecord?: { readonly template: string; readonly depth: number };
  /** Every generated report's CSV gains a column headed `__proto__` (cells `proto <row>`). */
  readonly protoColumn?: boolean;
  /** Every record of the list at `template` gains a field of this name (value 1): control characters, say. */
  readonly forgedField?: { readonly template: string; readonly name: string };
  /** The list at `template` answers `status` with this body, sent as it is (escapes and line breaks included). */
  readonly errorBody?: { readonly template: string; readonly status: number; readonly body: string };
}

export interface EndlessList {
  readonly template: string;
  /**
   * Fields each record gains whose names no other record has (default 0), of `fieldChars` characters each
   * (default 100): the drift catalog sees them all as new.
   */
  readonly newFields?: number;
  readonly fieldChars?: number;
  /**
   * `count` of every page: a fixed number (10^9, say, or one the chain soon exceeds), or, by default, always one
   * page more than served so far, as a list growing while read would say.
   */
  readonly count?: number;
}

/** Ids of endless records start here: above any id a dataset gives, so none is a real record. */
export const endlessIdBase = 100_000_000;

/**
 * Page `page` of an endless list: records copied from the list's real rows (so they map as the stream's records
 * do), each under a new id and with its new fields, and a `next` link to the following page, always.
 */
export function endlessPage(
  endless: EndlessList,
  rows: readonly JsonObject[],
  page: number,
  perPage: number,
  link: (page: number) => string,
): JsonObject {
  const chars = endless.fieldChars ?? 100;
  const results: JsonObject[] = [];
  for (let i = 0; i < perPage; i++) {
    const n = (page - 1) * perPage + i;
    const record: JsonObject = { ...(rows[n % Math.max(1, rows.length)] ?? {}), id: endlessIdBase + n };
    for (let k = 0; k < (endless.newFields ?? 0); k++) {
      const name = `f${n}_${k}_`;
      record[name.padEnd(chars, 'x')] = k;
    }
    results.push(record);
  }
  return {
    count: endless.count ?? (page + 1) * perPage,
    next: link(page + 1),
    previous: page > 1 ? link(page - 1) : null,
    results,
  };
}

/** Stands in the page's JSON for the deep value (JSON.stringify cannot write one thousands of levels deep). */
const deepPlaceholder = '"__grantflow_sim_deep_value__"';

/** A record copied from `like`, with the id given and a member nested `depth` levels deep. */
export function deepRecord(like: JsonObject | undefined, id: number): JsonObject {
  return { ...like, id, deep: deepPlaceholder.slice(1, -1) };
}

/** The JSON text of a body holding `deepRecord`s, their deep member written out `depth` levels deep. */
export function deepJson(body: JsonObject, depth: number): string {
  const nested = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  return JSON.stringify(body).replace(deepPlaceholder, nested);
}
