import type { EnumName } from '../normalize/enums.ts';
import type { ColumnDef, ColumnReader, ColumnType, PersonalData } from '../normalize/table-def.ts';

/** Where and how a column's value is read, when not the defaults (see ColumnDef). */
export interface ColumnOptions {
  readonly source?: string;
  readonly read?: ColumnReader;
  readonly required?: boolean;
  readonly notNull?: boolean;
  /** Personal data the column holds (docs/privacy.md); a reference to `users` is an identifier without saying so. */
  readonly personal?: PersonalData;
}

/** Small builders, so each table reads as a list of (name, type, description) with its source where it differs. */
export const col = (name: string, type: ColumnType, description: string, options: ColumnOptions = {}): ColumnDef => ({
  name,
  type,
  description,
  ...options,
});

/** A column that is part of the primary key or always present. */
export const req = (name: string, type: ColumnType, description: string, options: ColumnOptions = {}): ColumnDef =>
  col(name, type, description, { notNull: true, ...options });

/** A `<name>_id` reference to `table.id` (or another column); read from the field `<name>` by default. */
export const ref = (
  name: string,
  table: string,
  description: string,
  options: ColumnOptions & { readonly column?: string } = {},
): ColumnDef => {
  const { column = 'id', ...rest } = options;
  // A user id names a person: tokenised like a name or an email wherever personal data is pseudonymised.
  const personal: ColumnOptions = table === 'users' ? { personal: 'identifier' } : {};
  return { name, type: 'bigint', description, references: { table, column }, ...personal, ...rest };
};

export const enumCol = (
  name: string,
  en: EnumName,
  description: string,
  type: ColumnType = 'integer',
  options: ColumnOptions = {},
): ColumnDef => ({ name, type, description, enum: en, ...options });

export const tsCol = (name: string, description: string, options: ColumnOptions = {}): ColumnDef =>
  col(name, 'timestamptz', `${description} (UTC).`, options);

export const money = (name: string, description: string, options: ColumnOptions = {}): ColumnDef =>
  col(name, 'decimal', `${description} (DECIMAL(18,2)).`, options);

/** The record's own id: its key. */
export const id = (description: string, options: ColumnOptions = {}): ColumnDef =>
  req('id', 'bigint', description, options);

/** Personal data a column holds, for a builder's options (docs/privacy.md). */
export const identifier = { personal: 'identifier' } as const satisfies ColumnOptions;
export const freeText = { personal: 'free_text' } as const satisfies ColumnOptions;
