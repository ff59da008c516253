import { barSpec, renderChart } from '../charts.ts';
import { formatCount, formatMoney, formatMoneyTotal, formatPercent, formatYesNo, nameOr } from '../format.ts';
import { empty, figure, page, table, type PageContext } from '../html.ts';
import type { ReportData } from '../report-data.ts';
import { financeMissingWhy, hasFinanceData, modelMissing } from './common.ts';

const money = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

export async function fundingPage(data: ReportData, ctx: PageContext): Promise<string> {
  const flow = data.models.funding_flow;
  const funds = data.models.fund_utilization;
  const parts: string[] = [];
  if (flow !== null && funds !== null && !hasFinanceData(data)) {
    parts.push(empty('finance', 'No finance data in this warehouse.', financeMissingWhy(data)));
  } else {
    if (flow === null) parts.push(modelMissing('funding_flow'));
    else if (flow.length === 0)
      parts.push(
        empty(
          'funding-flow',
          'No money moved from funds to programs.',
          ' No transfer or budget links a fund to a program.',
        ),
      );
    else {
      const fund = (r: (typeof flow)[number]): string => nameOr(r.fund_name ?? null, 'fund', r.fund_id ?? null);
      const program = (r: (typeof flow)[number]): string =>
        nameOr(r.program_name ?? null, 'program', r.program_id ?? null);
      const svg = await renderChart(
        barSpec({
          description: 'Money transferred from each fund to each program, stacked by fund.',
          values: flow.map((r) => ({ label: program(r), series: fund(r), value: money(r.transferred) })),
          labelTitle: 'Program',
          valueTitle: 'Transferred',
          seriesTitle: 'Fund',
        }),
      );
      const numbers = table({
        id: 'funding-flow',
        caption: 'Transfers from funds to programs against the program budgets',
        columns: [
          { label: 'Fund' },
          { label: 'Program' },
          { label: 'Transfers', numeric: true },
          { label: 'Transferred', numeric: true },
          { label: 'Budget', numeric: true },
          { label: 'Allocated', numeric: true },
          { label: 'Paid', numeric: true },
          { label: 'Balance', numeric: true },
          { label: 'Reconciled' },
        ],
        rows: flow.map((r) => [
          fund(r),
          program(r),
          formatCount(r.transfers ?? null),
          formatMoney(r.transferred ?? null),
          formatMoney(r.budget ?? null),
          formatMoney(r.allocated ?? null),
          formatMoney(r.paid ?? null),
          formatMoney(r.balance ?? null),
          formatYesNo(r.reconciled ?? null),
        ]),
        foot: [
          'Total',
          '',
          formatCount(flow.reduce((a, r) => a + Number(r.transfers ?? 0), 0)),
          ...(['transferred', 'budget', 'allocated', 'paid', 'balance'] as const).map((c) =>
            formatMoneyTotal(flow.map((r) => r[c] ?? null)),
          ),
          '',
        ],
      });
      parts.push(
        figure(
          'funding-flow',
          'From funds to programs',
          'Money each fund transferred to each program (financial transactions), with what the program budget says was ' +
            'transferred, allocated to applications, paid and left. "Reconciled" means the budget equals the transfers ' +
            'and its balance equals budget minus paid, or budget minus allocated minus paid (the API leaves open which). — marks an amount the warehouse does not know (no budget row, ' +
            'or an unreadable amount).',
          svg,
          numbers,
        ),
      );
    }
    if (funds === null) parts.push(modelMissing('fund_utilization'));
    else if (funds.length > 0) {
      const fund = (r: (typeof funds)[number]): string => nameOr(r.fund_name ?? null, 'fund', r.fund_id ?? null);
      const measures = [
        ['deposits', 'Deposits'],
        ['transferred', 'Transferred out'],
        ['allocated', 'Allocated'],
        ['paid', 'Paid'],
      ] as const;
      const svg = await renderChart(
        barSpec({
          description: "Each fund's deposits, transfers out, allocations and payments.",
          values: funds.flatMap((r) =>
            measures.map(([c, label]) => ({ label: fund(r), series: label, value: money(r[c]) })),
          ),
          labelTitle: 'Fund',
          valueTitle: 'Amount',
          seriesTitle: 'Measure',
          grouped: true,
        }),
      );
      const numbers = table({
        id: 'fund-utilization',
        caption: "Funds' money and utilisation (allocated / deposits)",
        columns: [
          { label: 'Fund' },
          { label: 'Deposits', numeric: true },
          { label: 'Withdrawals', numeric: true },
          { label: 'Transferred out', numeric: true },
          { label: 'Received', numeric: true },
          { label: 'Balance', numeric: true },
          { label: 'Allocated', numeric: true },
          { label: 'Paid', numeric: true },
          { label: 'Utilisation', numeric: true },
          { label: 'Reconciled' },
        ],
        rows: funds.map((r) => [
          fund(r),
          formatMoney(r.deposits ?? null),
          formatMoney(r.withdrawals ?? null),
          formatMoney(r.transferred ?? null),
          formatMoney(r.received ?? null),
          formatMoney(r.balance ?? null),
          formatMoney(r.allocated ?? null),
          formatMoney(r.paid ?? null),
          formatPercent(r.utilization_rate ?? null),
          formatYesNo(r.reconciled ?? null),
        ]),
        foot: [
          'Total',
          ...(['deposits', 'withdrawals', 'transferred', 'received', 'balance', 'allocated', 'paid'] as const).map(
            (c) => formatMoneyTotal(funds.map((r) => r[c] ?? null)),
          ),
          '',
          '',
        ],
      });
      parts.push(
        figure(
          'fund-utilization',
          "Funds' utilisation",
          "Each fund's deposits against what its program budgets allocated to applications and paid. Utilisation is " +
            'allocated / deposits, as the fund record has it; "Reconciled" means the balance from the transactions equals the balance on the fund ' +
            'record.',
          svg,
          numbers,
        ),
      );
    }
  }
  return page(
    'funding.html',
    'Funding',
    'Where the money comes from and where it goes: funds, the programs they pay into, and what is allocated and paid.',
    parts.join('\n'),
    ctx,
  );
}
