-- description: Award rate of each program: applications (not trashed), awarded and declined decisions, rate and awarded value. Every program has a row.
-- primary_key: program_id
-- includes: every program not deleted, one without applications too (zeros).
-- includes: applications not deleted and not trashed (state 4); awards not deleted of those applications.
-- includes: decision 0 counts as awarded, 1 as declined; awards without a decision count in neither.
-- column program_id bigint: Program id.
-- column program_name text: Program name.
-- column applications bigint: Applications of the program that are not trashed (state 4) and not deleted.
-- column awarded bigint: Awards with decision 0 (Awarded) among those applications.
-- column declined bigint: Awards with decision 1 (Declined) among those applications.
-- column award_rate decimal(9,6): awarded / (awarded + declined), a fraction from 0 to 1 (6 decimals); NULL when both are 0.
-- column awarded_value decimal: Sum of awards.value of the awarded ones (0 when none), DECIMAL(18,2); NULL when the value of an awarded one is unknown (NULL: absent or not a readable amount), not a total missing it.
WITH live_applications AS (
  SELECT id, program_id
  FROM applications
  WHERE _deleted_at IS NULL AND (state IS NULL OR state <> 4)
),
application_counts AS (
  SELECT program_id, count(*) AS applications
  FROM live_applications
  GROUP BY program_id
),
decisions AS (
  SELECT
    a.program_id,
    count(*) FILTER (WHERE w.decision = 0) AS awarded,
    count(*) FILTER (WHERE w.decision = 1) AS declined,
    sum(w.value) FILTER (WHERE w.decision = 0) AS awarded_value,
    count(*) FILTER (WHERE w.decision = 0 AND w.value IS NULL) AS awarded_unknown
  FROM awards w
  JOIN live_applications a ON a.id = w.application_id
  WHERE w._deleted_at IS NULL
  GROUP BY a.program_id
)
SELECT
  CAST(p.id AS BIGINT) AS program_id,
  p.name AS program_name,
  CAST(COALESCE(c.applications, 0) AS BIGINT) AS applications,
  CAST(COALESCE(d.awarded, 0) AS BIGINT) AS awarded,
  CAST(COALESCE(d.declined, 0) AS BIGINT) AS declined,
  -- Through DECIMAL(38,12): DuckDB divides decimals in binary floating point, so 0.5000045 arrives as 0.50000449...;
  -- settling it at 12 places first makes the final rounding half up, the same as Postgres' exact division.
  -- NULL when there are no decisions (division by NULL); CAST outside so Postgres keeps DECIMAL(9,6).
  CAST(CAST(CAST(COALESCE(d.awarded, 0) AS DECIMAL(18,6)) / NULLIF(COALESCE(d.awarded, 0) + COALESCE(d.declined, 0), 0) AS DECIMAL(38,12)) AS DECIMAL(9,6)) AS award_rate,
  -- sum() skips a NULL value: the total would look exact while missing an award, so it is unknown instead.
  CAST(CASE WHEN COALESCE(d.awarded_unknown, 0) = 0 THEN COALESCE(d.awarded_value, 0) END AS DECIMAL(18,2)) AS awarded_value
FROM programs p
LEFT JOIN application_counts c ON c.program_id = p.id
LEFT JOIN decisions d ON d.program_id = p.id
WHERE p._deleted_at IS NULL
ORDER BY p.id
