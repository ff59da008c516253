import type { CellValue, TableDef } from '../normalize/table-def.ts';
import { allColumns, hasMetadata } from './ddl.ts';
import type { Cascade } from '../normalize/cascade.ts';
import type { CompleteScope, StagedMerge } from './types.ts';
import { ident, literal } from './values.ts';

/** Column of a staging table that orders appends, so the last staged row of a key wins. */
export const seqColumn = '_gf_seq';

/** Metadata columns the loader fills at merge time (from the CommitPlan), not staged. */
const loaderFilled = new Set(['_extracted_at', '_run_id', '_deleted_at', '_ref_only']);

/** Columns a staging table holds for `table` (own columns + `_raw`), in order. */
export function stagedColumns(table: TableDef): string[] {
  return allColumns(table)
    .map((c) => c.name)
    .filter((n) => !hasMetadata(table) || !loaderFilled.has(n));
}

export interface SqlStatement {
  readonly sql: string;
  readonly params: readonly CellValue[];
}

/**
 * How a dialect merges: Postgres by `INSERT ... ON CONFLICT` against its primary key; DuckDB, whose tables declare
 * no primary key (its ART indexes live in memory and slow every insert), by an UPDATE of the keys present and an
 * INSERT of the others, both hash joins against the de-duplicated staging rows.
 */
export type MergeStyle = 'on_conflict' | 'update_insert';

/**
 * Merge one staging table into its table by primary key, one staged row per key winning.
 * `replace` overwrites every column (un-deleting); `coalesce` fills only what the staged row has.
 */
export function mergeSql(
  table: TableDef,
  target: string,
  staging: string,
  mode: StagedMerge,
  plan: { runId: string; extractedAt: string },
  style: MergeStyle = 'on_conflict',
): SqlStatement[] {
  const staged = stagedColumns(table);
  const meta = hasMetadata(table);
  const pk = table.primaryKey;
  const params = meta ? [plan.extractedAt, plan.runId] : [];
  const insertCols = meta ? [...staged, '_extracted_at', '_run_id', '_deleted_at', '_ref_only'] : staged;
  // What the staged row brings for each column, the loader-filled metadata included.
  const incoming = new Map<string, string>(staged.map((c) => [c, `s.${ident(c)}`]));
  if (meta) {
    incoming.set('_extracted_at', 'CAST($1 AS TIMESTAMPTZ)');
    incoming.set('_run_id', 'CAST($2 AS TEXT)');
    incoming.set('_deleted_at', 'CAST(NULL AS TIMESTAMPTZ)');
    incoming.set('_ref_only', mode === 'coalesce' ? 'TRUE' : 'FALSE');
  }
  const selectList = insertCols.map((c) => incoming.get(c)!);
  const byRichness = mode === 'coalesce' && meta;
  const picked = pk.length === 0 ? staging : winners(staging, pk, byRichness, style);
  const source = `${picked} AS s`;
  const insert = `INSERT INTO ${target} AS t (${insertCols.map(ident).join(', ')})\nSELECT ${selectList.join(', ')} FROM ${source}`;
  if (pk.length === 0) return [{ sql: insert, params }];

  const pkSet = new Set(pk);
  const updatable = insertCols.filter((c) => !pkSet.has(c));
  if (style === 'on_conflict' && !byRichness) {
    const sets = updatable.map((c) => `${ident(c)} = ${updateExpr(c, mode, meta, `EXCLUDED.${ident(c)}`, 'FALSE')}`);
    const action = sets.length > 0 ? `UPDATE SET ${sets.join(', ')}` : 'NOTHING';
    return [{ sql: `${insert}\nON CONFLICT (${pk.map(ident).join(', ')}) DO ${action}`, params }];
  }
  // References merge by an UPDATE of the keys present and an INSERT of the others in both dialects: which of two
  // references wins is decided once per row in the source (below), which ON CONFLICT's per-column expressions
  // cannot share.
  const match = pk.map((c) => `t.${ident(c)} = s.${ident(c)}`).join(' AND ');
  const statements: SqlStatement[] = [];
  if (updatable.length > 0) {
    // A reference's precedence over the stored row is computed once per row, in the source, rather than inside
    // every column's expression: repeated per column (twice, with the change check) it made a statement of a
    // 40-column dimension ~30 KB of SQL that took DuckDB ~25 ms to plan even for a handful of rows.
    const updateSource = byRichness
      ? `(SELECT w.*, ${precedesExpr(table, 'w', 'stored', incoming.get('_extracted_at')!)} AS ${ident(richerColumn)} ` +
        `FROM ${picked} AS w JOIN ${target} AS stored ON ${pk.map((c) => `stored.${ident(c)} = w.${ident(c)}`).join(' AND ')}) AS s`
      : source;
    const richer = `s.${ident(richerColumn)}`;
    const values = updatable.map((c) => [c, updateExpr(c, mode, meta, incoming.get(c)!, richer)] as const);
    const sets = values.map(([c, v]) => `${ident(c)} = ${v}`);
    // References that would leave their row as it is are not written: the same user or stage is referenced in
    // every checkpoint of a run, and every row written is one DuckDB's next checkpoint rewrites. (Rows of the
    // entity's own stream are written as they come: comparing their wide rows would cost more than it saves.)
    const changed =
      mode === 'coalesce'
        ? ` AND (${values.map(([c, v]) => `${asComparable(table, c, `t.${ident(c)}`)} IS DISTINCT FROM ${asComparable(table, c, v)}`).join(' OR ')})`
        : '';
    statements.push({
      sql: `UPDATE ${target} AS t SET ${sets.join(', ')}\nFROM ${updateSource}\nWHERE ${match}${changed}`,
      params,
    });
  }
  statements.push({ sql: `${insert}\nWHERE NOT EXISTS (SELECT 1 FROM ${target} AS t WHERE ${match})`, params });
  return statements;
}

/**
 * The one staged row per key that merges. replace: the last staged row wins. coalesce: the richest reference wins
 * (longer source JSON, then md5 as a tiebreak both engines compute alike), so the result does not depend on the
 * order in which concurrent streams staged their references.
 */
function winners(staging: string, pk: readonly string[], byRichness: boolean, style: MergeStyle): string {
  const keys = pk.map(ident).join(', ');
  const seq = ident(seqColumn);
  const raw = `CAST(${ident('_raw')} AS TEXT)`;
  if (style === 'on_conflict') {
    const pick = byRichness ? `length(${raw}) DESC, md5(${raw}) DESC, ${seq} DESC` : `${seq} DESC`;
    return `(SELECT DISTINCT ON (${keys}) * FROM ${staging} ORDER BY ${keys}, ${pick})`;
  }
  // DuckDB: DISTINCT ON aggregates every (wide) column and cannot spill, so pick the winning sequence numbers
  // from the narrow key columns first, then semi-join the staged rows to them.
  const best = byRichness ? `arg_max(${seq}, (length(${raw}), md5(${raw}), ${seq}))` : `max(${seq})`;
  return `(SELECT * FROM ${staging} WHERE ${seq} IN (SELECT ${best} FROM ${staging} GROUP BY ${keys}))`;
}

/** `expr`, a value of `column`, in a form both engines can compare: Postgres's json type has no equality operator. */
function asComparable(table: TableDef, column: string, expr: string): string {
  const json = column === '_raw' || table.columns.some((c) => c.name === column && c.type === 'json');
  return json ? `CAST(${expr} AS TEXT)` : expr;
}

/** Column of a coalesce merge's source: whether the staged reference takes precedence over the stored row. */
const richerColumn = '_gf_richer';

/**
 * Whether the reference `stagedRow`, extracted at `stagedAt`, takes precedence over the row `storedRow`. References
 * that disagree on a value both have (a renamed user, stage or fund) are told apart by time: the one extracted later
 * wins, so a rename shows on the next run that reads a record naming it. References of one run, and references that
 * agree, are ordered by richness (longer source JSON, then the larger md5), so a re-load or a resumed run, whatever
 * order its streams commit in, leaves the row as it was.
 */
function precedesExpr(table: TableDef, stagedRow: string, storedRow: string, stagedAt: string): string {
  const s = `CAST(${stagedRow}._raw AS TEXT)`;
  const t = `CAST(${storedRow}._raw AS TEXT)`;
  const richer = `(length(${s}) > length(${t}) OR (length(${s}) = length(${t}) AND md5(${s}) > md5(${t})))`;
  const values = table.columns.filter((c) => !table.primaryKey.includes(c.name));
  if (values.length === 0) return richer;
  const value = (row: string, c: string) => asComparable(table, c, `${row}.${ident(c)}`);
  const disagree = values.map((c) => `${value(stagedRow, c.name)} <> ${value(storedRow, c.name)}`).join(' OR ');
  const storedAt = `${storedRow}._extracted_at`;
  return `CASE WHEN COALESCE(${disagree}, FALSE) AND ${stagedAt} <> ${storedAt} THEN ${stagedAt} > ${storedAt} ELSE ${richer} END`;
}

/**
 * A coalesce (reference) merge: a row its own stream wrote is never changed by a reference; between two references
 * the one that takes precedence (see `precedesExpr`) gives its values and the other only fills its gaps.
 */
function coalesceExpr(staged: string, stored: string, stagedRicher: string): string {
  return `CASE WHEN NOT t._ref_only THEN ${stored} WHEN ${stagedRicher} THEN COALESCE(${staged}, ${stored}) ELSE COALESCE(${stored}, ${staged}) END`;
}

/**
 * The new value of `column` for a key already stored (`t`), given what the staged row brings (`staged`) and, for
 * references, the expression saying whether the staged reference takes precedence.
 */
function updateExpr(column: string, mode: StagedMerge, meta: boolean, staged: string, stagedRicher: string): string {
  const stored = `t.${ident(column)}`;
  if (mode === 'replace' || !meta) return mode === 'replace' ? staged : `COALESCE(${staged}, ${stored})`;
  switch (column) {
    case '_raw':
      return coalesceExpr(staged, stored, stagedRicher);
    case '_deleted_at':
      return stored; // a reference does not prove the row exists again
    case '_ref_only':
      return `(${stored} AND ${staged})`;
    case '_extracted_at':
      // The time of the newest values a row holds: a reference's precedence is judged against it.
      return `GREATEST(${stored}, ${staged})`;
    case '_run_id':
      return staged;
    default:
      return coalesceExpr(staged, stored, stagedRicher);
  }
}

/** Values inlined into scope lists: parent ids can be thousands, beyond comfortable parameter counts. */
function inlineValue(v: string | number | bigint): string {
  return typeof v === 'string' ? literal(v) : String(v);
}

/**
 * Soft-delete live, non-reference rows in scope whose key is not among `stagingTables` (the table's
 * `replace` staging; none staged means the scan returned nothing in scope). Null when the scope is empty.
 */
export function softDeleteSql(
  table: TableDef,
  target: string,
  stagingTables: readonly string[],
  scope: CompleteScope,
  deletedAt: string,
): SqlStatement | null {
  const where = softDeleteWhere(table, stagingTables, scope, [deletedAt]);
  if (!where) return null;
  return {
    sql: `UPDATE ${target} AS t SET _deleted_at = CAST($1 AS TIMESTAMPTZ) WHERE ${where.conds}`,
    params: where.params,
  };
}

/**
 * What `softDeleteSql` would soft-delete, read only: the distinct parents of those rows for a per-parent scope, or
 * one row (parent NULL) for a whole-table scope. Null when the scope is empty.
 */
export function deletionCandidatesSql(
  table: TableDef,
  target: string,
  stagingTables: readonly string[],
  scope: CompleteScope,
): SqlStatement | null {
  const where = softDeleteWhere(table, stagingTables, scope, []);
  if (!where) return null;
  const sql =
    scope.parentColumn !== undefined
      ? `SELECT DISTINCT t.${ident(scope.parentColumn)} AS parent_id FROM ${target} AS t WHERE ${where.conds}`
      : `SELECT NULL AS parent_id FROM ${target} AS t WHERE ${where.conds} LIMIT 1`;
  return { sql, params: where.params };
}

/** Conditions on `t` of a soft delete, with `params` extended by the scope's values (numbered after those given). */
function softDeleteWhere(
  table: TableDef,
  stagingTables: readonly string[],
  scope: CompleteScope,
  params: CellValue[],
): { conds: string; params: CellValue[] } | null {
  const conds = ['t._deleted_at IS NULL', 'NOT t._ref_only'];
  for (const [col, value] of Object.entries(scope.where ?? {})) {
    if (value === null) conds.push(`t.${ident(col)} IS NULL`);
    else {
      params.push(value);
      conds.push(`t.${ident(col)} = $${params.length}`);
    }
  }
  if (scope.parentColumn !== undefined) {
    const ids = scope.parentIds ?? [];
    if (ids.length === 0) return null;
    const column = `t.${ident(scope.parentColumn)}`;
    // The range is redundant with the list but lets DuckDB skip row groups by their min/max (parents of one
    // checkpoint are mostly adjacent ids), instead of probing every row of the table against the list.
    const numeric = ids.filter((v): v is number => typeof v === 'number');
    if (numeric.length === ids.length)
      conds.push(`${column} BETWEEN ${Math.min(...numeric)} AND ${Math.max(...numeric)}`);
    conds.push(`${column} IN (${ids.map(inlineValue).join(', ')})`);
  }
  if (scope.keep && scope.keep.values.length > 0)
    conds.push(`t.${ident(scope.keep.column)} NOT IN (${scope.keep.values.map(inlineValue).join(', ')})`);
  for (const staging of stagingTables) {
    const match = table.primaryKey.map((c) => `s.${ident(c)} = t.${ident(c)}`).join(' AND ');
    conds.push(`NOT EXISTS (SELECT 1 FROM ${staging} AS s WHERE ${match})`);
  }
  return { conds: conds.join(' AND '), params };
}

/** Drops the `_grantflow_parents` marks of `streams` whose parent is a soft-deleted row of `parentTarget`. */
export function dropMarksOfDeletedSql(
  marksTarget: string,
  parentTarget: string,
  parentColumn: string,
  streams: readonly string[],
): SqlStatement {
  return {
    sql:
      `DELETE FROM ${marksTarget} WHERE stream IN (${streams.map((_s, i) => `$${i + 1}`).join(', ')}) AND parent_id IN ` +
      `(SELECT CAST(p.${ident(parentColumn)} AS TEXT) FROM ${parentTarget} AS p WHERE p._deleted_at IS NOT NULL)`,
    params: [...streams],
  };
}

/** Soft-delete live rows whose `column` points at a soft-deleted parent row. */
export function cascadeSql(cascade: Cascade, target: string, parentTarget: string, deletedAt: string): SqlStatement {
  return {
    sql:
      `UPDATE ${target} AS t SET _deleted_at = CAST($1 AS TIMESTAMPTZ) WHERE t._deleted_at IS NULL AND t.${ident(cascade.column)} IN ` +
      `(SELECT p.${ident(cascade.parentColumn)} FROM ${parentTarget} AS p WHERE p._deleted_at IS NOT NULL)`,
    params: [deletedAt],
  };
}
