/** How test/support/doc-examples.ts reads a page: plain text in, blocks and commands out (no process, no server). */
import { describe, expect, it } from 'vitest';
import { parseBlocks, shellCommands, shellWords, sqlEngines, sqlStatements } from '../support/doc-examples.ts';

const page = [
  'Two sites in `portfolio.json`:',
  '',
  '```json',
  '{ "sites": [] }',
  '```',
  '',
  '_Not run by the tests: needs a real site._',
  '',
  '```sh',
  'grantflow sync --site https://x.example \\',
  '  --warehouse "data/a b.duckdb"   # exit 1',
  '```',
  '',
  'With DuckDB:',
  '',
  '```sql',
  "SELECT 'a;b' -- not the end;",
  'FROM t;',
  'SELECT 2;',
  '```',
  '',
  '```',
  'output',
  '```',
].join('\n');

describe('doc examples extractor', () => {
  const blocks = parseBlocks('p.md', page);

  it('finds each block with its language, file name, marker and line', () => {
    expect(blocks.map((b) => [b.line, b.lang, b.kind, b.fileName, b.optOut])).toEqual([
      [3, 'json', 'json', 'portfolio.json', undefined],
      [9, 'sh', 'shell', undefined, 'needs a real site'],
      [16, 'sql', 'sql', undefined, undefined],
      [22, '', undefined, undefined, undefined],
    ]);
  });

  it('joins continuations, keeps the comment apart, and splits words as a shell does', () => {
    const [command] = shellCommands(blocks[1]!);
    expect(command).toEqual({
      line: 10,
      text: 'grantflow sync --site https://x.example --warehouse "data/a b.duckdb"',
      comment: 'exit 1',
    });
    expect(shellWords(command!.text)).toEqual([
      'grantflow',
      'sync',
      '--site',
      'https://x.example',
      '--warehouse',
      'data/a b.duckdb',
    ]);
    expect(shellWords(`a 'b "c' "d\\"e" f\\ g ''`)).toEqual(['a', 'b "c', 'd"e', 'f g', '']);
  });

  it('splits SQL at a ; ending a line, outside quotes and comments, on the engine the line above names', () => {
    expect(sqlStatements(blocks[2]!.text)).toEqual(["SELECT 'a;b' \nFROM t", 'SELECT 2']);
    expect(sqlEngines(blocks[2]!)).toEqual(['duckdb']);
    expect(sqlEngines(parseBlocks('q.md', '```sql\n-- DuckDB and Postgres alike\nSELECT 1\n```')[0]!)).toEqual([
      'duckdb',
      'postgres',
    ]);
  });
});
