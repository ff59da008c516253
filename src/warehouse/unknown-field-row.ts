/** A row of the drift catalog `_grantflow_unknown_fields` (sql/004_unknown_fields.sql). */
export interface UnknownFieldRow {
  stream: string;
  path: string;
  /** `unmapped`: outside the stream's definition; `retyped`: a mapped path holding another JSON type. */
  kind: string;
  /** JSON types seen, sorted, comma-separated (`number,string`). */
  json_types: string;
  records_seen: number;
  /** One value seen, as JSON text, secrets redacted. */
  example: string | null;
  first_run_id: string;
  last_run_id: string;
  first_seen_at: string;
  last_seen_at: string;
}
