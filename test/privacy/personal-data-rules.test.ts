import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { durationOrZeroMs } from '../../src/config/duration.ts';
import { settingsSchema } from '../../src/config/settings.ts';
import { deidentifyRows } from '../../src/privacy/deidentify-rows.ts';
import { columnOutput, PersonalColumns } from '../../src/privacy/personal-columns.ts';
import { keyForMode, pseudonymToken, tokenInput } from '../../src/privacy/pseudonym-key.ts';
import { ConfigError } from '../../src/util/errors.ts';
import { redact } from '../../src/util/redact.ts';

const key = 'a-unit-test-key-0123456789';

describe('what leaves the warehouse under each personalData mode', () => {
  it('keeps everything under keep, tokenises identifiers under pseudonymize, drops both under drop', () => {
    const kinds = ['identifier', 'free_text', 'identifier_and_free_text', 'undeclared', null] as const;
    expect(kinds.map((k) => columnOutput(k, 'keep'))).toEqual(['as_is', 'as_is', 'as_is', 'as_is', 'as_is']);
    expect(kinds.map((k) => columnOutput(k, 'pseudonymize'))).toEqual(['token', 'omit', 'omit', 'omit', 'as_is']);
    expect(kinds.map((k) => columnOutput(k, 'drop'))).toEqual(['omit', 'omit', 'omit', 'omit', 'as_is']);
  });

  it('reads the classification of core columns, metadata and models, an unknown column as undeclared', () => {
    const personal = PersonalColumns.of();
    expect(personal.kind('users', 'email')).toBe('identifier');
    expect(personal.kind('applications', 'applicant_id')).toBe('identifier');
    expect(personal.kind('applications', '_raw')).toBe('identifier_and_free_text');
    expect(personal.kind('applications', 'state')).toBeNull();
    expect(personal.kind('applications', 'promoted_later')).toBe('undeclared');
    expect(personal.kind('reviewer_load', 'reviewer_email')).toBe('identifier');
    expect(personal.kind('reviewer_load', 'assigned')).toBeNull();
  });
});

describe('tokens', () => {
  it('are an HMAC-SHA256 of the kind and value under the key, the same for the same person', () => {
    const expected = createHmac('sha256', key).update('user:12').digest('hex');
    const token = pseudonymToken(key, tokenInput(true, '12'));
    expect(expected.startsWith(token.slice('pz_'.length))).toBe(true);
    expect(pseudonymToken(key, tokenInput(true, '12'))).toBe(token);
    // A user id and a text that reads the same are different values; another key gives another token.
    expect(pseudonymToken(key, tokenInput(false, '12'))).not.toBe(token);
    expect(pseudonymToken(`${key}-other`, tokenInput(true, '12'))).not.toBe(token);
  });

  it('need the key under pseudonymize only: one line, a ConfigError (exit 2), and the key never shown after', () => {
    expect(keyForMode('keep', {})).toBeNull();
    expect(() => keyForMode('pseudonymize', {})).toThrow(ConfigError);
    expect(() => keyForMode('pseudonymize', {})).toThrow(/GRANTFLOW_PSEUDONYM_KEY/);
    expect(() => keyForMode('pseudonymize', { GRANTFLOW_PSEUDONYM_KEY: 'short' })).toThrow(/at least 16/);
    expect(keyForMode('pseudonymize', { GRANTFLOW_PSEUDONYM_KEY: key })).toBe(key);
    expect(redact(`the key is ${key}`)).toBe('the key is [REDACTED]');
  });
});

describe('rows of the report', () => {
  const rows = [
    { reviewer_id: 7, reviewer_name: 'Zoë Smith', reviewer_email: 'zoe@example.org', assigned: 3 },
    { reviewer_id: 9, reviewer_name: 'Bob Lee', reviewer_email: 'bob@example.org', assigned: 1 },
    { reviewer_id: 7, reviewer_name: 'Zoë Smith', reviewer_email: 'zoe@example.org', assigned: 2 },
  ];
  const columns = PersonalColumns.of();

  it('are the same under keep', () => {
    expect(deidentifyRows('reviewer_load', rows, { mode: 'keep', key: null, columns })).toEqual(rows);
  });

  it('carry the tokens of the snapshots under pseudonymize, one per person', () => {
    const out = deidentifyRows('reviewer_load', rows, { mode: 'pseudonymize', key, columns });
    expect(out[0]?.reviewer_id).toBe(pseudonymToken(key, tokenInput(true, '7')));
    expect(out[0]?.reviewer_email).toBe(pseudonymToken(key, tokenInput(false, 'zoe@example.org')));
    expect(out[2]?.reviewer_id).toBe(out[0]?.reviewer_id);
    expect(out[1]?.reviewer_id).not.toBe(out[0]?.reviewer_id);
    expect(out.map((r) => r.assigned)).toEqual([3, 1, 2]);
  });

  it('number the users under drop, so per-person figures still add up, and leave names and emails out', () => {
    const out = deidentifyRows('reviewer_load', rows, { mode: 'drop', key: null, columns });
    expect(out).toEqual([
      { reviewer_id: 1, assigned: 3 },
      { reviewer_id: 2, assigned: 1 },
      { reviewer_id: 1, assigned: 2 },
    ]);
  });
});

describe('the settings', () => {
  it('take personalData and a purge window that may be zero', () => {
    expect(settingsSchema.parse({}).personalData).toBe('keep');
    expect(settingsSchema.parse({}).purgeDeletedAfter).toBeUndefined();
    expect(settingsSchema.safeParse({ personalData: 'hide' }).success).toBe(false);
    expect(settingsSchema.parse({ purgeDeletedAfter: '0s' }).purgeDeletedAfter).toBe('0s');
    expect(settingsSchema.safeParse({ purgeDeletedAfter: 'soon' }).success).toBe(false);
    expect(durationOrZeroMs('0s')).toBe(0);
    expect(durationOrZeroMs('90d')).toBe(90 * 86_400_000);
    expect(durationOrZeroMs('x')).toBeNull();
  });
});
