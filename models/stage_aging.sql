-- description: How long applications have been waiting in their current stage, as of the sync: per program, stage and application state, the applications and the median and 90th percentile of the days since they entered the stage. Trashed and deleted applications are left out.
-- includes: applications not deleted and not trashed (state 4) with a current stage (current_stage_id).
-- includes: one row per program, current stage and application state with such an application.
-- includes: an application entered its current stage when its stage record there (application_stages, not deleted) was created; one without such a record, or whose record has no created_at, is counted in applications but not in the days.
-- includes: stage titles of deleted stages and names of deleted programs are left out (NULL).
-- column program_id bigint: Program.
-- column program_name text: Program name.
-- column stage_id bigint: Current stage of the applications.
-- column stage_title text: Stage title.
-- column state integer: Application state (enum application_state: 0 Active, 1 Locked, 2 Hidden, 3 Archived); NULL when unknown.
-- column applications bigint: Applications of the program in this stage and state.
-- column dated bigint: Those of them with a known time of entering the stage (the days below are theirs).
-- column median_days decimal(12,4): Median of the days from entering the stage to as_of (4 decimals); NULL when none is dated.
-- column p90_days decimal(12,4): 90th percentile (continuous) of those days (4 decimals); NULL when none is dated.
-- column as_of timestamptz: When the sync read the applications (the latest _extracted_at of the live ones): the days count to it, so they describe the data, not when the models were built.
WITH live_applications AS (
  SELECT id, program_id, current_stage_id, state
  FROM applications
  WHERE _deleted_at IS NULL AND (state IS NULL OR state <> 4) AND current_stage_id IS NOT NULL
),
as_of AS (
  SELECT max(_extracted_at) AS as_of FROM applications WHERE _deleted_at IS NULL
),
waiting AS (
  SELECT
    a.program_id,
    a.current_stage_id AS stage_id,
    a.state,
    CAST(EXTRACT(EPOCH FROM o.as_of) - EXTRACT(EPOCH FROM s.created_at) AS DOUBLE PRECISION) / 86400.0 AS days
  FROM live_applications a
  CROSS JOIN as_of o
  LEFT JOIN application_stages s
    ON s.application_id = a.id AND s.stage_id = a.current_stage_id AND s._deleted_at IS NULL
),
per_group AS (
  SELECT
    program_id,
    stage_id,
    state,
    count(*) AS applications,
    count(days) AS dated,
    percentile_cont(0.5) WITHIN GROUP (ORDER BY days) AS median_days,
    percentile_cont(0.9) WITHIN GROUP (ORDER BY days) AS p90_days
  FROM waiting
  GROUP BY program_id, stage_id, state
)
SELECT
  CAST(g.program_id AS BIGINT) AS program_id,
  p.name AS program_name,
  CAST(g.stage_id AS BIGINT) AS stage_id,
  st.title AS stage_title,
  CAST(g.state AS INTEGER) AS state,
  CAST(g.applications AS BIGINT) AS applications,
  CAST(g.dated AS BIGINT) AS dated,
  -- Through DECIMAL(38,9): the days are binary floating point (0.07125 arrives as 0.071249...), which DuckDB would round
  -- down and Postgres up; settling them at 9 places first makes both round half up.
  CAST(CAST(g.median_days AS DECIMAL(38,9)) AS DECIMAL(12,4)) AS median_days,
  CAST(CAST(g.p90_days AS DECIMAL(38,9)) AS DECIMAL(12,4)) AS p90_days,
  o.as_of
FROM per_group g
CROSS JOIN as_of o
LEFT JOIN programs p ON p.id = g.program_id AND p._deleted_at IS NULL
LEFT JOIN stages st ON st.id = g.stage_id AND st._deleted_at IS NULL
ORDER BY g.program_id, g.stage_id, g.state
