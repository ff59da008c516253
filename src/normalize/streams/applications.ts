import { QuarantineError } from '../quarantine.ts';
import type { Id } from '../refs.ts';

/** A required reference of a legacy mapping (reviews.ts); a declared column says `required: true` instead. */
export function must(id: Id | null, field: string): Id {
  if (id === null) throw new QuarantineError(`${field} is missing: the record has no usable key`);
  return id;
}
