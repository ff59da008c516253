-- description: Award rate of each program per year of the decision: applications decided, awarded and declined that year, the rate and the awarded value. Trashed and deleted applications are left out.
-- includes: awards not deleted with decision 0 (Awarded) or 1 (Declined), of applications not deleted and not trashed (state 4); the program is the application's.
-- includes: one row per program and year with such a decision; the year is that of the decision time (awarded_at, else created_at) in UTC, NULL when neither is known.
-- includes: names of deleted programs are left out (NULL); their rows stay.
-- column program_id bigint: Program (the application's).
-- column program_name text: Program name.
-- column decision_year integer: Year of the decision (awarded_at, else created_at), in UTC; NULL when the award has neither.
-- column decided bigint: Decisions that year: awarded + declined.
-- column awarded bigint: Awards with decision 0 (Awarded) that year.
-- column declined bigint: Awards with decision 1 (Declined) that year.
-- column award_rate decimal(9,6): awarded / decided, a fraction from 0 to 1 (6 decimals).
-- column awarded_value decimal: Sum of awards.value of the awarded ones that year (0 when none), DECIMAL(18,2); NULL when the value of an awarded one is unknown (NULL: absent or not a readable amount), not a total missing it.
WITH decisions AS (
  SELECT
    a.program_id,
    -- In UTC whatever the session's time zone (DuckDB's is the machine's).
    CAST(EXTRACT(YEAR FROM (COALESCE(w.awarded_at, w.created_at) AT TIME ZONE 'UTC')) AS INTEGER) AS decision_year,
    w.decision,
    w.value
  FROM awards w
  JOIN applications a ON a.id = w.application_id
  WHERE w._deleted_at IS NULL AND a._deleted_at IS NULL AND (a.state IS NULL OR a.state <> 4)
    AND w.decision IN (0, 1)
),
per_year AS (
  SELECT
    program_id,
    decision_year,
    count(*) AS decided,
    count(*) FILTER (WHERE decision = 0) AS awarded,
    count(*) FILTER (WHERE decision = 1) AS declined,
    sum(value) FILTER (WHERE decision = 0) AS awarded_value,
    count(*) FILTER (WHERE decision = 0 AND value IS NULL) AS awarded_unknown
  FROM decisions
  GROUP BY program_id, decision_year
)
SELECT
  CAST(y.program_id AS BIGINT) AS program_id,
  p.name AS program_name,
  CAST(y.decision_year AS INTEGER) AS decision_year,
  CAST(y.decided AS BIGINT) AS decided,
  CAST(y.awarded AS BIGINT) AS awarded,
  CAST(y.declined AS BIGINT) AS declined,
  -- Through DECIMAL(38,12): DuckDB divides decimals in binary floating point, so 0.5000045 arrives as 0.50000449...;
  -- settling it at 12 places first makes the final rounding half up, the same as Postgres' exact division.
  CAST(CAST(CAST(y.awarded AS DECIMAL(18,6)) / y.decided AS DECIMAL(38,12)) AS DECIMAL(9,6)) AS award_rate,
  -- sum() skips a NULL value: the total would look exact while missing an award, so it is unknown instead.
  CAST(CASE WHEN y.awarded_unknown = 0 THEN COALESCE(y.awarded_value, 0) END AS DECIMAL(18,2)) AS awarded_value
FROM per_year y
LEFT JOIN programs p ON p.id = y.program_id AND p._deleted_at IS NULL
ORDER BY y.program_id, y.decision_year
