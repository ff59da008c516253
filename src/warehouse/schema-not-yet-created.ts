import { ExitCode, GrantflowError } from '../util/errors.ts';

/**
 * A check that creates nothing (doctor) found no schema, which the first sync creates: all is ready for that sync.
 * Both dialects throw it, so it lives outside their folders.
 */
export class SchemaNotYetCreated extends GrantflowError {
  constructor(message: string) {
    super(message, ExitCode.ok, 'schema_not_yet_created');
  }
}
