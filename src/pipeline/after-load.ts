import type { Settings } from '../config/settings.ts';

import { loadAllModels, modelsForStreams, runDataTests, runModels } from '../models/index.ts';

import { tablesUnchangedByRun, writeSnapshots } from '../snapshot/index.ts';

import type { Warehouse } from '../warehouse/types.ts';

import type { Logger } from '../util/logger.ts';

import type { JsonValue } from '../util/json.ts';

import { firstLine, LockedError, stopReason } from '../util/errors.ts';
import type { StreamCatalog } from '../streams/catalog.ts';
import { defaultCatalog } from '../streams/registry.ts';
import { PersonalColumns } from '../privacy/personal-columns.ts';
import { refreshPseudonyms } from '../privacy/pseudonyms.ts';
import { createDeidentifiedViews } from '../privacy/deidentified-views.ts';

/** The token key of the run (GRANTFLOW_PSEUDONYM_KEY), read once at its start, and what its purge did. */
export interface AfterLoadPrivacy {
  /** Null when not given. */
  readonly key: string | null;
  /** The purge after the load (`purgeDeletedAfter`), when set: its summary line, and whether it removed rows. */
  readonly purge?: { readonly line: string; readonly removed: boolean } | null;
}

export interface AfterLoadInfo {
  /** An error-level data test failed, or models/snapshots could not be written. */
  readonly failed: boolean;
  /** A stop (a signal) left models, data tests or snapshots undone: the run is interrupted, not finished. */
  readonly stopped: boolean;
  readonly lines: readonly string[];
  readonly summary: JsonValue;
}

/**
 * Models and their data tests after every load; snapshots only when every stream loaded, every model was built and
 * no error-level data test failed, so BI tools never read a snapshot of a run that did not succeed. A model or a
 * snapshot that cannot be built or written fails the run (partial, with the reason in its summary), like a failed
 * data test: the loaded data stays committed, and the run is recorded rather than left `running`. Once `signal` is
 * aborted nothing further starts (no model, data test or snapshot) and a snapshot being written is abandoned, so the
 * last good snapshot stays current; the result says `stopped` and the next sync resumes the run.
 */
export async function afterLoad(
  warehouse: Warehouse,
  settings: Settings,
  runId: string,
  extractFailed: boolean,
  logger: Logger,
  signal?: AbortSignal,
  catalog: StreamCatalog = defaultCatalog,
  privacy: AfterLoadPrivacy = { key: null },
): Promise<AfterLoadInfo> {
  const lines: string[] = [];
  const summary: Record<string, JsonValue> = {};
  let failed = false;
  let modelFailed = false;
  let modelNames: string[] = [];
  const core = catalog.tables.filter((t) => t.kind !== 'bookkeeping').map((t) => t.name);
  // `--streams`: the core tables this run left as they were, measured once for the models and the snapshots.
  let unchangedOnce: Promise<Set<string>> | undefined;
  const unchangedByRun = (): Promise<Set<string>> => (unchangedOnce ??= tablesUnchangedByRun(warehouse, runId, core));
  /** What a stop left undone, and the last good snapshot current. */
  const stopped = (): AfterLoadInfo => {
    const why = signal ? stopReason(signal).message : 'stopped';
    lines.push(
      `${why}: what remains of models, data tests and snapshots is left to the next sync; the last good snapshot stays current`,
    );
    return { failed: failed || modelFailed, stopped: true, lines, summary: { ...summary, stopped: true } };
  };
  if ((settings.models || settings.snapshot) && signal?.aborted) return stopped();
  if (settings.models) {
    const userDir = settings.modelsDir ? { userDir: settings.modelsDir } : {};
    try {
      const only = await modelsToRebuild(warehouse, settings, core, unchangedByRun, logger);
      if (only?.skipped.length) summary.modelsSkipped = [...only.skipped];
      const models = await runModels(warehouse, {
        logger,
        signal,
        ...userDir,
        ...(only ? { only: only.rebuild } : {}),
      });
      modelNames = models.models.map((m) => m.name);
      lines.push(`models: ${models.models.map((m) => `${m.name} (${m.rows} rows)`).join(', ') || 'none rebuilt'}`);
      if (only?.skipped.length)
        lines.push(`models skipped (no table of the selected streams feeds them): ${only.skipped.join(', ')}`);
    } catch (e) {
      if (signal?.aborted) return stopped();
      modelFailed = true;
      summary.modelError = firstLine(e);
      lines.push(`models: FAILED: ${firstLine(e)}`);
    }
    if (signal?.aborted) return stopped();
    const tests = await runDataTests(warehouse, { ...userDir, tables: catalog.tables });
    const errors = tests.filter((t) => t.status !== 'pass' && t.severity === 'error');
    const warnings = tests.filter((t) => t.status !== 'pass' && t.severity === 'warn');
    lines.push(
      `data tests: ${tests.length - errors.length - warnings.length} passed, ${errors.length} failed, ${warnings.length} warnings`,
    );
    for (const t of [...errors, ...warnings]) {
      // A test whose query could not run has no failing rows to count: say why instead of "0 rows".
      const what = t.status === 'error' ? `query failed: ${t.message ?? 'unknown error'}` : `${t.failing} rows`;
      lines.push(`  ${t.severity === 'error' ? 'FAIL' : 'WARN'} ${t.name}: ${what}`);
    }
    summary.tests = { total: tests.length, errors: errors.map((t) => t.name), warnings: warnings.map((t) => t.name) };
    if (errors.length > 0) failed = true;
  }
  if (privacy.purge) lines.push(privacy.purge.line);
  // Older snapshots hold the purged rows: this one, written without them, is the only one kept, every table written.
  const purged = privacy.purge?.removed === true;
  const personal = PersonalColumns.of(catalog.tables, settings.modelsDir);
  let tokensFailed = false;
  if (privacy.key !== null) {
    if (signal?.aborted) return stopped();
    // After the models (whose identifiers get tokens too) and before the snapshots that read the tokens.
    try {
      const refresh = await refreshPseudonyms(warehouse, privacy.key, personal);
      const views = await createDeidentifiedViews(warehouse, personal);
      lines.push(
        `pseudonyms: ${refresh.added} new tokens, ${refresh.removed} removed${refresh.keyChanged ? ' (the key changed: every token made again)' : ''}; ${views.length} deidentified views`,
      );
    } catch (e) {
      if (signal?.aborted) return stopped();
      failed = true;
      tokensFailed = true;
      summary.pseudonymError = firstLine(e);
      lines.push(`pseudonyms: FAILED: ${firstLine(e)}`);
    }
  }
  if (settings.snapshot) {
    if (signal?.aborted) return stopped();
    if (extractFailed || modelFailed || failed) {
      const why = extractFailed
        ? 'a stream failed'
        : modelFailed
          ? 'a model failed'
          : tokensFailed
            ? 'the pseudonyms could not be made'
            : 'an error-level data test failed';
      lines.push(`snapshots: not written (${why}; the last good snapshot stays current)`);
    } else {
      const names = [...core, ...modelNames];
      try {
        // `--streams`: the tables this run did not change keep their snapshot (and latest file) of an earlier run.
        const unchanged = settings.streams && !purged ? await unchangedByRun() : undefined;
        const snap = await writeSnapshots(warehouse, {
          dir: settings.snapshots,
          runId,
          retain: purged ? 1 : settings.retainSnapshots,
          tables: names,
          logger,
          signal,
          command: `grantflow sync (run ${runId})`,
          s3ForcePathStyle: settings.s3ForcePathStyle,
          raw: settings.snapshotRaw,
          personalData: { mode: settings.personalData, columns: personal },
          ...(unchanged ? { unchanged } : {}),
        });
        const kept = snap.kept.length > 0 ? ` (${snap.kept.length} unchanged kept from earlier runs)` : '';
        lines.push(
          `snapshots: ${snap.tables.length} tables written to ${settings.snapshots} in ${(snap.durationMs / 1000).toFixed(1)} s${kept}`,
        );
        summary.snapshotMs = snap.durationMs;
      } catch (e) {
        if (signal?.aborted) return stopped();
        failed = true;
        summary.snapshotError = firstLine(e);
        if (e instanceof LockedError) {
          // Another write had the directory: only this snapshot is missing, the load is not (and nothing was undone).
          lines.push(
            `snapshots: not written: ${firstLine(e)}; the loaded data is committed and the last good snapshot stays ` +
              'current (`grantflow snapshot` writes this one)',
          );
        } else {
          // Said once, and only where true: a write's own errors say what the manifest names (the new snapshot, when
          // it was published and only the disk's confirmation failed).
          const why = firstLine(e);
          lines.push(
            `snapshots: FAILED: ${why}${/manifest/.test(why) ? '' : ' (the manifest still names the last good snapshot)'}`,
          );
        }
      }
    }
  }
  return { failed: failed || modelFailed, stopped: false, lines, summary };
}

/**
 * With --streams, only the models reading what those streams load (see modelsForStreams); the others keep the
 * tables an earlier run built from the same, unchanged rows. Without --streams every model (undefined).
 */
async function modelsToRebuild(
  warehouse: Warehouse,
  settings: Settings,
  core: readonly string[],
  unchangedByRun: () => Promise<Set<string>>,
  logger: Logger,
): Promise<{ rebuild: string[]; skipped: readonly string[] } | undefined> {
  if (!settings.streams) return undefined;
  const existing = new Set((await warehouse.modelTables()).keys());
  // What the run changed, measured: a reference anywhere in a record may feed a table its stream does not own.
  const unchanged = await unchangedByRun();
  const changed = new Set(core.filter((t) => !unchanged.has(t)));
  const models = loadAllModels(settings.modelsDir);
  const { rebuild, skipped } = modelsForStreams(models, settings.streams, existing, changed);
  if (skipped.length > 0) logger.info({ skipped }, 'models skipped: no table of the selected streams feeds them');
  return { rebuild: rebuild.map((m) => m.name), skipped };
}
