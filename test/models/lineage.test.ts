import { describe, expect, it } from 'vitest';

import { writeFile } from 'node:fs/promises';

import { join } from 'node:path';

import { loadModels } from '../../src/models/index.ts';

import { lineage, modelSources } from '../../src/models/lineage.ts';
import { tables } from '../../src/streams/registry.ts';
import { tempDir } from '../support/temp-dir.ts';

const known = new Set([...tables.map((t) => t.name), ...loadModels().map((m) => m.name)]);

describe("a model's sources, read from its SQL", () => {
  it("every shipped model reads only known tables, and each one's are found", () => {
    const { reads } = lineage(loadModels(), known);
    expect(reads.get('award_rates')).toEqual(['applications', 'awards', 'programs']);
    expect(reads.get('reviewer_load')).toEqual(['applications', 'assignments', 'stages', 'users']);
    expect(reads.get('fund_utilization')).toEqual(['budgets', 'financial_transactions', 'funds']);
    for (const m of loadModels()) expect(reads.get(m.name)?.length, m.name).toBeGreaterThan(0);
  });

  it('leaves out CTEs, comments, string literals and functions called FROM-like', async () => {
    const { path: dir, remove: cleanup } = await tempDir('grantflow-lineage-');
    try {
      await writeFile(
        join(dir, 'm.sql'),
        [
          '-- description: test',
          '-- column n bigint: n',
          'WITH funds AS (SELECT id FROM programs), x AS (SELECT 1 AS n FROM "awards")',
          "SELECT EXTRACT(EPOCH FROM a.created_at) AS n, 'FROM users' AS s -- JOIN budgets",
          'FROM funds f JOIN applications a ON true /* LEFT JOIN stages */ JOIN x ON true',
        ].join('\n'),
      );
      const [model] = loadModels(dir);
      expect(modelSources(model!, known)).toEqual(['applications', 'awards', 'programs']);
    } finally {
      await cleanup();
    }
  });
});
