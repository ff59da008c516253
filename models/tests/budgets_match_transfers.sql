-- severity: warn
-- description: Each program fund budget equals the fund-to-program transfers (financial transactions, 0 when none) and its balance equals budget minus paid or budget minus allocated minus paid (spec 2.12 allows either reading of the balance, so a budget consistent under one passes); a missing budget, amount or balance cannot reconcile. Returns the (fund, program) pairs that disagree, exactly those funding_flow marks as not reconciled.
WITH transfers AS (
  -- Unknown (NULL) amounts make the total unknown, as in funding_flow: a sum skipping them would look exact.
  SELECT source_fund_id AS fund_id, destination_program_id AS program_id,
         CASE WHEN count(amount) = count(*) THEN sum(amount) END AS transferred
  FROM financial_transactions
  WHERE _deleted_at IS NULL AND transaction_type = 2
    AND source_fund_id IS NOT NULL AND destination_program_id IS NOT NULL
  GROUP BY source_fund_id, destination_program_id
),
budget_totals AS (
  SELECT fund_id, program_id,
         CASE WHEN count(budget) = count(*) THEN sum(budget) END AS budget,
         CASE WHEN count(allocated) = count(*) THEN sum(allocated) END AS allocated,
         CASE WHEN count(paid) = count(*) THEN sum(paid) END AS paid,
         CASE WHEN count(balance) = count(*) THEN sum(balance) END AS balance
  FROM budgets
  WHERE _deleted_at IS NULL AND fund_id IS NOT NULL AND program_id IS NOT NULL
  GROUP BY fund_id, program_id
)
SELECT COALESCE(b.fund_id, t.fund_id) AS fund_id, COALESCE(b.program_id, t.program_id) AS program_id,
       b.budget, t.transferred, b.allocated, b.paid, b.balance
FROM budget_totals b
FULL OUTER JOIN transfers t ON t.fund_id = b.fund_id AND t.program_id = b.program_id
-- Same rule as funding_flow.reconciled: no transfers means 0 transferred (a new budget of 0 is fine), and a
-- NULL anywhere (an amount that could not be typed) is a disagreement, not a pass. The spec does not say whether the
-- balance is net of allocations: either reading that holds reconciles (an unknown allocated only rules out its own).
WHERE NOT COALESCE(
  b.budget = CASE WHEN t.fund_id IS NULL THEN 0 ELSE t.transferred END
    AND (b.balance = b.budget - b.paid OR b.balance = b.budget - b.allocated - b.paid),
  FALSE)
