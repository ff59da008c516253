/**
 * Normalisation throughput on 100k application-shaped records (not a test; run with
 * `node --import tsx bench/normalize.ts`). Prints records/s and µs per record for a UTC site and for a site
 * whose naive timestamps need a time-zone lookup.
 */
import type { JsonObject } from '../src/util/json.ts';
import { streamMappings } from '../src/streams/registry.ts';

const N = 100_000;

function record(i: number): JsonObject {
  return {
    id: i + 1,
    title: `Application ${i} "quoted" 🚀`,
    reference_id: `APP-${i}`,
    state: i % 5,
    applicant: { id: 10_000 + (i % 5000), first_name: 'Ada', last_name: 'Lovelace', email: `a${i % 5000}@example.org` },
    collaborators:
      i % 3 === 0 ? [{ id: 20_000 + (i % 700), first_name: 'Bo', last_name: 'Li', email: 'bo@example.org' }] : [],
    current_stage: { id: 1 + (i % 4), title: 'Review' },
    custom_fields: [{ id: 55, name: 'Budget', value: String(i) }],
    decision: i % 2 === 0 ? { id: 900_000 + i, decision: 0, awarded: '$1,250.00' } : null,
    organization: i % 4 === 0 ? { id: 300 + (i % 50), name: 'Org' } : null,
    program: { id: 1 + (i % 20), name: 'Program' },
    average_score: 3.25,
    overall_score: 81,
    weighted_score: 77.5,
    created_at: '2024-03-01T12:00:00.123456Z',
    updated_at: `2024-03-${String(1 + (i % 28)).padStart(2, '0')}T08:00:00+02:00`,
    last_submitted_at: '2024-03-02T08:00:00',
  };
}

function run(zone: string): void {
  const records = Array.from({ length: N }, (_, i) => record(i));
  const mapping = streamMappings.applications;
  const ctx = { siteTimeZone: zone };
  let rows = 0;
  for (let i = 0; i < 20_000; i++) mapping.map(records[i]!, ctx); // warm-up
  const t0 = process.hrtime.bigint();
  for (const r of records) rows += mapping.map(r, ctx).length;
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  console.log(
    `applications, site zone ${zone}: ${N} records -> ${rows} rows in ${ms.toFixed(0)} ms = ` +
      `${Math.round(N / (ms / 1000)).toLocaleString('en-US')} records/s (${((ms * 1000) / N).toFixed(2)} µs/record)`,
  );
}

run('UTC');
run('America/New_York');
