import type { TableDef } from '../normalize/table-def.ts';
import type { StreamCatalog } from '../streams/catalog.ts';
import type { Warehouse } from '../warehouse/types.ts';
import { ident } from '../warehouse/values.ts';
import { warehouseTables, type WarehouseTable } from './warehouse-tables.ts';

/** Rows a purge removes from one table (never their values). */
export interface PurgeCount {
  readonly table: string;
  readonly rows: number;
}

/** What a purge removes, or a dry run would: per table, `<table>_history` companions apart, and the persons. */
export interface PurgeCounts {
  /** Rows soft-deleted at or before this time go. */
  readonly cutoff: string;
  /** Tables with rows to remove, in catalog order. */
  readonly tables: readonly PurgeCount[];
  /** History companions (`<table>_history`) with rows of those records. */
  readonly history: readonly PurgeCount[];
  /** Users referenced by purged rows alone: their row (names, email) goes too. */
  readonly persons: number;
}

/** The keys of the records a purge removed, per stream, for pruning raw pages (raw-pruning.ts). */
export interface PurgedRecords {
  /** `<id>`, or `<parent id>/<id>` for a fan-out stream whose rows are keyed within their parent. */
  readonly keys: ReadonlyMap<string, ReadonlySet<string>>;
  /** Ids of the purged records of each stream, as a fan-out child's `parentId`. */
  readonly parents: ReadonlyMap<string, ReadonlySet<string>>;
}

export interface PurgeResult extends PurgeCounts {
  readonly records: PurgedRecords;
}

/** The moment before which soft-deleted rows go: `now` less the window (0: every soft-deleted row). */
export function purgeCutoff(windowMs: number, now: Date): string {
  return new Date(now.getTime() - windowMs).toISOString();
}

const historyOf = (table: string): string => `${table}_history`;
const isCore = (t: TableDef): boolean => t.kind === 'entity' || t.kind === 'dimension' || t.kind === 'bridge';

/** What the purge reads: the core tables present with `_deleted_at`, their history companions, their user references. */
interface Scope {
  readonly tables: readonly { def: TableDef; at: WarehouseTable }[];
  readonly history: ReadonlyMap<string, WarehouseTable>;
  readonly users: WarehouseTable | undefined;
  /** Every (table, column) present that holds a user id. */
  readonly userRefs: readonly { at: WarehouseTable; column: string }[];
  readonly purged: (alias: string) => string;
  readonly live: (alias: string) => string;
}

async function scopeOf(warehouse: Warehouse, catalog: StreamCatalog, cutoff: string): Promise<Scope> {
  const present = new Map((await warehouseTables(warehouse)).filter((t) => !t.model).map((t) => [t.table, t] as const));
  const tables = catalog.tables
    .filter(isCore)
    .map((def) => ({ def, at: present.get(def.name) }))
    .filter(
      (t): t is { def: TableDef; at: WarehouseTable } => t.at !== undefined && t.at.columns.includes('_deleted_at'),
    );
  const history = new Map<string, WarehouseTable>();
  for (const { def } of tables) {
    const companion = present.get(historyOf(def.name));
    if (companion && def.primaryKey.every((k) => companion.columns.includes(k))) history.set(def.name, companion);
  }
  const userRefs = tables.flatMap(({ def, at }) =>
    def.columns
      .filter((c) => c.references?.table === 'users' && at.columns.includes(c.name))
      .map((c) => ({ at, column: c.name })),
  );
  const at = `CAST('${cutoff}' AS TIMESTAMPTZ)`;
  return {
    tables,
    history,
    users: present.get('users'),
    userRefs,
    purged: (alias) => `${alias}._deleted_at <= ${at}`,
    live: (alias) => `(${alias}._deleted_at IS NULL OR ${alias}._deleted_at > ${at})`,
  };
}

/** The users whose id only purged rows hold: `WHERE` over `users u`, or null when nothing references users. */
function orphanPersons(scope: Scope): string | null {
  if (scope.users === undefined || scope.userRefs.length === 0) return null;
  const refs = (rows: (alias: string) => string): string[] =>
    scope.userRefs.map(
      ({ at, column }) => `EXISTS (SELECT 1 FROM ${at.qualified} r WHERE ${rows('r')} AND r.${ident(column)} = u.id)`,
    );
  return `(${refs(scope.purged).join(' OR ')}) AND NOT (${refs(scope.live).join(' OR ')})`;
}

/** The rows of `history` whose record is purged from `table`. */
function historyRows(scope: Scope, def: TableDef, table: WarehouseTable): string {
  const match = def.primaryKey.map((k) => `t.${ident(k)} = h.${ident(k)}`).join(' AND ');
  return `EXISTS (SELECT 1 FROM ${table.qualified} t WHERE ${scope.purged('t')} AND ${match})`;
}

const count = async (warehouse: Warehouse, sql: string): Promise<number> =>
  Number((await warehouse.query(sql))[0]?.n ?? 0);

/**
 * Counts what a purge of rows soft-deleted at or before `cutoff` removes (`grantflow purge --dry-run`): rows per
 * table, rows of `<table>_history` companions, persons referenced by those rows alone. Reads only; never values.
 */
export async function countPurge(warehouse: Warehouse, catalog: StreamCatalog, cutoff: string): Promise<PurgeCounts> {
  const scope = await scopeOf(warehouse, catalog, cutoff);
  const tables: PurgeCount[] = [];
  const history: PurgeCount[] = [];
  for (const { def, at } of scope.tables) {
    const rows = await count(warehouse, `SELECT count(*) AS n FROM ${at.qualified} t WHERE ${scope.purged('t')}`);
    if (rows > 0) tables.push({ table: def.name, rows });
    const companion = scope.history.get(def.name);
    if (companion && rows > 0) {
      const n = await count(
        warehouse,
        `SELECT count(*) AS n FROM ${companion.qualified} h WHERE ${historyRows(scope, def, at)}`,
      );
      if (n > 0) history.push({ table: companion.table, rows: n });
    }
  }
  const orphans = orphanPersons(scope);
  const persons =
    orphans === null || scope.users === undefined
      ? 0
      : await count(warehouse, `SELECT count(*) AS n FROM ${scope.users.qualified} u WHERE ${orphans}`);
  return { cutoff, tables, history, persons };
}

/** The keys of the rows of each stream's own table that the purge removes, for the raw pages. */
async function purgedRecords(warehouse: Warehouse, catalog: StreamCatalog, scope: Scope): Promise<PurgedRecords> {
  const keys = new Map<string, Set<string>>();
  const parents = new Map<string, Set<string>>();
  const byTable = new Map(scope.tables.map((t) => [t.def.name, t]));
  for (const stream of catalog.streams) {
    const mapping = catalog.mappings[stream.name];
    const owned = mapping?.owns[0];
    const table = owned === undefined ? undefined : byTable.get(owned.table);
    if (owned === undefined || table === undefined) continue;
    // The column holding the record's own `id` (task_id for application tasks), and its parent's, when keyed within it.
    const idColumn = table.def.columns.find((c) => c.name === 'id' || c.source === 'id')?.name;
    if (idColumn === undefined) continue;
    const parentColumn = stream.parent !== undefined ? owned.parentColumn : undefined;
    const select =
      parentColumn === undefined ? `t.${ident(idColumn)}` : `t.${ident(parentColumn)}, t.${ident(idColumn)}`;
    const rows = await warehouse.query(`SELECT ${select} FROM ${table.at.qualified} t WHERE ${scope.purged('t')}`);
    if (rows.length === 0) continue;
    keys.set(
      stream.name,
      new Set(rows.map((r) => (parentColumn === undefined ? '' : `${String(r[parentColumn])}/`) + String(r[idColumn]))),
    );
    if (parentColumn === undefined) parents.set(stream.name, new Set(rows.map((r) => String(r[idColumn]))));
  }
  return { keys, parents };
}

/**
 * Removes every row soft-deleted at or before `cutoff` from the core tables, the rows of the same records in their
 * `<table>_history` companions, and the users referenced by those rows alone (so a person the site deleted keeps no
 * name or email here), all in one transaction. Rows are removed rather than blanked: a blanked row would still tell
 * that a person applied, when, and with what score. Returns the counts and the keys of the records removed, for the
 * raw pages (raw-pruning.ts).
 */
export async function applyPurge(warehouse: Warehouse, catalog: StreamCatalog, cutoff: string): Promise<PurgeResult> {
  const counts = await countPurge(warehouse, catalog, cutoff);
  const scope = await scopeOf(warehouse, catalog, cutoff);
  const records = await purgedRecords(warehouse, catalog, scope);
  if (counts.tables.length === 0) return { ...counts, records };
  const statements: string[] = [];
  const orphans = orphanPersons(scope);
  if (orphans !== null && scope.users !== undefined && counts.persons > 0) {
    // First, while the purged rows still say whom they name.
    const usersHistory = scope.history.get('users');
    if (usersHistory)
      statements.push(
        `DELETE FROM ${usersHistory.qualified} AS h WHERE h.id IN (SELECT u.id FROM ${scope.users.qualified} u WHERE ${orphans})`,
      );
    statements.push(`DELETE FROM ${scope.users.qualified} AS u WHERE ${orphans}`);
  }
  for (const { def, at } of scope.tables) {
    if (!counts.tables.some((t) => t.table === def.name)) continue;
    const companion = scope.history.get(def.name);
    if (companion) statements.push(`DELETE FROM ${companion.qualified} AS h WHERE ${historyRows(scope, def, at)}`);
  }
  for (const { def, at } of scope.tables) {
    if (counts.tables.some((t) => t.table === def.name))
      statements.push(`DELETE FROM ${at.qualified} AS t WHERE ${scope.purged('t')}`);
  }
  await warehouse.execInTransaction(statements, 'users', 'purging rows deleted on the site');
  return { ...counts, records };
}

/** One line for a summary: what went, counted, never a value. */
export function purgeLine(counts: PurgeCounts, applied: boolean): string {
  const rows = counts.tables.reduce((n, t) => n + t.rows, 0);
  if (rows === 0) return `purge: no row soft-deleted at or before ${counts.cutoff}`;
  const history = counts.history.reduce((n, t) => n + t.rows, 0);
  const verb = applied ? 'removed' : 'would be removed';
  return (
    `purge: ${rows} rows soft-deleted at or before ${counts.cutoff} ${verb} (${counts.tables.map((t) => `${t.table} ${t.rows}`).join(', ')})` +
    (history > 0 ? `, with ${history} history rows` : '') +
    (counts.persons > 0 ? `, and ${counts.persons} persons only they named` : '')
  );
}
