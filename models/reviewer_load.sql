-- description: Review load of each reviewer per program and stage (reviewer assignments), with the reviewer's share of the stage's load. Every live assignment counts, those of trashed or deleted applications too (review_progress.assignments_listed leaves those out).
-- includes: every assignment not deleted, those of trashed or deleted applications too.
-- includes: names of deleted reviewers and stages are left out (NULL).
-- column reviewer_id bigint identifier: Reviewer (users.id).
-- column program_id bigint: Program of the assignments (the assignment's program, else the application's).
-- column stage_id bigint: Stage of the assignments.
-- column reviewer_name text identifier: First and last name of the reviewer.
-- column reviewer_email text identifier: Email of the reviewer.
-- column stage_title text: Title of the stage.
-- column assigned bigint: Number of assignments of this reviewer in this program and stage.
-- column stage_assigned bigint: Assignments of all reviewers in this program and stage.
-- column stage_reviewers bigint: Reviewers with at least one assignment in this program and stage.
-- column stage_share decimal(9,6): assigned / stage_assigned: the reviewer's share of the stage's assignments, a fraction from 0 to 1 (6 decimals).
WITH live_assignments AS (
  SELECT s.reviewer_id, COALESCE(s.program_id, a.program_id) AS program_id, s.stage_id
  FROM assignments s
  LEFT JOIN applications a ON a.id = s.application_id AND a._deleted_at IS NULL
  WHERE s._deleted_at IS NULL
),
per_reviewer AS (
  SELECT reviewer_id, program_id, stage_id, count(*) AS assigned
  FROM live_assignments
  GROUP BY reviewer_id, program_id, stage_id
),
with_stage AS (
  SELECT
    r.*,
    sum(r.assigned) OVER (PARTITION BY r.program_id, r.stage_id) AS stage_assigned,
    count(*) OVER (PARTITION BY r.program_id, r.stage_id) AS stage_reviewers
  FROM per_reviewer r
)
SELECT
  CAST(w.reviewer_id AS BIGINT) AS reviewer_id,
  CAST(w.program_id AS BIGINT) AS program_id,
  CAST(w.stage_id AS BIGINT) AS stage_id,
  NULLIF(concat_ws(' ', u.first_name, u.last_name), '') AS reviewer_name,
  u.email AS reviewer_email,
  st.title AS stage_title,
  CAST(w.assigned AS BIGINT) AS assigned,
  CAST(w.stage_assigned AS BIGINT) AS stage_assigned,
  CAST(w.stage_reviewers AS BIGINT) AS stage_reviewers,
  -- Through DECIMAL(38,12): DuckDB divides decimals in binary floating point, so 0.5000045 arrives as 0.50000449...;
  -- settling it at 12 places first makes the final rounding half up, the same as Postgres' exact division.
  CAST(CAST(CAST(w.assigned AS DECIMAL(18,6)) / w.stage_assigned AS DECIMAL(38,12)) AS DECIMAL(9,6)) AS stage_share
FROM with_stage w
LEFT JOIN users u ON u.id = w.reviewer_id AND u._deleted_at IS NULL
LEFT JOIN stages st ON st.id = w.stage_id AND st._deleted_at IS NULL
ORDER BY w.reviewer_id, w.program_id, w.stage_id
