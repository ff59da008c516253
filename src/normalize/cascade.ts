/**
 * After soft deletions: rows of `table` whose `column` points at a soft-deleted row of `parentTable` are soft-deleted
 * too. Declared by a stream's mapping, carried out by the warehouse's commit.
 */
export interface Cascade {
  readonly table: string;
  readonly column: string;
  readonly parentTable: string;
  readonly parentColumn: string;
}
