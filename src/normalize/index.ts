/**
 * Normalisation: typing values, references to dimension rows, the record walk (references anywhere, drift). The
 * streams and their tables are declared in src/streams/, whose registry derives each stream's mapping from them.
 */
import type { MappedRow } from './mapping.ts';
export { enumLabelRows, enums, enumNames, type EnumName } from './enums.ts';
export { QuarantineError, isQuarantineError, quarantineRow, recordKey, canonicalJson } from './quarantine.ts';
export { deeperThan, cutDeep, maxRecordDepth, TooDeepError } from './record-depth.ts';
export { naiveTimestamps, parseTimestamp } from './timestamp.ts';
export { walkRecord, withRecordWalk } from './record-walk.ts';
export type { FieldObserver } from './field-observer.ts';
export { jsonTypeName, type FieldNode } from './field-kinds.ts';
export { parseMoney } from './money.ts';
export { untypedValues } from './coerce.ts';
export { type StreamMapping, type MappedRow, type NormalizeContext, type OwnedScope } from './mapping.ts';

/** Convenience for callers and tests: group mapped rows by table. */
export function groupByTable(rows: readonly MappedRow[]): Map<string, MappedRow[]> {
  const m = new Map<string, MappedRow[]>();
  for (const r of rows) {
    const list = m.get(r.table);
    if (list === undefined) m.set(r.table, [r]);
    else list.push(r);
  }
  return m;
}
