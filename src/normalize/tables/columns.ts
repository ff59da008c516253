import type { ColumnDef, ColumnType } from '../table-def.ts';
import type { EnumName } from '../enums.ts';

/** Small builders so each table reads as a list of (name, type, description). */
export const col = (name: string, type: ColumnType, description: string): ColumnDef => ({ name, type, description });

/** A column that is part of the primary key or always present. */
export const req = (name: string, type: ColumnType, description: string): ColumnDef => ({
  name,
  type,
  description,
  notNull: true,
});

/** A `<name>_id` reference to `table.id` (or another column). */
export const ref = (name: string, table: string, description: string, notNull = false, column = 'id'): ColumnDef => ({
  name,
  type: 'bigint',
  description,
  references: { table, column },
  ...(notNull ? { notNull: true } : {}),
});

export const enumCol = (name: string, en: EnumName, description: string, type: ColumnType = 'integer'): ColumnDef => ({
  name,
  type,
  description,
  enum: en,
});

export const tsCol = (name: string, description: string): ColumnDef =>
  col(name, 'timestamptz', `${description} (UTC).`);
export const money = (name: string, description: string): ColumnDef =>
  col(name, 'decimal', `${description} (DECIMAL(18,2)).`);
export const id = (description: string): ColumnDef => req('id', 'bigint', description);
