-- severity: warn
-- description: No award is paid more than its value (sum of its payments against awards.value). Returns the overpaid awards.
SELECT w.id AS award_id, w.value, sum(p.amount) AS paid
FROM awards w
JOIN payments p ON p.decision_award_id = w.id AND p._deleted_at IS NULL
WHERE w._deleted_at IS NULL AND w.value IS NOT NULL
GROUP BY w.id, w.value
HAVING sum(p.amount) > w.value
