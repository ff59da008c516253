import type { Settings } from '../config/settings.ts';

import { planPromotions, promotedCatalog, type Promotion } from '../normalize/promotions.ts';

import { backfillSql } from '../warehouse/promote-sql.ts';

import type { Warehouse } from '../warehouse/types.ts';
import type { StreamCatalog } from '../streams/catalog.ts';
import { defaultCatalog } from '../streams/registry.ts';

/** The `promote` setting checked against the catalog: a bad entry fails the command before anything is written. */
export function promotionsOf(
  settings: Pick<Settings, 'promote'>,
  catalog: StreamCatalog = defaultCatalog,
): Promotion[] {
  return planPromotions(settings.promote, catalog.mappings, catalog.tables);
}

/**
 * The catalog migrated with the promoted columns added, then each promoted column filled from `_raw` for the rows
 * already held (idempotent: only NULL cells with a value change). Rows loaded from here on are filled by the
 * normaliser.
 */
export async function migrateWithPromotions(
  warehouse: Warehouse,
  promotions: readonly Promotion[],
  catalog: StreamCatalog = defaultCatalog,
): Promise<void> {
  await warehouse.migrate(promotedCatalog(catalog.tables, promotions));
  for (const p of promotions) await warehouse.exec(backfillSql(warehouse.sqlDialect, warehouse.qualify(p.table), p));
}
