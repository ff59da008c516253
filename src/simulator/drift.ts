import type { JsonObject, JsonValue } from '../util/json.ts';
import type { Dataset } from './dataset.ts';

/**
 * Schema drift (off by default): every JSON record a GET answers gains fields the spec does not list, some holding
 * user references, a few of users that appear nowhere else, and a program reference. Deterministic in the record's
 * id, so a record read twice is the same record. What was added is recorded, for tests to compare a load with.
 */

/** The unlisted paths added to every record (dotted; a reference counts as one field). */
export const driftPaths = [
  'drift_owner',
  'extra.label',
  'extra.related_program',
  'extra.reviewed_by',
  'extra.score',
  'extra.watchers',
] as const;

/** Ids of the users only drift mentions: far above any id the dataset gives. */
const DRIFT_USER_BASE = 900_000_000;
const DRIFT_USERS = 7;

export interface DriftReport {
  /** Per path template served (e.g. `/api/applications/`), the unlisted paths its records gained. */
  readonly paths: Readonly<Record<string, readonly string[]>>;
  /** Every user id placed in an added field, sorted. */
  readonly userIds: readonly number[];
  /** Those of them no other part of the site knows (not in the dataset's users), sorted. */
  readonly driftOnlyUserIds: readonly number[];
  /** Records decorated so far. */
  readonly records: number;
}

function driftUser(n: number): JsonObject {
  const id = DRIFT_USER_BASE + n;
  return { id, first_name: `Drift${n}`, last_name: 'Only', email: `drift.only.${n}@example.org` };
}

export class Drift {
  enabled: boolean;
  private readonly templates = new Map<string, Set<string>>();
  private readonly users = new Set<number>();
  private readonly driftOnly = new Set<number>();
  private records = 0;
  private userList: { size: number; list: JsonObject[] } = { size: -1, list: [] };

  constructor(enabled = false) {
    this.enabled = enabled;
  }

  /** The body of a 200 GET answer with drift added to each record (a copy; the dataset is left alone). */
  decorateBody(ds: Dataset, template: string, body: JsonValue | undefined): JsonValue | undefined {
    if (!this.enabled || body === undefined || body === null || typeof body !== 'object') return body;
    if (Array.isArray(body)) return body.map((r) => this.decorate(ds, template, r));
    const results = body['results'];
    if (Array.isArray(results) && 'count' in body)
      return { ...body, results: results.map((r) => this.decorate(ds, template, r)) };
    return this.decorate(ds, template, body);
  }

  private decorate(ds: Dataset, template: string, row: JsonValue): JsonValue {
    if (row === null || typeof row !== 'object' || Array.isArray(row)) return row;
    const seed = typeof row['id'] === 'number' ? row['id'] : this.records;
    const users = this.usersOf(ds);
    const reviewer = users.length > 0 ? users[seed % users.length]! : null;
    const programs = ds.programs.rows;
    const program = programs.length > 0 ? programs[seed % programs.length]! : null;
    const owner = driftUser(seed % DRIFT_USERS);
    const watchers = [driftUser((seed + 1) % DRIFT_USERS), driftUser((seed + 3) % DRIFT_USERS)];
    this.records++;
    let paths = this.templates.get(template);
    if (!paths) this.templates.set(template, (paths = new Set()));
    for (const p of driftPaths) paths.add(p);
    for (const u of [owner, ...watchers]) {
      this.users.add(u['id'] as number);
      this.driftOnly.add(u['id'] as number);
    }
    if (reviewer) this.users.add(reviewer['id'] as number);
    return {
      ...row,
      drift_owner: owner,
      extra: {
        score: (seed * 37) % 100,
        label: `drift ${seed}`,
        reviewed_by: reviewer ? { ...reviewer } : null,
        related_program: program ? { id: program['id']!, name: program['name']! } : null,
        watchers,
      },
    };
  }

  /** The dataset's user references, listed again only when users were added. */
  private usersOf(ds: Dataset): JsonObject[] {
    if (this.userList.size !== ds.users.size)
      this.userList = { size: ds.users.size, list: [...ds.users.values()].map((u) => ({ ...u.ref })) };
    return this.userList.list;
  }

  report(): DriftReport {
    const sorted = (s: Set<number>): number[] => [...s].sort((a, b) => a - b);
    return {
      paths: Object.fromEntries([...this.templates].map(([t, s]) => [t, [...s].sort()])),
      userIds: sorted(this.users),
      driftOnlyUserIds: sorted(this.driftOnly),
      records: this.records,
    };
  }
}
