-- severity: warn
-- description: Payments listed on awards (award_payments) agree with the payments themselves: same amount, and the payment points back at that award. Returns the rows that disagree.
SELECT ap.award_id, ap.payment_id, ap.amount AS award_payment_amount, p.amount AS payment_amount, p.decision_award_id
FROM award_payments ap
JOIN awards w ON w.id = ap.award_id AND w._deleted_at IS NULL
LEFT JOIN payments p ON p.id = ap.payment_id AND p._deleted_at IS NULL
WHERE ap._deleted_at IS NULL
  AND (p.id IS NULL OR p.amount IS DISTINCT FROM ap.amount
       OR (p.decision_award_id IS NOT NULL AND p.decision_award_id <> ap.award_id))
