/**
 * Every model computed in TypeScript from the rows a test loaded, with exact arithmetic (integer cents and BigInt
 * fractions, never binary floating point): what each model's table must hold, every column, to the last digit.
 * It follows the meanings in the models' column descriptions, not their SQL.
 */
import type { CellValue, Row } from '../../src/normalize/table-def.ts';
import { loadedAt, type Dataset } from './model-fixtures.ts';

type Out = Record<string, CellValue>;

const isLive = (r: Row): boolean => r._deleted_at === null || r._deleted_at === undefined;
const live = (d: Dataset, table: string): Row[] => (d[table] ?? []).filter(isLive);
const num = (v: CellValue | undefined): number | null => (v === null || v === undefined ? null : Number(v));

/** Money text ("-12.3", "5") as integer cents; null stays null (an unknown amount). */
export function cents(v: CellValue | undefined): bigint | null {
  if (v === null || v === undefined) return null;
  const m = /^(-?)(\d+)(?:\.(\d{1,2}))?$/.exec(String(v));
  if (!m) throw new Error(`not money: ${String(v)}`);
  const c = BigInt(m[2] ?? '0') * 100n + BigInt((m[3] ?? '0').padEnd(2, '0'));
  return m[1] ? -c : c;
}

/** A total that is unknown when one of its amounts is; 0 for none. */
const total = (amounts: (bigint | null)[]): bigint | null =>
  amounts.some((a) => a === null) ? null : amounts.reduce<bigint>((s, a) => s + (a ?? 0n), 0n);

/** num / den rounded half away from zero to `scale` decimals, as DECIMAL text. */
export function decimal(n: bigint, d: bigint, scale: number): string {
  if (d < 0n) return decimal(-n, -d, scale);
  const negative = n < 0n;
  const abs = negative ? -n : n;
  const factor = 10n ** BigInt(scale);
  const scaled = (2n * abs * factor + d) / (2n * d);
  const digits = scaled.toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative && scaled !== 0n ? `-${text}` : text;
}
const money = (c: bigint | null): string | null => (c === null ? null : decimal(c, 100n, 2));
const ratio = (n: bigint | null, d: bigint | null, scale = 6): string | null =>
  n === null || d === null || d === 0n ? null : decimal(n, d, scale);

const group = <T>(rows: T[], key: (r: T) => string): Map<string, T[]> => {
  const out = new Map<string, T[]>();
  for (const r of rows) out.set(key(r), [...(out.get(key(r)) ?? []), r]);
  return out;
};
const byId = (d: Dataset, table: string): Map<number, Row> => new Map(live(d, table).map((r) => [Number(r.id), r]));
/** Applications that count: not deleted and not trashed (state 4). */
const countedApps = (d: Dataset): Map<number, Row> =>
  new Map(
    live(d, 'applications')
      .filter((a) => a.state !== 4)
      .map((a) => [Number(a.id), a]),
  );
const title = (d: Dataset, stageId: CellValue | undefined): CellValue =>
  byId(d, 'stages').get(Number(stageId))?.title ?? null;
const name = (d: Dataset, table: string, id: CellValue | undefined): CellValue =>
  byId(d, table).get(Number(id))?.name ?? null;
const sumOf = (rows: Row[], column: string): bigint => rows.reduce((s, r) => s + BigInt(num(r[column]) ?? 0), 0n);

export function awardRates(d: Dataset): Out[] {
  const apps = countedApps(d);
  return live(d, 'programs').map((p) => {
    const pid = Number(p.id);
    const awards = live(d, 'awards').filter((w) => num(apps.get(Number(w.application_id))?.program_id) === pid);
    const awarded = awards.filter((w) => w.decision === 0);
    const declined = awards.filter((w) => w.decision === 1).length;
    return {
      program_id: pid,
      program_name: p.name ?? null,
      applications: [...apps.values()].filter((a) => num(a.program_id) === pid).length,
      awarded: awarded.length,
      declined,
      award_rate: ratio(BigInt(awarded.length), BigInt(awarded.length + declined)),
      awarded_value: money(total(awarded.map((w) => cents(w.value)))),
    };
  });
}

export function reviewerLoad(d: Dataset): Out[] {
  const apps = byId(d, 'applications');
  const rows = live(d, 'assignments').map((s) => ({
    reviewer: num(s.reviewer_id),
    program: num(s.program_id) ?? num(apps.get(Number(s.application_id))?.program_id),
    stage: num(s.stage_id),
  }));
  const perReviewer = group(rows, (r) => `${r.reviewer}/${r.program}/${r.stage}`);
  const perStage = group(rows, (r) => `${r.program}/${r.stage}`);
  const users = byId(d, 'users');
  return [...perReviewer.values()].map((mine) => {
    const { reviewer, program, stage } = mine[0]!;
    const stageRows = perStage.get(`${program}/${stage}`) ?? [];
    const u = users.get(Number(reviewer));
    const fullName = [u?.first_name, u?.last_name].filter((x) => x !== null && x !== undefined).join(' ');
    return {
      reviewer_id: reviewer,
      program_id: program,
      stage_id: stage,
      reviewer_name: fullName === '' ? null : fullName,
      reviewer_email: u?.email ?? null,
      stage_title: title(d, stage),
      assigned: mine.length,
      stage_assigned: stageRows.length,
      stage_reviewers: new Set(stageRows.map((r) => r.reviewer)).size,
      stage_share: ratio(BigInt(mine.length), BigInt(stageRows.length)),
    };
  });
}

export function fundingFlow(d: Dataset): Out[] {
  const transfers = group(
    live(d, 'financial_transactions').filter(
      (t) => t.transaction_type === 2 && num(t.source_fund_id) !== null && num(t.destination_program_id) !== null,
    ),
    (t) => `${num(t.source_fund_id)}/${num(t.destination_program_id)}`,
  );
  const budgets = group(
    live(d, 'budgets').filter((b) => num(b.fund_id) !== null && num(b.program_id) !== null),
    (b) => `${num(b.fund_id)}/${num(b.program_id)}`,
  );
  return [...new Set([...transfers.keys(), ...budgets.keys()])].map((key) => {
    const [fund, program] = key.split('/').map(Number);
    const sent = transfers.get(key) ?? [];
    const mine = budgets.get(key);
    const budgetSum = (c: string): bigint | null => (mine ? total(mine.map((b) => cents(b[c]))) : null);
    const [budget, paid, balance] = [budgetSum('budget'), budgetSum('paid'), budgetSum('balance')];
    const transferred = total(sent.map((t) => cents(t.amount)));
    return {
      fund_id: fund ?? null,
      program_id: program ?? null,
      fund_name: name(d, 'funds', fund),
      program_name: name(d, 'programs', program),
      transfers: sent.length,
      transferred: money(transferred),
      budget: money(budget),
      allocated: money(budgetSum('allocated')),
      paid: money(paid),
      balance: money(balance),
      reconciled:
        budget !== null &&
        paid !== null &&
        balance !== null &&
        transferred !== null &&
        budget === transferred &&
        balance === budget - paid,
    };
  });
}

export function fundUtilization(d: Dataset): Out[] {
  const txns = live(d, 'financial_transactions');
  return live(d, 'funds').map((f) => {
    const id = Number(f.id);
    const moved = (type: number, side: 'source' | 'destination'): bigint | null =>
      total(
        txns.filter((t) => t.transaction_type === type && num(t[`${side}_fund_id`]) === id).map((t) => cents(t.amount)),
      );
    const [deposits, withdrawals, transferred, received] = [
      moved(0, 'destination'),
      moved(1, 'source'),
      moved(2, 'source'),
      moved(2, 'destination'),
    ];
    const fromTransactions =
      deposits === null || withdrawals === null || transferred === null || received === null
        ? null
        : deposits + received - withdrawals - transferred;
    const budgets = live(d, 'budgets').filter((b) => num(b.fund_id) === id);
    const allocated = total(budgets.map((b) => cents(b.allocated)));
    const balance = cents(f.balance);
    return {
      fund_id: id,
      fund_name: f.name ?? null,
      deposits: money(deposits),
      withdrawals: money(withdrawals),
      transferred: money(transferred),
      received: money(received),
      balance_from_transactions: money(fromTransactions),
      balance: money(balance),
      allocated: money(allocated),
      paid: money(total(budgets.map((b) => cents(b.paid)))),
      utilization_rate: ratio(allocated, deposits, 4),
      reconciled: f._ref_only === true ? null : balance !== null && balance === fromTransactions,
    };
  });
}

/** Live stage records of counted applications, with the application's program. */
function stageRecords(d: Dataset): (Row & { program: number | null })[] {
  const apps = countedApps(d);
  return live(d, 'application_stages')
    .filter((s) => apps.has(Number(s.application_id)))
    .map((s) => ({ ...s, program: num(apps.get(Number(s.application_id))?.program_id) }));
}

export function applicationFunnel(d: Dataset): Out[] {
  const records = group(stageRecords(d), (s) => `${s.program}/${num(s.stage_id)}`);
  const current = group(
    [...countedApps(d).values()].filter((a) => num(a.current_stage_id) !== null),
    (a) => `${num(a.program_id)}/${num(a.current_stage_id)}`,
  );
  const pairs = [...new Set([...records.keys(), ...current.keys()])].map((key) => {
    const [program = null, stage = null] = key.split('/').map((x) => (x === 'null' ? null : Number(x)));
    const mine = records.get(key) ?? [];
    const first = mine.map((s) => Date.parse(String(s.created_at))).filter((t) => !Number.isNaN(t));
    return { key, program, stage, mine, firstEntered: first.length > 0 ? Math.min(...first) : null };
  });
  const out: Out[] = [];
  for (const inProgram of group(pairs, (p) => String(p.program)).values()) {
    inProgram.sort(
      (a, b) => (a.firstEntered ?? Infinity) - (b.firstEntered ?? Infinity) || Number(a.stage) - Number(b.stage),
    );
    inProgram.forEach((p, i) => {
      const state = (n: number): number => p.mine.filter((s) => s.state === n).length;
      // Of the previous stage's applications, those with a record in this stage too.
      const before = i === 0 ? null : new Set(inProgram[i - 1]!.mine.map((s) => Number(s.application_id)));
      const converted = before === null ? null : p.mine.filter((s) => before.has(Number(s.application_id))).length;
      out.push({
        program_id: p.program,
        stage_id: p.stage,
        stage_title: title(d, p.stage),
        stage_order: i + 1,
        current_applications: current.get(p.key)?.length ?? 0,
        entered: p.mine.length,
        submitted: state(0),
        reopened: state(1),
        initialized: state(2),
        submit_rate: ratio(BigInt(state(0)), BigInt(p.mine.length)),
        conversion_rate: ratio(
          converted === null ? null : BigInt(converted),
          before === null ? null : BigInt(before.size),
        ),
      });
    });
  }
  return out;
}

export function reviewProgress(d: Dataset): Out[] {
  const apps = countedApps(d);
  const listed = group(
    live(d, 'assignments').filter((s) => apps.has(Number(s.application_id))),
    (s) => `${num(apps.get(Number(s.application_id))?.program_id)}/${num(s.stage_id)}`,
  );
  return [...group(stageRecords(d), (s) => `${s.program}/${num(s.stage_id)}`)].map(([key, mine]) => {
    const assigned = sumOf(mine, 'reviews_assigned');
    const completed = sumOf(mine, 'reviews_completed');
    return {
      program_id: mine[0]!.program,
      stage_id: num(mine[0]!.stage_id),
      stage_title: title(d, mine[0]!.stage_id),
      applications: mine.length,
      reviews_assigned: Number(assigned),
      reviews_submitted: Number(sumOf(mine, 'reviews_submitted')),
      reviews_completed: Number(completed),
      completion_rate: ratio(completed, assigned),
      assignments_listed: listed.get(key)?.length ?? 0,
    };
  });
}

const DAY_MS = 86_400_000n;

/** Continuous percentile (f = num / 10) of sorted milliseconds, in days, as DECIMAL(12,4); null for none. */
function percentileDays(ms: readonly bigint[], f: bigint): string | null {
  if (ms.length === 0) return null;
  const pos = f * BigInt(ms.length - 1); // tenths
  const lo = ms[Number(pos / 10n)]!;
  const hi = ms[Number((pos + 9n) / 10n)]!;
  return decimal(lo * 10n + (hi - lo) * (pos % 10n), 10n * DAY_MS, 4);
}
const ascending = (x: bigint, y: bigint): number => (x < y ? -1 : x > y ? 1 : 0);

export function decisionLatency(d: Dataset): Out[] {
  const apps = countedApps(d);
  const latencies = live(d, 'awards').flatMap((w) => {
    const a = apps.get(Number(w.application_id));
    const decided = w.awarded_at ?? w.created_at;
    if (!a || (w.decision !== 0 && w.decision !== 1) || !a.last_submitted_at || !decided) return [];
    const ms = BigInt(Date.parse(String(decided)) - Date.parse(String(a.last_submitted_at)));
    return [{ program: num(a.program_id), ms }];
  });
  return live(d, 'programs').map((p) => {
    const ms = latencies
      .filter((l) => l.program === Number(p.id))
      .map((l) => l.ms)
      .sort(ascending);
    const n = BigInt(ms.length);
    const percentile = (f: bigint): string | null => percentileDays(ms, f);
    return {
      program_id: Number(p.id),
      program_name: p.name ?? null,
      decisions: ms.length,
      median_days: percentile(5n),
      p90_days: percentile(9n),
      mean_days:
        ms.length === 0
          ? null
          : decimal(
              ms.reduce((s, x) => s + x, 0n),
              n * DAY_MS,
              4,
            ),
    };
  });
}

/** Per program and UTC year of the decision (awarded_at, else created_at): the awards decided, as award_rates. */
export function awardRatesByYear(d: Dataset): Out[] {
  const apps = countedApps(d);
  const decided = live(d, 'awards').flatMap((w) => {
    const a = apps.get(Number(w.application_id));
    if (!a || (w.decision !== 0 && w.decision !== 1)) return [];
    const at = w.awarded_at ?? w.created_at;
    const year = at === null || at === undefined ? null : new Date(Date.parse(String(at))).getUTCFullYear();
    return [{ award: w, program: num(a.program_id), year }];
  });
  return [...group(decided, (w) => `${w.program}/${w.year}`).values()].map((mine) => {
    const awarded = mine.filter((w) => w.award.decision === 0).map((w) => w.award);
    return {
      program_id: mine[0]!.program,
      program_name: name(d, 'programs', mine[0]!.program),
      decision_year: mine[0]!.year,
      decided: mine.length,
      awarded: awarded.length,
      declined: mine.length - awarded.length,
      award_rate: ratio(BigInt(awarded.length), BigInt(mine.length)),
      awarded_value: money(total(awarded.map((w) => cents(w.value)))),
    };
  });
}

/** Timestamp text as the warehouse returns it: microseconds, `Z`. */
const warehouseTime = (ms: number): string => new Date(ms).toISOString().replace('Z', '000Z');

/**
 * Per program, current stage and state of the counted applications with a current stage: how many, and the days from
 * the creation of their live stage record in that stage to when the rows were fetched (the latest of them).
 */
export function stageAging(d: Dataset): Out[] {
  const asOf = Math.max(...live(d, 'applications').map((a) => Date.parse(String(a._extracted_at ?? loadedAt))));
  const records = new Map(
    live(d, 'application_stages').map((s) => [`${num(s.application_id)}/${num(s.stage_id)}`, s.created_at]),
  );
  const waiting = [...countedApps(d).values()].filter((a) => num(a.current_stage_id) !== null);
  const groups = group(waiting, (a) => `${num(a.program_id)}/${num(a.current_stage_id)}/${num(a.state)}`);
  return [...groups.values()].map((mine) => {
    const entered = mine
      .map((a) => records.get(`${num(a.id)}/${num(a.current_stage_id)}`))
      .filter((at) => at !== null && at !== undefined)
      .map((at) => BigInt(asOf - Date.parse(String(at))))
      .sort(ascending);
    const a = mine[0]!;
    return {
      program_id: num(a.program_id),
      program_name: name(d, 'programs', a.program_id),
      stage_id: num(a.current_stage_id),
      stage_title: title(d, a.current_stage_id),
      state: num(a.state),
      applications: mine.length,
      dated: entered.length,
      median_days: percentileDays(entered, 5n),
      p90_days: percentileDays(entered, 9n),
      as_of: warehouseTime(asOf),
    };
  });
}

/** Each model's expected rows, by model name. */
export const references: Record<string, (d: Dataset) => Out[]> = {
  application_funnel: applicationFunnel,
  award_rates: awardRates,
  award_rates_by_year: awardRatesByYear,
  decision_latency: decisionLatency,
  fund_utilization: fundUtilization,
  funding_flow: fundingFlow,
  review_progress: reviewProgress,
  reviewer_load: reviewerLoad,
  stage_aging: stageAging,
};

/** Rows in one order whatever order a query or a reference gives them: by all their values, columns by name. */
const sortKey = (r: Record<string, CellValue>): string =>
  JSON.stringify(
    Object.keys(r)
      .sort()
      .map((k) => r[k]),
  );
export const sorted = (rows: Record<string, CellValue>[]): Record<string, CellValue>[] =>
  [...rows].sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0));
