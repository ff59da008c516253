-- description: Review progress per program and stage, from the stage records of applications (reviews assigned, submitted, completed), with the assignments listed for the same stage. Trashed and deleted applications are left out.
-- includes: stage records (application_stages) not deleted of applications not deleted and not trashed (state 4).
-- includes: assignments not deleted of those applications.
-- includes: one row per program and stage with such a stage record.
-- column program_id bigint: Program.
-- column stage_id bigint: Stage.
-- column stage_title text: Stage title.
-- column applications bigint: Applications with a stage record in this stage.
-- column reviews_assigned bigint: Sum of reviews_assigned of the stage records.
-- column reviews_submitted bigint: Sum of reviews_submitted of the stage records.
-- column reviews_completed bigint: Sum of reviews_completed of the stage records.
-- column completion_rate decimal(18,6): reviews_completed / reviews_assigned (6 decimals); NULL when nothing is assigned.
-- column assignments_listed bigint: Reviewer assignments (assignments table) of those applications in this stage.
WITH live_applications AS (
  SELECT id, program_id
  FROM applications
  WHERE _deleted_at IS NULL AND (state IS NULL OR state <> 4)
),
records AS (
  SELECT
    a.program_id,
    s.stage_id,
    count(*) AS applications,
    COALESCE(sum(s.reviews_assigned), 0) AS reviews_assigned,
    COALESCE(sum(s.reviews_submitted), 0) AS reviews_submitted,
    COALESCE(sum(s.reviews_completed), 0) AS reviews_completed
  FROM application_stages s
  JOIN live_applications a ON a.id = s.application_id
  WHERE s._deleted_at IS NULL
  GROUP BY a.program_id, s.stage_id
),
listed AS (
  SELECT a.program_id, s.stage_id, count(*) AS assignments_listed
  FROM assignments s
  JOIN live_applications a ON a.id = s.application_id
  WHERE s._deleted_at IS NULL
  GROUP BY a.program_id, s.stage_id
)
SELECT
  CAST(r.program_id AS BIGINT) AS program_id,
  CAST(r.stage_id AS BIGINT) AS stage_id,
  st.title AS stage_title,
  CAST(r.applications AS BIGINT) AS applications,
  CAST(r.reviews_assigned AS BIGINT) AS reviews_assigned,
  CAST(r.reviews_submitted AS BIGINT) AS reviews_submitted,
  CAST(r.reviews_completed AS BIGINT) AS reviews_completed,
  -- Through DECIMAL(38,12): DuckDB divides decimals in binary floating point, so 0.5000045 arrives as 0.50000449...;
  -- settling it at 12 places first makes the final rounding half up, the same as Postgres' exact division.
  CAST(CAST(CAST(r.reviews_completed AS DECIMAL(18,6)) / NULLIF(r.reviews_assigned, 0) AS DECIMAL(38,12)) AS DECIMAL(18,6)) AS completion_rate,
  CAST(COALESCE(l.assignments_listed, 0) AS BIGINT) AS assignments_listed
FROM records r
LEFT JOIN listed l ON l.program_id = r.program_id AND l.stage_id = r.stage_id
LEFT JOIN stages st ON st.id = r.stage_id AND st._deleted_at IS NULL
ORDER BY r.program_id, r.stage_id
