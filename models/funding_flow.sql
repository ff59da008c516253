-- description: Money from each fund to each program: transfers (financial transactions) against the program fund budget, with a reconciliation flag.
-- includes: every (fund, program) pair with a transfer (transaction_type 2 from a fund to a program, not deleted) or a budget row not deleted.
-- includes: names of deleted funds and programs are left out (NULL); their pairs stay.
-- column fund_id bigint: Fund.
-- column program_id bigint: Program.
-- column fund_name text: Fund name.
-- column program_name text: Program name.
-- column transfers bigint: Number of fund-to-program transfer transactions.
-- column transferred decimal: Sum of fund-to-program transfer transactions (transaction_type 2 from a fund to a program), 0 when none; NULL when the amount of one is unknown (NULL: absent or not a readable amount).
-- column budget decimal: Total transferred according to the program fund budget (budgets.budget); NULL when there is no budget row or its amount is unknown.
-- column allocated decimal: Allocated to applications according to the budget; NULL when there is no budget row or its amount is unknown.
-- column paid decimal: Paid to applications according to the budget; NULL when there is no budget row or its amount is unknown.
-- column balance decimal: Current balance according to the budget; NULL when there is no budget row or its amount is unknown.
-- column reconciled boolean: True when a budget row exists, its budget equals the transfers and its balance equals budget minus paid or budget minus allocated minus paid (the spec allows either reading); false when an amount a reading needs is unknown.
WITH transfers AS (
  -- sum() skips NULL amounts (absent, or not readable): a total missing one would look exact, so it is NULL instead.
  SELECT
    source_fund_id AS fund_id,
    destination_program_id AS program_id,
    count(*) AS transfers,
    CASE WHEN count(amount) = count(*) THEN sum(amount) END AS transferred
  FROM financial_transactions
  WHERE _deleted_at IS NULL AND transaction_type = 2
    AND source_fund_id IS NOT NULL AND destination_program_id IS NOT NULL
  GROUP BY source_fund_id, destination_program_id
),
budget_totals AS (
  SELECT
    fund_id,
    program_id,
    CASE WHEN count(budget) = count(*) THEN sum(budget) END AS budget,
    CASE WHEN count(allocated) = count(*) THEN sum(allocated) END AS allocated,
    CASE WHEN count(paid) = count(*) THEN sum(paid) END AS paid,
    CASE WHEN count(balance) = count(*) THEN sum(balance) END AS balance
  FROM budgets
  WHERE _deleted_at IS NULL AND fund_id IS NOT NULL AND program_id IS NOT NULL
  GROUP BY fund_id, program_id
),
pairs AS (
  SELECT fund_id, program_id FROM transfers
  UNION
  SELECT fund_id, program_id FROM budget_totals
)
SELECT
  CAST(k.fund_id AS BIGINT) AS fund_id,
  CAST(k.program_id AS BIGINT) AS program_id,
  f.name AS fund_name,
  p.name AS program_name,
  CAST(COALESCE(t.transfers, 0) AS BIGINT) AS transfers,
  CAST(CASE WHEN t.fund_id IS NULL THEN 0 ELSE t.transferred END AS DECIMAL(18,2)) AS transferred,
  CAST(b.budget AS DECIMAL(18,2)) AS budget,
  CAST(b.allocated AS DECIMAL(18,2)) AS allocated,
  CAST(b.paid AS DECIMAL(18,2)) AS paid,
  CAST(b.balance AS DECIMAL(18,2)) AS balance,
  COALESCE(
    b.fund_id IS NOT NULL
      AND b.budget = CASE WHEN t.fund_id IS NULL THEN 0 ELSE t.transferred END
      -- Spec 2.12 leaves open whether the balance is net of allocations: either reading that holds reconciles.
      AND (b.balance = b.budget - b.paid OR b.balance = b.budget - b.allocated - b.paid),
    FALSE
  ) AS reconciled
FROM pairs k
LEFT JOIN transfers t ON t.fund_id = k.fund_id AND t.program_id = k.program_id
LEFT JOIN budget_totals b ON b.fund_id = k.fund_id AND b.program_id = k.program_id
LEFT JOIN funds f ON f.id = k.fund_id AND f._deleted_at IS NULL
LEFT JOIN programs p ON p.id = k.program_id AND p._deleted_at IS NULL
ORDER BY k.fund_id, k.program_id
