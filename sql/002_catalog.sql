-- Every catalog (TableDef[]) fingerprint ever applied, so schema evolution is visible.
CREATE TABLE IF NOT EXISTS {{schema}}_grantflow_catalog (
  fingerprint TEXT NOT NULL PRIMARY KEY,
  applied_at TIMESTAMPTZ NOT NULL,
  tables JSON NOT NULL
);
