/**
 * Nothing personal in logs: a sync of the simulator at debug level (schema drift on, so new fields and their example
 * values go through the drift catalog too), then a second, incremental one after edits, and the whole log of both
 * (stdout and stderr) is searched for every name and email the site served.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { runCli, startSite, syncCliArgs, tempDir, writeCredentials, type CliResult } from '../support/harness.ts';

let sim: SimulatorHandle;
let work: { path: string; remove: () => Promise<void> };
const runs: CliResult[] = [];
/** Names and emails served before the edits (a rename serves a new name after them). */
const servedBefore: string[] = [];

/** Every name and email of every user the site served (drift's users too), and of the organizations' contacts. */
function servedNamesAndEmails(): string[] {
  const out = new Set<string>();
  for (const u of sim.control.collection('users')) {
    for (const f of ['first_name', 'last_name', 'email']) if (typeof u[f] === 'string' && u[f] !== '') out.add(u[f]);
  }
  for (const o of sim.control.collection('organizations')) if (typeof o.email === 'string') out.add(o.email);
  for (const a of sim.control.collection('applications')) {
    // Drift may name users only inside records (new reference fields): their names and emails count as served.
    for (const m of JSON.stringify(a).matchAll(/"email":"([^"]+)"/g)) if (m[1]) out.add(m[1]);
  }
  return [...out];
}

/** Whether `log` holds `value` as a word of its own (a short name such as "Lee" inside "Leeds" is not it). */
function holds(log: string, value: string): boolean {
  const escaped = value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?![\\p{L}\\p{N}])`, 'u').test(log);
}

beforeAll(async () => {
  sim = await startSite({ seed: 44 });
  sim.control.setDrift(true);
  work = await tempDir('grantflow-personal-logs-');
  await writeCredentials(sim, join(work.path, 'creds.json'));
  const args = [
    ...syncCliArgs(sim.url, work.path, { snapshot: true }),
    '--log-level',
    'debug',
    '--report',
    join(work.path, 'report'),
  ];
  runs.push(await runCli(args, { env: { GRANTFLOW_LOG_LEVEL: 'debug' }, timeoutMs: 300_000 }));
  servedBefore.push(...servedNamesAndEmails());
  // Edits, renames and deletions between runs: the incremental path logs other things.
  sim.control.applyChanges({ updated: 5, created: 3, deleted: 2, renamed: 2 });
  runs.push(await runCli(args, { env: { GRANTFLOW_LOG_LEVEL: 'debug' }, timeoutMs: 300_000 }));
}, 600_000);

afterAll(async () => {
  await sim?.close();
  await work?.remove();
});

describe('the log of a sync at debug level', () => {
  it('holds no name or email the site served', () => {
    for (const run of runs) expect(run.code, run.stderr.slice(-2000)).toBe(0);
    const log = runs.map((r) => `${r.stdout}\n${r.stderr}`).join('\n');
    // The log is a debug log, long and detailed: the search has something to search.
    expect(log.split('\n').filter((l) => /"level":"debug"/.test(l)).length).toBeGreaterThan(100);
    const served = [...new Set([...servedBefore, ...servedNamesAndEmails()])];
    expect(served.length).toBeGreaterThan(20);
    expect(served.filter((v) => holds(log, v))).toEqual([]);
  });
});
