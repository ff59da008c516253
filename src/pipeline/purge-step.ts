import type { Settings } from '../config/settings.ts';
import { durationOrZeroMs } from '../config/duration.ts';
import type { StreamCatalog } from '../streams/catalog.ts';
import { applyPurge, purgeCutoff, purgeLine } from '../privacy/purge.ts';
import { pruneTokens } from '../privacy/pseudonyms.ts';
import { PersonalColumns } from '../privacy/personal-columns.ts';
import { pruneRawPages } from '../privacy/raw-pruning.ts';
import type { Warehouse } from '../warehouse/types.ts';
import type { Logger } from '../util/logger.ts';

/** What a purge did, for the run's summary; null when `purgeDeletedAfter` is not set. */
export interface PurgeOutcome {
  readonly line: string;
  readonly removed: boolean;
}

/**
 * `purgeDeletedAfter` (privacy/purge.ts, docs/privacy.md): rows soft-deleted longer ago than the window are removed
 * from the tables and their history, with the persons only they named, then from the raw pages of every run and the
 * token table. The snapshots that held them go with this run's snapshot (afterLoad keeps it alone). `now`: an injected
 * clock for tests.
 */
export async function purgeAfterLoad(
  warehouse: Warehouse,
  settings: Pick<Settings, 'purgeDeletedAfter' | 'rawDir' | 'modelsDir'>,
  catalog: StreamCatalog,
  logger: Logger,
  now: Date = new Date(),
): Promise<PurgeOutcome | null> {
  if (settings.purgeDeletedAfter === undefined) return null;
  const windowMs = durationOrZeroMs(settings.purgeDeletedAfter) ?? 0;
  const result = await applyPurge(warehouse, catalog, purgeCutoff(windowMs, now));
  const removed = result.tables.length > 0;
  if (!removed) return { line: purgeLine(result, true), removed };
  const raw = await pruneRawPages(settings.rawDir, catalog, result.records, logger);
  const tokens = await pruneTokens(warehouse, PersonalColumns.of(catalog.tables, settings.modelsDir));
  const rawText = raw.files > 0 ? `; raw pages: ${raw.pages} pages in ${raw.files} files pruned` : '';
  const tokenText = tokens > 0 ? `; ${tokens} tokens of them removed` : '';
  logger.info(
    { tables: result.tables, history: result.history, persons: result.persons, rawFiles: raw.files, tokens },
    'purged rows deleted on the site',
  );
  return { line: `${purgeLine(result, true)}${rawText}${tokenText}`, removed };
}
