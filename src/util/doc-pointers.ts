/**
 * Where an error message sends a user to read more: a document of the repository and, when it has one, the heading
 * of its section. test/docs/links.test.ts checks that each exists.
 */
export const privilegesDoc = 'docs/postgres.md, "Privileges"';
