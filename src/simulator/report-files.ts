import type { JsonObject } from '../util/json.ts';
import type { Dataset, ReportFile } from './dataset.ts';
import type { HostileOptions } from './hostile.ts';
import { Rng } from './random.ts';

/** A generated report's contents: the header (labels of its variables) and its rows, every cell text. */
export interface ReportTable {
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

/** Labels of the variables reports use (spec 2.19); others are headed by the variable itself. */
const labels: Readonly<Record<string, string>> = {
  'application.id': 'Application System ID',
  'application.title': 'Application Title',
  'program.name': 'Program Name',
  'applicant.email': 'Email',
  'user.id': 'User System ID',
  'user.roles': 'Roles',
};

/** Text a real report carries and a CSV reader gets wrong easily: quotes, commas, newlines, accents, emoji, CJK. */
const titles = [
  'Água limpa para "todos"',
  'Bibliothèque, phase 2',
  '東京 community garden',
  'Line one\nLine two',
  'Windows\r\nline ending',
  'Youth arts 🎨 programme',
  '  padded title  ',
  'Ünïcödé — dashes; semi-colons',
  '',
  'Plain title',
];

/**
 * The rows of a generated report, or undefined when it has none to download (not status 3). Drawn from the
 * dataset's seed, the report's id and its `last_generated_at`: the same generation always gives the same file, a
 * new one (a report job) a different one.
 */
export function reportTable(ds: Dataset, report: JsonObject, hostile: HostileOptions = {}): ReportTable | undefined {
  if (report.status !== 3) return undefined;
  const columns = Array.isArray(report.columns) ? report.columns.map(String) : [];
  const rng = new Rng(ds.seed * 7919 + Number(report.id) * 104_729 + hash(String(report.last_generated_at)));
  const total = typeof report.total_rows === 'number' ? report.total_rows : 0;
  const rows: string[][] = [];
  for (let n = 1; n <= total; n++) rows.push(columns.map((variable) => cell(variable, n, rng, ds)));
  const header = columns.map((v) => labels[v] ?? v);
  if (!hostile.protoColumn) return { header, rows };
  return { header: [...header, '__proto__'], rows: rows.map((r, i) => [...r, `proto ${i + 1}`]) };
}

function cell(variable: string, n: number, rng: Rng, ds: Dataset): string {
  switch (variable) {
    case 'application.id':
    case 'user.id':
      return String(1000 + n);
    case 'application.title':
      return rng.pick(titles);
    case 'program.name':
      return String(rng.pick(ds.programs.rows).name ?? '');
    case 'applicant.email':
      return rng.chance(0.1) ? '' : `person${rng.int(1, 9999)}@example.org`;
    case 'user.roles':
      return rng.pick(['applicant', 'reviewer, admin', 'recommender']);
    default:
      return `${variable} ${rng.int(0, 99)}`;
  }
}

/** RFC 4180 with what real exports add: a UTF-8 byte-order mark and CRLF line ends. */
export function reportCsv(table: ReportTable): string {
  const field = (v: string): string => (/[",\r\n]|^\s|\s$/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
  const line = (cells: readonly string[]): string => cells.map(field).join(',') + '\r\n';
  return '\uFEFF' + line(table.header) + table.rows.map(line).join('');
}

/** The file of a generated report: a file set by a test (another format, say), else the report's CSV. */
export function reportFile(ds: Dataset, report: JsonObject, hostile: HostileOptions = {}): ReportFile | undefined {
  const table = reportTable(ds, report, hostile);
  if (!table) return undefined;
  const forced = ds.reportFileOverrides.get(Number(report.id));
  if (forced) return forced;
  return { contentType: 'text/csv; charset=utf-8', body: Buffer.from(reportCsv(table), 'utf8') };
}

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}
