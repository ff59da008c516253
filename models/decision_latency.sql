-- description: Days from an application's last submission to its award decision, per program (median, p90, mean). Every program has a row. Trashed and deleted applications are left out.
-- primary_key: program_id
-- includes: every program not deleted, one without decisions too (0, NULL days).
-- includes: awards not deleted with decision 0 or 1, of applications not deleted and not trashed (state 4).
-- includes: only decisions with both a last submission (last_submitted_at) and a decision time (awarded_at, else created_at).
-- column program_id bigint: Program.
-- column program_name text: Program name.
-- column decisions bigint: Decisions (awarded or declined) with both a last submission and a decision time.
-- column median_days decimal(12,4): Median days from last submission to decision (4 decimals); NULL without decisions.
-- column p90_days decimal(12,4): 90th percentile (continuous) of those days (4 decimals); NULL without decisions.
-- column mean_days decimal(12,4): Mean of those days (4 decimals); NULL without decisions.
WITH latencies AS (
  SELECT
    a.program_id,
    CAST(EXTRACT(EPOCH FROM COALESCE(w.awarded_at, w.created_at)) - EXTRACT(EPOCH FROM a.last_submitted_at) AS DOUBLE PRECISION) / 86400.0 AS days
  FROM awards w
  JOIN applications a ON a.id = w.application_id
  WHERE w._deleted_at IS NULL AND a._deleted_at IS NULL AND (a.state IS NULL OR a.state <> 4)
    AND w.decision IN (0, 1)
    AND a.last_submitted_at IS NOT NULL AND COALESCE(w.awarded_at, w.created_at) IS NOT NULL
),
per_program AS (
  SELECT
    program_id,
    count(*) AS decisions,
    percentile_cont(0.5) WITHIN GROUP (ORDER BY days) AS median_days,
    percentile_cont(0.9) WITHIN GROUP (ORDER BY days) AS p90_days,
    avg(days) AS mean_days
  FROM latencies
  GROUP BY program_id
)
SELECT
  CAST(p.id AS BIGINT) AS program_id,
  p.name AS program_name,
  CAST(COALESCE(l.decisions, 0) AS BIGINT) AS decisions,
  -- Through DECIMAL(38,9): the days are binary floating point (0.07125 arrives as 0.071249...), which DuckDB would round
  -- down and Postgres up; settling them at 9 places first makes both round half up.
  CAST(CAST(l.median_days AS DECIMAL(38,9)) AS DECIMAL(12,4)) AS median_days,
  CAST(CAST(l.p90_days AS DECIMAL(38,9)) AS DECIMAL(12,4)) AS p90_days,
  CAST(CAST(l.mean_days AS DECIMAL(38,9)) AS DECIMAL(12,4)) AS mean_days
FROM programs p
LEFT JOIN per_program l ON l.program_id = p.id
WHERE p._deleted_at IS NULL
ORDER BY p.id
