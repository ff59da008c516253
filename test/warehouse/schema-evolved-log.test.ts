/**
 * What a migration changed is logged as one short line of counts (a first sync creates every table: their names
 * filled an 80-column terminal); the names go to the debug level.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { tables } from '../../src/streams/registry.ts';
import { formatLogLine } from '../../src/util/pretty-log.ts';
import { hasMetadata, openWarehouse } from '../../src/warehouse/index.ts';
import type { TableDef } from '../../src/normalize/table-def.ts';
import { bothDialects, catalog, harness, type Harness } from '../support/warehouse-fixtures.ts';

const cleanups: Harness[] = [];
afterAll(async () => {
  for (const h of cleanups) await h.cleanup();
});

function recordingLogger(): { logger: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  return { logger: pino({ level: 'debug' }, { write: (line: string) => lines.push(line) }), lines };
}

/** `catalog` with `extra` more nullable text columns on its first `tablesWidened` tables. */
function widened(extra: number, tablesWidened: number): TableDef[] {
  return catalog.map((t, i) =>
    i < tablesWidened
      ? {
          ...t,
          columns: [
            ...t.columns,
            ...Array.from({ length: extra }, (_, k) => ({
              name: `more_${k}`,
              description: 'x',
              type: 'text' as const,
            })),
          ],
        }
      : t,
  );
}

describe.each(bothDialects)('the schema-evolved line (%s)', (dialect) => {
  it('is one line of counts at info, fitting 80 columns; the names at debug', async () => {
    const h = await harness(dialect, 'evolved');
    cleanups.push(h);
    const open = (logger: pino.Logger) =>
      openWarehouse(h.target, { logger, ...(h.schema ? { schema: h.schema } : {}) });

    const first = recordingLogger();
    let warehouse = await open(first.logger);
    const all = [...tables, ...catalog];
    await warehouse.migrate(all);
    await warehouse.close();
    const info = first.lines.map((l) => JSON.parse(l) as { level: number; msg: string });
    const evolved = info.filter((l) => l.level === 30 && l.msg.startsWith('warehouse schema evolved'));
    // Each table with the sync's metadata columns gets its `<table>_current` view.
    const views = all.filter(hasMetadata).length;
    expect(evolved.map((l) => l.msg)).toEqual([
      `warehouse schema evolved: ${all.length} tables created, ${views} views created`,
    ]);
    const shown = first.lines.filter((l) => l.includes('warehouse schema evolved:')).map(formatLogLine);
    expect(shown).toHaveLength(1);
    expect(shown[0]!.length).toBeLessThanOrEqual(80);
    const debug = info.filter((l) => l.level === 20 && l.msg === 'warehouse schema evolved');
    expect(debug).toHaveLength(1);
    expect((debug[0] as unknown as { created: string[] }).created).toContain(tables[0]!.name);

    const second = recordingLogger();
    warehouse = await open(second.logger);
    await warehouse.migrate([...tables, ...widened(3, 2)]);
    await warehouse.close();
    const msgs = second.lines
      .map((l) => JSON.parse(l) as { level: number; msg: string })
      .filter((l) => l.level === 30 && l.msg.startsWith('warehouse schema evolved'))
      .map((l) => l.msg);
    // Postgres makes the views of the widened tables again (its views fix their columns).
    expect(msgs).toHaveLength(1);
    expect(msgs[0]).toMatch(/^warehouse schema evolved: 6 columns added in 2 tables(, \d+ views? created)?$/);
  });
});
