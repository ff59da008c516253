-- severity: warn
-- description: Each fund's deposits and transfers received minus withdrawals and transfers made (financial transactions) equal its balance; an unknown (NULL) balance or amount cannot reconcile. Returns the funds that disagree.
WITH movements AS (
  SELECT
    f.id AS fund_id,
    f.balance,
    -- An unknown amount makes the total unknown, as in fund_utilization: a sum skipping it would look exact.
    CASE WHEN count(*) FILTER (
      WHERE t.amount IS NULL AND ((t.transaction_type = 0 AND t.destination_fund_id = f.id)
        OR (t.transaction_type = 1 AND t.source_fund_id = f.id) OR t.transaction_type = 2)) = 0 THEN
      COALESCE(sum(t.amount) FILTER (WHERE t.transaction_type = 0 AND t.destination_fund_id = f.id), 0)
        - COALESCE(sum(t.amount) FILTER (WHERE t.transaction_type = 1 AND t.source_fund_id = f.id), 0)
        - COALESCE(sum(t.amount) FILTER (WHERE t.transaction_type = 2 AND t.source_fund_id = f.id), 0)
        + COALESCE(sum(t.amount) FILTER (WHERE t.transaction_type = 2 AND t.destination_fund_id = f.id), 0)
    END AS from_transactions
  FROM funds f
  LEFT JOIN financial_transactions t
    ON t._deleted_at IS NULL AND (t.source_fund_id = f.id OR t.destination_fund_id = f.id)
  WHERE f._deleted_at IS NULL AND f._ref_only = FALSE
  GROUP BY f.id, f.balance
)
SELECT fund_id, balance, from_transactions
FROM movements
WHERE balance IS NULL OR from_transactions IS NULL OR balance <> from_transactions
