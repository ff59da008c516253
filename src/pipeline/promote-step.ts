import type { Settings } from '../config/settings.ts';

import { planPromotions, promotedCatalog, type Promotion } from '../normalize/promotions.ts';

import { backfillSql } from '../warehouse/promote-sql.ts';

import type { Warehouse } from '../warehouse/types.ts';
import { streamMappings, tables } from '../streams/registry.ts';

/** The `promote` setting checked against the catalog: a bad entry fails the command before anything is written. */
export function promotionsOf(settings: Pick<Settings, 'promote'>): Promotion[] {
  return planPromotions(settings.promote, streamMappings, tables);
}

/**
 * The catalog migrated with the promoted columns added, then each promoted column filled from `_raw` for the rows
 * already held (idempotent: only NULL cells with a value change). Rows loaded from here on are filled by the
 * normaliser.
 */
export async function migrateWithPromotions(warehouse: Warehouse, promotions: readonly Promotion[]): Promise<void> {
  await warehouse.migrate(promotedCatalog(tables, promotions));
  for (const p of promotions) await warehouse.exec(backfillSql(warehouse.dialect, warehouse.qualify(p.table), p));
}
