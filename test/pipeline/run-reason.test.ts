import { describe, expect, it } from 'vitest';
import { runReason } from '../../src/pipeline/run-reason.ts';
import type { JsonValue } from '../../src/util/json.ts';

describe('runReason: why a run did not succeed, from its summary', () => {
  it('names the error that stopped the run', () => {
    expect(runReason({ error: 'interrupted by SIGTERM', resumable: true })).toBe('interrupted by SIGTERM');
  });

  it('names every failed stream and the first one’s reason', () => {
    const summary: JsonValue = {
      streams: [
        { stream: 'programs', status: 'ok' },
        { stream: 'applications', status: 'failed', reason: 'HTTP 503 after 7 attempts' },
        { stream: 'awards', status: 'failed', reason: 'HTTP 500' },
      ],
    };
    expect(runReason(summary)).toBe('streams failed: applications, awards: HTTP 503 after 7 attempts');
  });

  it('names a failed model, the failed data tests and a failed snapshot, in that order', () => {
    const summary = {
      streams: [{ stream: 'programs', status: 'ok' }],
      after: {
        modelError: 'award_rates: division by zero',
        tests: { total: 9, errors: ['unique_applications_id', 'not_null_awards_value'], warnings: ['w'] },
        snapshotError: 'cannot write snaps/programs',
      },
    };
    expect(runReason(summary)).toBe(
      'models failed: award_rates: division by zero; data tests failed: unique_applications_id, ' +
        'not_null_awards_value; snapshots failed: cannot write snaps/programs',
    );
  });

  it('is null when the summary names nothing (succeeded, running, or not an object)', () => {
    expect(runReason({ streams: [{ stream: 'programs', status: 'ok' }], after: { tests: { errors: [] } } })).toBeNull();
    expect(runReason({ options: { fullRefresh: false } })).toBeNull();
    expect(runReason(undefined)).toBeNull();
    expect(runReason('text')).toBeNull();
  });
});
