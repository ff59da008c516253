/**
 * examples/github-actions.yml keeps the warehouse between runs in the Actions cache. DuckDB holds recent commits
 * (among them the rotated credentials) in `<file>.wal` until a checkpoint, so the cache must hold both files, and
 * each attempt needs a key of its own (a key is saved once: a re-run with the run's key could not save).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const text = readFileSync(new URL('../../examples/github-actions.yml', import.meta.url), 'utf8');

/** The `with:` block of each step using `uses` (restore or save), as text. */
function stepsUsing(action: string): string[] {
  const steps = text.split(/\n(?= {6}- )/);
  return steps.filter((s) => s.includes(`uses: ${action}`));
}

describe('examples/github-actions.yml', () => {
  it('caches the warehouse with its WAL, under a key unique to the attempt', () => {
    const save = stepsUsing('actions/cache/save@v4');
    const restore = stepsUsing('actions/cache/restore@v4')[0];
    expect(save).toHaveLength(1);
    for (const step of [save[0]!, restore!]) {
      expect(step).toMatch(/^\s+data\/warehouse\.duckdb$/m);
      expect(step).toMatch(/^\s+data\/warehouse\.duckdb\.wal$/m);
      expect(step).toContain('key: grantflow-warehouse-${{ github.run_id }}-${{ github.run_attempt }}');
    }
    expect(save[0]).toMatch(/if: always\(\)/);
    // Where the warehouse is cached is where the sync writes it.
    expect(text).toContain('GRANTFLOW_WAREHOUSE: data/warehouse.duckdb\n');
  });
});
