import type { Command } from 'commander';
import { warehouseSettingKeys, type SettingKey } from '../../config/settings.ts';
import { openConfiguredWarehouse } from '../../warehouse/index.ts';
import type { Warehouse } from '../../warehouse/types.ts';
import { ident } from '../../warehouse/values.ts';
import { ConfigError, firstLine } from '../../util/errors.ts';
import { createLogger } from '../../util/logger.ts';
import { cutToWidth } from '../../util/terminal-screen.ts';
import { runReason } from '../../pipeline/run-reason.ts';
import { oneLine } from '../../source/errors.ts';
import { runAction } from '../run-action.ts';
import { liveStatusOr } from '../live-status.ts';
import { addSettings } from '../settings-options.ts';
import { addSiteOption, pickASite, portfolioSitesIn, readTarget } from '../read-target.ts';
import { escapeControl } from '../../util/escape-control.ts';
import { foldLines, outputWidth, renderTable, renderTableRows, type TableColumn } from '../../util/text-table.ts';
import { tables } from '../../streams/registry.ts';
import { privilegesDoc } from '../../util/doc-pointers.ts';

const keys = [...warehouseSettingKeys, 'logLevel'] as const satisfies readonly SettingKey[];

export function registerStatus(program: Command): void {
  const command = program
    .command('status')
    .description(
      'last runs (with why one did not succeed), per-stream state and row counts of a warehouse (read only); ' +
        "a portfolio's site with --pipeline FILE --site NAME or --schema site_<name>",
    )
    .option('--runs <n>', 'how many runs to list', '10');
  addSiteOption(addSettings(command, keys));
  command.action(
    runAction(async (options: Record<string, unknown>) => {
      const text = await runStatus(options, outputWidth());
      if (text !== null) process.stdout.write(text);
    }),
  );
}

/**
 * What `status` prints, for the given options (as commander parsed them): the command's work apart from the process,
 * for tests to call in process. Null when a sync holds the DuckDB file and its live progress was printed instead.
 */
export async function runStatus(options: Record<string, unknown>, width: number | undefined): Promise<string | null> {
  const settings = await readTarget(options, keys, 'refuse');
  const limit = Number(options.runs ?? 10);
  if (!Number.isInteger(limit) || limit < 1)
    throw new ConfigError(`--runs must be a whole number from 1 up, got "${String(options.runs)}"`);
  const warehouse = await openConfiguredWarehouse(settings, createLogger({ level: settings.logLevel }), {
    existingOnly: true,
    readOnly: true,
  }).catch((e: unknown) => liveStatusOr(e, settings.warehouse));
  if (!warehouse) return null;
  try {
    return (await statusLines(warehouse, limit, width)).join('\n') + '\n';
  } catch (e) {
    throw await readRefused(warehouse, e);
  } finally {
    await warehouse.close();
  }
}

/** `2026-12-01T22:08:18.090000Z` as `2026-12-01 22:08:18` (UTC, as the headers say): short enough for 80 columns. */
function shortTime(iso: unknown, precision: 'seconds' | 'minutes' = 'seconds'): string | null {
  if (typeof iso !== 'string' || iso === '') return null;
  return iso.replace('T', ' ').slice(0, precision === 'seconds' ? 19 : 16);
}

/** What `status` prints, each table fitted to `width` (none: every character, as for a pipe). */
export async function statusLines(warehouse: Warehouse, limit: number, width: number | undefined): Promise<string[]> {
  const out: string[] = [`warehouse ${warehouse.description}`, ''];
  let runs;
  try {
    runs = await warehouse.listRuns(limit);
  } catch (e) {
    // Only a missing runs table means "no data yet"; anything else is reported as it is.
    if (!/does not exist/i.test(e instanceof Error ? e.message : String(e))) throw e;
    // A portfolio keeps its sites' tables in schemas of their own: say which, rather than "nothing here".
    const sites = await portfolioSitesIn(warehouse);
    if (sites.length > 0) throw pickASite(sites, warehouse.description);
    throw new ConfigError(`${warehouse.description} holds no grantflow data yet; run \`grantflow sync\` first`);
  }
  // A run left `running` while no sync holds the lock was killed or crashed: saying only "running" would send
  // the operator looking for a sync that is not there.
  const died = runs.some((r) => r.status === 'running') && !(await warehouse.runLockHeld());
  out.push('last runs:');
  const runTable = renderTableRows(
    [{ header: 'run' }, { header: 'status' }, { header: 'started (UTC)' }, { header: 'finished (UTC)' }],
    runs.map((r) => [r.runId, r.status, shortTime(r.startedAt), shortTime(r.finishedAt)]),
    { indent: 2, width, nullText: '-' },
  );
  out.push(...runTable.header);
  runs.forEach((r, i) => {
    out.push(...(runTable.rows[i] ?? []));
    // Why a run did not succeed, so an operator need not dig in _grantflow_runs.summary.
    const why =
      r.status === 'running' && died
        ? 'no sync is running it: it was killed or crashed, and the next sync resumes it'
        : r.status === 'succeeded'
          ? null
          : runReason(r.summary);
    if (why) out.push(...foldLines(`why: ${escapeControl(oneLine(why, 300))}`, width, 6));
  });
  out.push('', 'streams (the last run that read each whole):');
  // Qualified: on Postgres an unqualified name the schema lacks would be read from `public`, another warehouse.
  const states = await warehouse.query(
    `SELECT stream, state FROM ${warehouse.qualify('_grantflow_streams')} ORDER BY stream`,
  );
  const streamRows = states.map((s) => {
    const state = JSON.parse(String(s.state ?? '{}')) as Record<string, unknown>;
    return [
      String(s.stream),
      typeof state.lastCompleteRunId === 'string' ? state.lastCompleteRunId : null,
      typeof state.records === 'number' ? state.records : null,
      shortTime(state.lastFullRefreshAt, 'minutes'),
    ];
  });
  out.push(
    ...renderTable(
      [{ header: 'stream' }, { header: 'last complete run' }, { header: 'records' }, { header: 'full refresh (UTC)' }],
      streamRows,
      { indent: 2, width, nullText: '-' },
    ),
  );
  out.push(...(await driftLines(warehouse)).map((line) => (width === undefined ? line : cutToWidth(line, width))));
  out.push('', 'tables (live rows / soft-deleted):');
  const counts: (string | number)[][] = [];
  for (const t of tables) {
    const table = warehouse.qualify(t.name);
    const soft = t.kind === 'entity' || t.kind === 'dimension' || t.kind === 'bridge';
    const sql = soft
      ? `SELECT count(*) FILTER (WHERE _deleted_at IS NULL) AS live, count(*) FILTER (WHERE _deleted_at IS NOT NULL) AS gone FROM ${table}`
      : `SELECT count(*) AS live, 0 AS gone FROM ${table}`;
    const [row] = await warehouse.query(sql).catch(() => [{ live: '-', gone: '-' }]);
    counts.push([t.name, String(row?.live ?? 0), String(row?.gone ?? 0)]);
  }
  const countColumns = [
    { header: 'table' },
    { header: 'live', align: 'right' },
    { header: 'gone', align: 'right' },
  ] as const;
  out.push(...renderTable(countColumns, counts, { indent: 2, width, header: false }));
  // Models live in a schema of their own: named, so an analyst knows where to find them.
  const built = await warehouse.modelTables();
  // Every table there is a model (one of another models directory too), bar a rebuild's `_gf_next_` leftover.
  const models = [...built.keys()].filter((t) => !t.startsWith('_gf_')).sort();
  out.push('', `models (schema ${warehouse.analyticsSchema}, rows):`);
  if (models.length === 0) out.push('  none built yet (`grantflow models run`)');
  const modelRows: string[][] = [];
  for (const m of models) {
    const [row] = await warehouse
      .query(`SELECT count(*) AS n FROM ${warehouse.qualifyModel(m)}`)
      .catch(() => [{ n: '-' }]);
    modelRows.push([m, String(row?.n ?? 0)]);
  }
  if (modelRows.length > 0)
    out.push(...renderTable(countColumns.slice(0, 2), modelRows, { indent: 2, width, header: false }));
  return out;
}

const DRIFT_SHOWN = 50;

/**
 * The drift catalog, newest first: source fields the streams' definitions do not map (promotable with the `promote`
 * setting) and mapped fields seen with another JSON type. A warehouse from before the catalog existed has none.
 */
const driftColumns: readonly TableColumn[] = ['stream', 'path', 'types', 'records', 'run', 'example'].map((header) => ({
  header,
  align: 'left',
}));

export async function driftLines(warehouse: Warehouse): Promise<string[]> {
  const rows = await warehouse.listUnknownFields().catch((e: unknown) => {
    if (/does not exist|not found/i.test(e instanceof Error ? e.message : String(e))) return [];
    throw e;
  });
  if (rows.length === 0) return ['', 'unmapped source fields: none seen'];
  const out = ['', `unmapped source fields (newest first; ${rows.length} in _grantflow_unknown_fields):`];
  // Stream, path and example come from the site: the renderer shows their control characters escaped.
  out.push(
    ...renderTable(
      driftColumns,
      rows
        .slice(0, DRIFT_SHOWN)
        .map((r) => [
          r.stream,
          r.path,
          `${r.kind === 'retyped' ? 'RETYPED ' : ''}${r.json_types}`,
          `${r.records_seen} records`,
          `last run ${r.last_run_id}`,
          `e.g. ${oneLine(r.example ?? 'null', 60)}`,
        ]),
      { indent: 2, header: false },
    ),
  );
  if (rows.length > DRIFT_SHOWN) out.push(`  ... ${rows.length - DRIFT_SHOWN} more`);
  return out;
}

/**
 * A grantflow table the Postgres role may not read (SQLSTATE 42501): one line naming it and the GRANT that gives the
 * role what `status` needs, as `snapshot` and `models test` do; any other error as it is.
 */
async function readRefused(warehouse: Warehouse, error: unknown): Promise<unknown> {
  if ((error as { code?: unknown } | null)?.code !== '42501') return error;
  const [who] = await warehouse.query(`SELECT current_user AS role, current_schema() AS schema`);
  const grant = `GRANT SELECT ON ALL TABLES IN SCHEMA ${ident(String(who?.schema))} TO ${ident(String(who?.role))}`;
  return new ConfigError(
    `the Postgres role lacks a privilege grantflow needs: ${firstLine(error)}; grant it (${grant}); ` +
      `${privilegesDoc} lists what each command needs`,
    { cause: error },
  );
}
