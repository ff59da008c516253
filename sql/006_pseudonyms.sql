-- Tokens of personal identifiers (src/privacy/pseudonyms.ts): each value a keyed HMAC replaces in snapshots, the
-- report and the deidentified views. Computed by a sync run with GRANTFLOW_PSEUDONYM_KEY, which is never stored; a
-- value's token alone does not give the key. Values no table holds any longer are removed by the next refresh or purge.
CREATE TABLE IF NOT EXISTS {{schema}}_grantflow_pseudonyms (
  value TEXT NOT NULL,
  token TEXT NOT NULL,
  PRIMARY KEY (value)
);
