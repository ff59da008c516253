import type { JsonValue } from '../util/json.ts';

/** What the record walk (record-walk.ts) tells of a stream's records: the paths its definition does not expect. */
export interface FieldObserver {
  /** A new record of the stream starts: what follows is reported for it. */
  startRecord(): void;
  /** A path outside the stream's definition (`extra.score`, `collaborators[].nickname`), with its value. */
  unmapped(path: string, value: JsonValue): void;
  /** A mapped path whose value is of a JSON kind the definition does not take. */
  retyped(path: string, value: JsonValue): void;
}
