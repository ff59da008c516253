-- severity: warn
-- description: Each payment's amount equals the sum of its sources (payment_sources); an unknown (NULL) amount, the payment's or a source's, cannot match. Returns the payments that disagree.
SELECT p.id AS payment_id, p.amount, sum(s.amount) AS sources_total
FROM payments p
JOIN payment_sources s ON s.payment_id = p.id AND s._deleted_at IS NULL
WHERE p._deleted_at IS NULL AND p._ref_only = FALSE
GROUP BY p.id, p.amount
-- sum() skips a source whose amount is unknown: the rest matching the payment does not make it match.
HAVING p.amount IS NULL OR count(s.amount) < count(*) OR p.amount <> sum(s.amount)
