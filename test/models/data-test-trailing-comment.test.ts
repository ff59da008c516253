import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDataTests } from '../../src/models/index.ts';
import type { Dialect } from '../../src/warehouse/index.ts';
import { load, openTestWarehouse, type TestWarehouse } from '../support/model-fixtures.ts';
import { tempDir } from '../support/temp-dir.ts';

describe.each<Dialect>(['duckdb', 'postgres'])('a SQL data test whose last line is a comment, on %s', (dialect) => {
  let t: TestWarehouse;
  let testsDir: string;
  let removeTestsDir: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    t = await openTestWarehouse(dialect, 'h5_trailing');
    await load(t.warehouse, {
      programs: [
        { id: 1, name: 'P1' },
        { id: 2, name: '' },
      ],
    });
    ({ path: testsDir, remove: removeTestsDir } = await tempDir('gf-h5-tests-'));
    // Valid SQL that an analyst may well end with a note; the ';' before it is no longer the text's last character.
    writeFileSync(
      join(testsDir, 'unnamed_programs.sql'),
      "-- description: programs without a name\n-- severity: warn\nSELECT id FROM programs WHERE name = ''; -- empty, not NULL\n",
    );
    writeFileSync(
      join(testsDir, 'programs_exist.sql'),
      '-- description: at least one program\nSELECT 1 AS none WHERE NOT EXISTS (SELECT 1 FROM programs) -- a site has programs\n',
    );
  });
  afterAll(async () => {
    await t?.cleanup();
    await removeTestsDir?.();
  });

  it('runs it (its failing rows counted and sampled) instead of reporting a syntax error', async () => {
    const results = await runDataTests(t.warehouse, { tables: [], testsDir });
    expect(results.map((r) => [r.name, r.status, r.failing, r.message])).toEqual([
      ['programs_exist', 'pass', 0, undefined],
      ['unnamed_programs', 'fail', 1, undefined],
    ]);
    expect(results[1]?.sample).toEqual([{ id: 2 }]);
  });
});
