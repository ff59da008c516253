import type { StatementResult } from '../warehouse/types.ts';
import { renderTable } from '../util/text-table.ts';

/** How `grantflow query` prints its rows. */
export const queryFormats = ['table', 'csv', 'json'] as const;
export type QueryFormat = (typeof queryFormats)[number];

/** The result as text in `format`, ending with a newline; `width` fits the table (none: every character). */
export function formatResult(result: StatementResult, format: QueryFormat, width: number | undefined): string {
  if (format === 'csv') return csv(result);
  if (format === 'json') return json(result);
  const lines = renderTable(
    result.columns.map((c) => ({
      header: c.name,
      ...(c.numeric ? { align: 'right' as const } : { align: 'left' as const }),
    })),
    result.rows,
    { width },
  );
  const n = result.rows.length;
  return [...lines, `(${n} row${n === 1 ? '' : 's'})`].join('\n') + '\n';
}

/**
 * RFC 4180: a header line, fields quoted when they hold a comma, a quote or a line break. NULL is an empty field and
 * an empty string `""`, so the two stay apart (as PostgreSQL's CSV does).
 */
function csv(result: StatementResult): string {
  const field = (value: unknown): string => {
    if (value === null || value === undefined) return '';
    const text = String(value);
    return text === '' || /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  };
  const lines = [result.columns.map((c) => field(c.name)), ...result.rows.map((row) => row.map(field))];
  return lines.map((cells) => cells.join(',')).join('\r\n') + '\r\n';
}

/**
 * An array of objects, one per row, keyed by column name. A value of a numeric column is a JSON number written with
 * the database's exact digits (a BIGINT beyond 2^53 or a DECIMAL too, never rounded through a double); a float that
 * is not finite is the string "NaN", "Infinity" or "-Infinity". Text, dates and timestamps are strings, booleans
 * true/false, NULL null.
 */
function json(result: StatementResult): string {
  const keys = result.columns.map((c) => JSON.stringify(c.name));
  const value = (cell: unknown, numeric: boolean): string => {
    if (cell === null || cell === undefined) return 'null';
    if (typeof cell === 'boolean') return String(cell);
    if (numeric && (typeof cell === 'number' || typeof cell === 'bigint' || typeof cell === 'string')) {
      const text = String(cell);
      return /^-?\d+(\.\d+)?(e[-+]?\d+)?$/i.test(text) ? text : JSON.stringify(text);
    }
    return JSON.stringify(typeof cell === 'string' ? cell : String(cell));
  };
  const rows = result.rows.map(
    (row) => `  {${result.columns.map((c, i) => `${keys[i]}: ${value(row[i], c.numeric)}`).join(', ')}}`,
  );
  return rows.length === 0 ? '[]\n' : `[\n${rows.join(',\n')}\n]\n`;
}
