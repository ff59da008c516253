/**
 * Issue 3: a 403 or a 404 that means "not enabled here" skips that stream (or says why every parent had none),
 * the run goes on, reports it, and what could be read is loaded and modelled as usual.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { formatSummary } from '../../src/pipeline/summary.ts';
import { runReplay } from '../../src/pipeline/replay.ts';
import { ALL_PERMISSIONS } from '../../src/simulator/index.ts';
import { siteWithWarehouse, syncOnce } from '../support/harness.ts';

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

describe('features a site does not enable, permissions a user lacks', () => {
  it('skip those streams with the reason; everything else loads; the run succeeds', async () => {
    const { sim, credentials, warehouse, remove } = await siteWithWarehouse({
      scale: 'tiny',
      seed: 8,
      features: { financialManagement: false, eligibility: false },
      permissions: ALL_PERMISSIONS.filter((p) => p !== 'Award Applications'),
    });
    cleanup.push(remove);
    const result = await syncOnce(sim, { credentials, warehouse, models: true });

    expect(result.status).toBe('succeeded');
    const byName = new Map(result.streams.map((s) => [s.stream, s]));
    for (const name of ['financial_transactions', 'funds', 'budgets', 'payments']) {
      expect(byName.get(name)?.status, name).toBe('skipped');
      expect(byName.get(name)?.reason, name).toMatch(/^403: /);
    }
    expect(byName.get('payments')?.reason).toMatch(/Award Applications/);
    const eligibility = byName.get('eligibility')!;
    expect(eligibility.records).toBe(0);
    expect(eligibility.parents?.notFound).toBe(sim.control.collection('organizations').length);
    expect(eligibility.reason).toMatch(/not enabled/);
    for (const name of ['applications', 'application_tasks', 'awards', 'organizations', 'organization_members']) {
      expect(byName.get(name)?.status, name).toBe('ok');
    }
    const summary = formatSummary({ ...result, extra: result.after?.lines ?? [] });
    expect(summary).toMatch(/skipped: financial_transactions, funds, budgets, payments/);
    expect(summary).toMatch(/data tests: \d+ passed, 0 failed/);

    const w = await openWarehouse(warehouse, { logger: silentLogger });
    try {
      const [apps] = await w.query('SELECT count(*) AS n FROM applications');
      expect(Number(apps!.n)).toBe(sim.control.collection('applications').length);
      const [funds] = await w.query('SELECT count(*) AS n FROM funds WHERE NOT _ref_only');
      expect(Number(funds!.n)).toBe(0);
      const rates = await w.query('SELECT count(*) AS n FROM award_rates');
      expect(Number(rates[0]!.n)).toBe(sim.control.collection('programs').length);
    } finally {
      await w.close();
    }
  });
});

describe('source values that cannot be typed', () => {
  it('load as NULL with the record, kept in _raw, and are counted in the stream info and the summary', async () => {
    const { sim, dir, credentials, warehouse, remove } = await siteWithWarehouse({ scale: 'tiny', seed: 9 });
    cleanup.push(remove);
    const [program] = sim.control.collection('programs');
    // Served as they are: the collection is the simulator's own data.
    program!.grace_period = 'a week';
    program!.max_applications = 3_000_000_000; // past the INTEGER column
    const rawDir = join(dir, 'raw');
    const result = await syncOnce(sim, { credentials, warehouse, landRaw: true, rawDir });

    expect(result.status).toBe('succeeded');
    const programs = result.streams.find((s) => s.stream === 'programs');
    expect(programs?.untyped).toBe(2);
    expect(programs?.quarantined).toBe(0);
    const summary = formatSummary(result);
    expect(summary).toMatch(/^ {2}programs .* 2 values untyped/m);
    expect(summary).toMatch(/^ {2}2 source values could not be typed .*kept in _raw$/m);

    const w = await openWarehouse(warehouse, { logger: silentLogger });
    try {
      const [row] = await w.query(
        `SELECT grace_period, max_applications, _raw FROM programs WHERE id = ${Number(program!.id)}`,
      );
      expect(row).toMatchObject({ grace_period: null, max_applications: null });
      expect(JSON.parse(String(row!._raw))).toMatchObject({ grace_period: 'a week', max_applications: 3_000_000_000 });
    } finally {
      await w.close();
    }

    // A replay counts them too, through its normalising worker.
    const replayed = await openWarehouse(join(dir, 'replayed.duckdb'), { logger: silentLogger });
    try {
      const infos = await runReplay({ warehouse: replayed, rawDir, runId: result.runId, siteTimeZone: 'UTC' });
      expect(infos.find((i) => i.stream === 'programs')?.untyped).toBe(2);
    } finally {
      await replayed.close();
    }
  });
});

describe('snapshots of a run that did not succeed', () => {
  it('are not written when an error-level data test fails; the last good snapshot stays current', async () => {
    const { sim, dir, credentials, warehouse, remove } = await siteWithWarehouse({ scale: 'tiny', seed: 10 });
    cleanup.push(remove);
    const snapshots = join(dir, 'snapshots');
    const settings = { credentials, warehouse, snapshots, snapshot: true, models: true };
    expect((await syncOnce(sim, settings)).status).toBe('succeeded');
    const manifest = readFileSync(join(snapshots, '_manifest.json'), 'utf8');
    // A duplicate key that no sync writes: the unique data test (error level) fails on the next run.
    const w = await openWarehouse(warehouse, { logger: silentLogger });
    try {
      await w.exec('INSERT INTO statuses SELECT * FROM statuses LIMIT 1');
    } finally {
      await w.close();
    }
    const result = await syncOnce(sim, settings);
    expect(result.status).toBe('partial');
    expect(result.after?.lines.join('\n')).toMatch(/FAIL unique:statuses\(id\)/);
    expect(result.after?.lines.join('\n')).toMatch(/snapshots: not written \(an error-level data test failed/);
    expect(readFileSync(join(snapshots, '_manifest.json'), 'utf8')).toBe(manifest);
  });
});
