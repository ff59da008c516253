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
 *
 * Under `drop`, a page that counts per person (reviewer load) would merge everyone into one row once the user id is
 * gone, so a numeric identifier becomes an ordinal instead (1, 2, 3 in the order `ordinals` first meets each user, the
 * same for one report's every model): it tells the rows apart and says nothing of who is who. Text identifiers go.
 */
export function deidentifyRows(
  table: string,
  rows: readonly Row[],
  policy: PersonalDataPolicy | undefined,
  ordinals: Map<string, number> = new Map(),
): Row[] {
  if (policy === undefined || policy.mode === 'keep') return [...rows];
  const { key, mode, columns } = policy;
  return rows.map((row) => {
    const out: Row = {};
    for (const [name, value] of Object.entries(row)) {
      const kind = columns.kind(table, name);
      const def = columns.column(table, name);
      const numeric = def?.type === 'bigint' || def?.type === 'integer';
      const output = columnOutput(kind, mode);
      if (output === 'as_is') out[name] = value;
      else if (output === 'token')
        out[name] = value === null || key === null ? null : pseudonymToken(key, tokenInput(numeric, String(value)));
      else if (kind === 'identifier' && numeric && value !== null) {
        const id = String(value);
        if (!ordinals.has(id)) ordinals.set(id, ordinals.size + 1);
        out[name] = ordinals.get(id) ?? null;
      }
    }
    return out;
  });
}
