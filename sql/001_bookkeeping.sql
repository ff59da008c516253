-- Bookkeeping tables, identical in DuckDB and PostgreSQL. {{schema}} is replaced by the quoted schema
-- prefix (`"analytics".` in Postgres, empty in DuckDB). JSON columns are `json`, not jsonb: stored text
-- round-trips byte for byte.
CREATE TABLE IF NOT EXISTS {{schema}}_grantflow_runs (
  run_id TEXT NOT NULL PRIMARY KEY,
  started_at TIMESTAMPTZ NOT NULL,
  finished_at TIMESTAMPTZ,
  status TEXT NOT NULL,
  summary JSON
);

CREATE TABLE IF NOT EXISTS {{schema}}_grantflow_streams (
  stream TEXT NOT NULL PRIMARY KEY,
  state JSON,
  updated_at TIMESTAMPTZ NOT NULL,
  run_id TEXT
);

CREATE TABLE IF NOT EXISTS {{schema}}_grantflow_parents (
  stream TEXT NOT NULL,
  parent_id TEXT NOT NULL,
  marker TEXT,
  synced_at TIMESTAMPTZ NOT NULL,
  run_id TEXT,
  PRIMARY KEY (stream, parent_id)
);

CREATE TABLE IF NOT EXISTS {{schema}}_grantflow_credentials (
  site TEXT NOT NULL PRIMARY KEY,
  client_id TEXT NOT NULL,
  client_secret TEXT NOT NULL,
  access_token TEXT NOT NULL,
  refresh_token TEXT NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL
);
