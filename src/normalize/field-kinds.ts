/**
 * The shape of the source fields a stream reads, with the JSON kinds each may hold: derived from a stream's
 * definition (streams/derive-fields.ts). The record walk (record-walk.ts) compares records with it: a field outside
 * it is drift (an unmapped path), a known field of another kind is a retyped one.
 */

/** JSON kinds as bits; null is always allowed. */
export const STRING = 1;
export const NUMBER = 2;
export const BOOLEAN = 4;
export const OBJECT = 8;
export const ARRAY = 16;
const ANY_KIND = STRING | NUMBER | BOOLEAN | OBJECT | ARRAY;

export interface FieldNode {
  /** JSON kinds the field may hold (a bit set of the constants above). */
  readonly kinds: number;
  /** Known members of an object value; absent: the value is kept whole (a JSON column), not looked into for drift. */
  readonly fields?: ReadonlyMap<string, FieldNode>;
  /** Known shape of array items; absent: items are kept whole. */
  readonly items?: FieldNode;
  /** The mapping reads this value as a reference and feeds its dimension itself: the walk does not again. */
  readonly ref?: boolean;
}

export const leaf = (kinds: number): FieldNode => ({ kinds });
export const S = leaf(STRING);
export const N = leaf(NUMBER);
export const B = leaf(BOOLEAN);
/** Ids and money may come as digit text as well as numbers (the coercers accept both). */
export const I = leaf(NUMBER | STRING);
export const M = leaf(NUMBER | STRING);
/** Kept whole (a JSON column or a value only `_raw` keeps): members are not drift, references in it still count. */
export const ANY: FieldNode = { kinds: ANY_KIND };
// Maps, not objects: the walk looks every key of every record up, and a Map lookup costs half as much.
export const obj = (fields: Record<string, FieldNode>, extra: Partial<FieldNode> = {}): FieldNode => ({
  kinds: OBJECT,
  fields: new Map(Object.entries(fields)),
  ...extra,
});
export const arrOf = (items: FieldNode): FieldNode => ({ kinds: ARRAY, items });
/** A reference read by the mapping: an object, or a bare id (the write shape), or `[]` (PHP's empty map). */
export const refTo = (fields: Record<string, FieldNode>): FieldNode => ({
  kinds: OBJECT | NUMBER | STRING | ARRAY,
  fields: new Map(Object.entries(fields)),
  ref: true,
});
export const USER = refTo({ id: I, first_name: S, last_name: S, email: S });
export const NAMED = refTo({ id: I, name: S });
export const TITLED = refTo({ id: I, title: S });
/** ApplicationRef and DecisionRef: only the id is read, but their listed members are known. */
export const APPLICATION = refTo({ id: I, title: S });
export const DECISION = obj({ id: I, decision: N, awarded: M }, { kinds: OBJECT | ARRAY });
export const CUSTOM_FIELDS = arrOf(obj({ id: I, name: S, value: ANY }));
export const TS = S;

/** The JSON kind bit of a present value (0 for null). */
export function kindOf(v: unknown): number {
  switch (typeof v) {
    case 'string':
      return STRING;
    case 'number':
    case 'bigint':
      return NUMBER;
    case 'boolean':
      return BOOLEAN;
    case 'object':
      return v === null ? 0 : Array.isArray(v) ? ARRAY : OBJECT;
    default:
      return 0;
  }
}

/** JSON type name of a value, as the catalog records it. */
export function jsonTypeName(v: unknown): string {
  switch (kindOf(v)) {
    case STRING:
      return 'string';
    case NUMBER:
      return 'number';
    case BOOLEAN:
      return 'boolean';
    case ARRAY:
      return 'array';
    case OBJECT:
      return 'object';
    default:
      return 'null';
  }
}
