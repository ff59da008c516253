import type { PersonalDataMode } from '../config/settings.ts';
import type { Row } from '../normalize/table-def.ts';
import { columnOutput, type PersonalColumns } from './personal-columns.ts';
import { pseudonymToken, tokenInput } from './pseudonym-key.ts';

/** What a page or file built in this process (the report) may show of personal data, and with which key. */
export interface PersonalDataPolicy {
  readonly mode: PersonalDataMode;
  /** Required for `pseudonymize` (keyForMode). */
  readonly key: string | null;
  readonly columns: PersonalColumns;
}

/**
 * Rows of `table` as the policy lets them out, computed here rather than in SQL: identifiers as the same tokens the
 * warehouse's token table holds (same key, same input), free text and undeclared columns left out.
 */
export function deidentifyRows(table: string, rows: readonly Row[], policy: PersonalDataPolicy | undefined): Row[] {
  if (policy === undefined || policy.mode === 'keep') return [...rows];
  const { key, mode, columns } = policy;
  return rows.map((row) => {
    const out: Row = {};
    for (const [name, value] of Object.entries(row)) {
      const output = columnOutput(columns.kind(table, name), mode);
      if (output === 'as_is') out[name] = value;
      else if (output === 'token') {
        const def = columns.column(table, name);
        const numeric = def?.type === 'bigint' || def?.type === 'integer';
        out[name] = value === null || key === null ? null : pseudonymToken(key, tokenInput(numeric, String(value)));
      }
    }
    return out;
  });
}
