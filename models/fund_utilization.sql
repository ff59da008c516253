-- description: Each fund's money from its transactions (deposits, withdrawals, transfers out of and into the fund) against the fund record, with budgets' allocations and payments.
-- primary_key: fund_id
-- includes: every fund not deleted, those known only from references too (reconciled NULL).
-- includes: financial transactions not deleted with the fund as source or destination; budgets not deleted.
-- column fund_id bigint: Fund.
-- column fund_name text: Fund name.
-- column deposits decimal: Sum of deposits into the fund (transaction_type 0). This and the other sums are NULL when an amount in them is unknown (NULL: absent or not a readable amount), not a total missing it.
-- column withdrawals decimal: Sum of withdrawals from the fund (transaction_type 1).
-- column transferred decimal: Sum of transfers out of the fund (transaction_type 2 with the fund as source), whatever the destination: a program, another fund, an application.
-- column received decimal: Sum of transfers into the fund (transaction_type 2 with the fund as destination), whatever the source.
-- column balance_from_transactions decimal: deposits + received - withdrawals - transferred.
-- column balance decimal: Balance on the fund record.
-- column allocated decimal: Allocated to applications, summed over the fund's program budgets.
-- column paid decimal: Paid to applications, summed over the fund's program budgets.
-- column utilization_rate decimal(18,4): allocated / deposits, a fraction (1 = every deposit allocated; above 1 only when more was allocated than deposited; 4 decimals), the unit and rounding of funds.utilization_rate; NULL without deposits, or when either is unknown.
-- column reconciled boolean: True when balance_from_transactions equals the fund record's balance (false when either is unknown); NULL when the fund is known only from references (no balance to compare).
WITH movements AS (
  -- sum() skips NULL amounts (absent, or not readable): a total missing one would look exact, so it is NULL instead.
  SELECT
    f.id AS fund_id,
    CASE WHEN count(*) FILTER (WHERE t.transaction_type = 0 AND t.destination_fund_id = f.id AND t.amount IS NULL) = 0
      THEN COALESCE(sum(t.amount) FILTER (WHERE t.transaction_type = 0 AND t.destination_fund_id = f.id), 0) END AS deposits,
    CASE WHEN count(*) FILTER (WHERE t.transaction_type = 1 AND t.source_fund_id = f.id AND t.amount IS NULL) = 0
      THEN COALESCE(sum(t.amount) FILTER (WHERE t.transaction_type = 1 AND t.source_fund_id = f.id), 0) END AS withdrawals,
    CASE WHEN count(*) FILTER (WHERE t.transaction_type = 2 AND t.source_fund_id = f.id AND t.amount IS NULL) = 0
      THEN COALESCE(sum(t.amount) FILTER (WHERE t.transaction_type = 2 AND t.source_fund_id = f.id), 0) END AS transferred,
    CASE WHEN count(*) FILTER (WHERE t.transaction_type = 2 AND t.destination_fund_id = f.id AND t.amount IS NULL) = 0
      THEN COALESCE(sum(t.amount) FILTER (WHERE t.transaction_type = 2 AND t.destination_fund_id = f.id), 0) END AS received
  FROM funds f
  LEFT JOIN financial_transactions t
    ON t._deleted_at IS NULL AND (t.source_fund_id = f.id OR t.destination_fund_id = f.id)
  WHERE f._deleted_at IS NULL
  GROUP BY f.id
),
budget_totals AS (
  SELECT
    fund_id,
    CASE WHEN count(allocated) = count(*) THEN sum(allocated) END AS allocated,
    CASE WHEN count(paid) = count(*) THEN sum(paid) END AS paid
  FROM budgets
  WHERE _deleted_at IS NULL
  GROUP BY fund_id
)
SELECT
  CAST(f.id AS BIGINT) AS fund_id,
  f.name AS fund_name,
  CAST(m.deposits AS DECIMAL(18,2)) AS deposits,
  CAST(m.withdrawals AS DECIMAL(18,2)) AS withdrawals,
  CAST(m.transferred AS DECIMAL(18,2)) AS transferred,
  CAST(m.received AS DECIMAL(18,2)) AS received,
  CAST(m.deposits + m.received - m.withdrawals - m.transferred AS DECIMAL(18,2)) AS balance_from_transactions,
  CAST(f.balance AS DECIMAL(18,2)) AS balance,
  CAST(CASE WHEN b.fund_id IS NULL THEN 0 ELSE b.allocated END AS DECIMAL(18,2)) AS allocated,
  CAST(CASE WHEN b.fund_id IS NULL THEN 0 ELSE b.paid END AS DECIMAL(18,2)) AS paid,
  -- A fraction at 4 decimals: the rounding of the site's funds.utilization (a percentage at 2), so the two compare.
  -- Through DECIMAL(38,12): DuckDB divides decimals in binary floating point, so 0.50005 arrives as 0.5000499...;
  -- settling it at 12 places first makes the final rounding half up, the same as Postgres' exact division.
  CAST(CAST(CAST(CASE WHEN b.fund_id IS NULL THEN 0 ELSE b.allocated END AS DECIMAL(18,6)) / NULLIF(m.deposits, 0) AS DECIMAL(38,12)) AS DECIMAL(18,4)) AS utilization_rate,
  CASE
    WHEN f._ref_only THEN NULL
    ELSE COALESCE(f.balance = m.deposits + m.received - m.withdrawals - m.transferred, FALSE)
  END AS reconciled
FROM funds f
JOIN movements m ON m.fund_id = f.id
LEFT JOIN budget_totals b ON b.fund_id = f.id
ORDER BY f.id
