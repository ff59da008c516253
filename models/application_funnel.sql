-- description: Funnel of each program by stage: applications now in the stage, stage records entered, submitted, reopened, and conversion from the previous stage. Stages are ordered within a program by when applications first entered them. Trashed and deleted applications are left out.
-- includes: applications not deleted and not trashed (state 4), and their stage records (application_stages) not deleted.
-- includes: one row per program and stage with such a stage record or such an application currently in it.
-- includes: stage titles of deleted stages are left out (NULL).
-- column program_id bigint: Program.
-- column stage_id bigint: Stage.
-- column stage_title text: Stage title.
-- column stage_order bigint: Position of the stage in the program (1 = first entered), by the earliest stage record, then stage id.
-- column current_applications bigint: Applications whose current stage is this one.
-- column entered bigint: Applications with a stage record in this stage.
-- column submitted bigint: Stage records in state 0 (Submitted).
-- column reopened bigint: Stage records in state 1 (Reopened).
-- column initialized bigint: Stage records in state 2 (Initialized).
-- column submit_rate decimal(18,6): submitted / entered (6 decimals); NULL when nothing entered.
-- column conversion_rate decimal(18,6): Of the applications with a stage record in the previous stage of the program, the share with one in this stage too, a fraction from 0 to 1 (6 decimals); NULL for the first stage, or when none entered the previous one.
WITH live_applications AS (
  SELECT id, program_id, current_stage_id
  FROM applications
  WHERE _deleted_at IS NULL AND (state IS NULL OR state <> 4)
),
records AS (
  SELECT
    a.program_id,
    s.stage_id,
    count(*) AS entered,
    count(*) FILTER (WHERE s.state = 0) AS submitted,
    count(*) FILTER (WHERE s.state = 1) AS reopened,
    count(*) FILTER (WHERE s.state = 2) AS initialized,
    min(s.created_at) AS first_entered
  FROM application_stages s
  JOIN live_applications a ON a.id = s.application_id
  WHERE s._deleted_at IS NULL
  GROUP BY a.program_id, s.stage_id
),
current_counts AS (
  SELECT program_id, current_stage_id AS stage_id, count(*) AS current_applications
  FROM live_applications
  WHERE current_stage_id IS NOT NULL
  GROUP BY program_id, current_stage_id
),
pairs AS (
  SELECT program_id, stage_id FROM records
  UNION
  SELECT program_id, stage_id FROM current_counts
),
ordered AS (
  SELECT
    k.program_id,
    k.stage_id,
    COALESCE(c.current_applications, 0) AS current_applications,
    COALESCE(r.entered, 0) AS entered,
    COALESCE(r.submitted, 0) AS submitted,
    COALESCE(r.reopened, 0) AS reopened,
    COALESCE(r.initialized, 0) AS initialized,
    row_number() OVER (PARTITION BY k.program_id ORDER BY r.first_entered NULLS LAST, k.stage_id) AS stage_order
  FROM pairs k
  LEFT JOIN records r ON r.program_id = k.program_id AND r.stage_id = k.stage_id
  LEFT JOIN current_counts c ON c.program_id = k.program_id AND c.stage_id = k.stage_id
),
with_previous AS (
  SELECT
    o.*,
    lag(o.stage_id) OVER (PARTITION BY o.program_id ORDER BY o.stage_order) AS previous_stage_id,
    lag(o.entered) OVER (PARTITION BY o.program_id ORDER BY o.stage_order) AS previous_entered
  FROM ordered o
),
stage_applications AS (
  SELECT a.program_id, s.stage_id, s.application_id
  FROM application_stages s
  JOIN live_applications a ON a.id = s.application_id
  WHERE s._deleted_at IS NULL
),
-- Applications of the previous stage that entered this one too: a share of the previous stage's, so at most 1 even
-- when applications enter a stage with no record of the one before.
converted AS (
  SELECT w.program_id, w.stage_id, count(*) AS converted
  FROM with_previous w
  JOIN stage_applications p ON p.program_id = w.program_id AND p.stage_id = w.previous_stage_id
  JOIN stage_applications c
    ON c.program_id = w.program_id AND c.stage_id = w.stage_id AND c.application_id = p.application_id
  GROUP BY w.program_id, w.stage_id
)
SELECT
  CAST(w.program_id AS BIGINT) AS program_id,
  CAST(w.stage_id AS BIGINT) AS stage_id,
  st.title AS stage_title,
  CAST(w.stage_order AS BIGINT) AS stage_order,
  CAST(w.current_applications AS BIGINT) AS current_applications,
  CAST(w.entered AS BIGINT) AS entered,
  CAST(w.submitted AS BIGINT) AS submitted,
  CAST(w.reopened AS BIGINT) AS reopened,
  CAST(w.initialized AS BIGINT) AS initialized,
  -- Through DECIMAL(38,12): DuckDB divides decimals in binary floating point, so 0.5000045 arrives as 0.50000449...;
  -- settling it at 12 places first makes the final rounding half up, the same as Postgres' exact division.
  -- CAST outside (no CASE): Postgres drops the precision of a CASE result.
  CAST(CAST(CAST(w.submitted AS DECIMAL(18,6)) / NULLIF(w.entered, 0) AS DECIMAL(38,12)) AS DECIMAL(18,6)) AS submit_rate,
  CAST(CAST(CAST(COALESCE(v.converted, 0) AS DECIMAL(18,6)) / NULLIF(w.previous_entered, 0) AS DECIMAL(38,12)) AS DECIMAL(18,6)) AS conversion_rate
FROM with_previous w
LEFT JOIN converted v ON v.program_id = w.program_id AND v.stage_id = w.stage_id
LEFT JOIN stages st ON st.id = w.stage_id AND st._deleted_at IS NULL
ORDER BY w.program_id, w.stage_order
