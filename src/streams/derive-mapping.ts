import type { JsonObject } from '../util/json.ts';
import { arr, obj } from '../normalize/coerce.ts';
import type { MappedRow, NormalizeContext, OwnedScope, StreamMapping } from '../normalize/mapping.ts';
import { customFieldValues, customFieldValuesScope, type Id } from '../normalize/refs.ts';
import type { CellValue, Row, TableDef } from '../normalize/table-def.ts';
import { compileColumn, readerOf, type CompiledColumn, type ReadContext } from './column-readers.ts';
import type { BridgeTable, StreamDefinition } from './stream-definition.ts';

const recordMissing = (field: string): string => `${field} is missing: the record has no usable key`;

type CompiledTable = readonly CompiledColumn[];

const compileTable = (table: TableDef, prefix: string): CompiledTable =>
  table.columns.map((c) => compileColumn(c, prefix));

function readRow(columns: CompiledTable, holder: JsonObject, rc: ReadContext): Row {
  const cache = new Map<string, JsonObject | null>();
  const row: Row = {};
  for (const c of columns) row[c.name] = c.read(holder, cache, rc);
  row._raw = JSON.stringify(holder);
  return row;
}

/**
 * Reads a declared table's row from an object inside a record (a transaction's embedded payment): its references
 * feed `out` as they are read; `prefix` names its fields in quarantine reasons (`payment.`). Compiled once.
 */
export function embeddedRowReader(
  table: TableDef,
  prefix: string,
  stream: string,
): (holder: JsonObject, out: MappedRow[], ctx: NormalizeContext) => Row {
  const columns = compileTable(table, prefix);
  return (holder, out, ctx) => readRow(columns, holder, { out, ctx, stream, missing: recordMissing });
}

/** The column holding the record's own id (`key`), if any. */
function keyColumn(table: TableDef): string | undefined {
  return table.columns.find((c) => readerOf(c) === 'key')?.name;
}

function ownerColumn(bridge: BridgeTable): string {
  const c = bridge.columns.find((x) => readerOf(x) === 'owner');
  if (c === undefined) throw new Error(`bridge ${bridge.name} declares no owner column`);
  return c.name;
}

/** Scopes a complete scan soft-deletes in, when the definition does not list them. */
export function defaultOwns(def: StreamDefinition): OwnedScope[] {
  const parentColumn = def.table.columns.find((c) => readerOf(c) === 'parent')?.name;
  const idColumn = keyColumn(def.table);
  const own: OwnedScope =
    parentColumn !== undefined
      ? { table: def.table.name, parentColumn }
      : idColumn !== undefined
        ? { table: def.table.name, idColumn }
        : { table: def.table.name };
  return [
    own,
    // A record without the bridge's array says nothing of its rows, whether the stream is per parent or not.
    ...(def.bridges ?? []).map((b): OwnedScope => {
      const from = { key: b.from, shape: 'array', ...(b.optional === true ? { optional: true } : {}) } as const;
      return parentColumn !== undefined
        ? { table: b.name, parentColumn, from }
        : { table: b.name, idColumn: ownerColumn(b), from };
    }),
    ...(def.customFields === undefined ? [] : [customFieldValuesScope(def.customFields)]),
    ...(def.alsoOwns ?? []),
  ];
}

/**
 * The mapping of a declared stream: its own row from the declared columns (references feeding their dimensions as
 * they are read), then each derived bridge's rows, the custom field values, and what `finish` adds. The own row is
 * first, as the batcher expects.
 */
export function deriveMapping(def: StreamDefinition): StreamMapping {
  if (def.mapping !== undefined) return def.mapping;
  const columns = compileTable(def.table, '');
  const ownerColumnName = keyColumn(def.table) ?? 'id';
  const bridges = (def.bridges ?? [])
    .filter((b) => b.byHand !== true)
    .map((b) => ({
      table: b.name,
      from: b.from,
      columns: compileTable(b, `${b.from}[].`),
      missing: (_field: string, source: string) => `${b.from}[] entry without ${source}`,
    }));
  return {
    owns: def.owns ?? defaultOwns(def),
    cascades: def.cascades ?? [],
    map(record: JsonObject, ctx: NormalizeContext): MappedRow[] {
      const out: MappedRow[] = [];
      const rc: ReadContext = { out, ctx, stream: def.name, missing: recordMissing };
      const row = readRow(columns, record, rc);
      const owner: CellValue = row[ownerColumnName] ?? null;
      for (const b of bridges) {
        const itemContext: ReadContext = { ...rc, owner, missing: b.missing };
        for (const x of arr(record[b.from])) {
          const item = obj(x);
          if (item !== null) out.push({ table: b.table, row: readRow(b.columns, item, itemContext), merge: 'replace' });
        }
      }
      if (def.customFields !== undefined) customFieldValues(out, def.customFields, owner as Id, record.custom_fields);
      def.finish?.(record, row, out, ctx);
      out.unshift({ table: def.table.name, row, merge: 'replace' });
      return out;
    },
  };
}
