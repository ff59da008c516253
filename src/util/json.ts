/** A JSON value as the site sends it; records are objects of these. Never `any`. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A list item that is not a JSON object (`null`, a number, a string...) cannot be a record, but one such item must
 * not cost the whole page: it travels as a stand-in record that the normaliser quarantines with the item itself.
 * The stand-in holds the item under one key, so two different items never de-duplicate as one record.
 */
const standIns = new WeakMap<JsonObject, JsonValue>();

export function standInRecord(item: JsonValue): JsonObject {
  const record: JsonObject = { _grantflow_not_an_object: item };
  standIns.set(record, item);
  return record;
}

/** The item a stand-in record carries, or undefined for a real record. */
export function standInItem(record: JsonObject): { item: JsonValue } | undefined {
  return standIns.has(record) ? { item: standIns.get(record)! } : undefined;
}
