-- The drift catalog: every source field path a stream's records held that its definition does not map
-- (kind 'unmapped'), and every mapped path that held a value of another JSON type (kind 'retyped').
-- Written at the end of each sync (src/pipeline/drift-catalog.ts); read by `grantflow status`.
CREATE TABLE IF NOT EXISTS {{schema}}_grantflow_unknown_fields (
  stream TEXT NOT NULL,
  path TEXT NOT NULL,
  kind TEXT NOT NULL,
  json_types TEXT NOT NULL,
  records_seen BIGINT NOT NULL,
  example TEXT,
  first_run_id TEXT NOT NULL,
  last_run_id TEXT NOT NULL,
  first_seen_at TIMESTAMPTZ NOT NULL,
  last_seen_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (stream, path)
);
