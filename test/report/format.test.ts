import { describe, expect, it } from 'vitest';
import {
  formatAge,
  formatCount,
  formatDays,
  formatMoney,
  formatMoneyTotal,
  formatPercent,
  ratio,
  sumMoney,
  unknownText,
} from '../../src/report/format.ts';

describe('report number formatting', () => {
  it('money: two decimals and thousands separators, exact from the decimal text', () => {
    expect(formatMoney('1234567.5')).toBe('1,234,567.50');
    expect(formatMoney('0.00')).toBe('0.00');
    expect(formatMoney('-1234.5')).toBe('-1,234.50');
    expect(formatMoney('999.995')).toBe('1,000.00');
    expect(formatMoney('-0.001')).toBe('0.00');
    // Beyond a double's precision: every digit is kept.
    expect(formatMoney('9007199254740993.01')).toBe('9,007,199,254,740,993.01');
    expect(formatMoney(1500)).toBe('1,500.00');
    expect(formatMoney(null)).toBe(unknownText);
  });

  it('counts, percentages and days', () => {
    expect(formatCount(1234)).toBe('1,234');
    expect(formatCount('12345678901234567890')).toBe('12,345,678,901,234,567,890');
    expect(formatPercent('0.523810')).toBe('52.4 %');
    expect(formatPercent('1.000000')).toBe('100.0 %');
    expect(formatPercent('0.000450')).toBe('0.0 %');
    expect(formatPercent('0.000500')).toBe('0.1 %');
    expect(formatPercent(null)).toBe(unknownText);
    expect(formatDays('12.3456')).toBe('12.3');
    expect(formatDays('0.0500')).toBe('0.1');
  });

  it('totals: exact sums of the known amounts, saying how many were unknown', () => {
    expect(sumMoney(['0.10', '0.20', '1000000.70'])).toBe('1000001.00');
    expect(sumMoney(['1.00', null])).toBeNull();
    expect(formatMoneyTotal(['1250.00', null, '0.05', null])).toBe('1,250.05 + 2 unknown');
    expect(formatMoneyTotal([])).toBe('0.00');
  });

  it('rates as the models compute them: 6 places, half up; none without a denominator', () => {
    expect(ratio(1, 3)).toBe('0.333333');
    expect(ratio(2, 3)).toBe('0.666667');
    expect(ratio(195, 269)).toBe('0.724907');
    expect(ratio(0, 0)).toBeNull();
  });

  it('ages to the minute, then hours, then days', () => {
    const now = '2026-11-27T12:00:00.000Z';
    expect(formatAge('2026-11-27T11:59:30.000000Z', now)).toBe('0 min');
    expect(formatAge('2026-11-27T08:48:00.000000Z', now)).toBe('3 h 12 min');
    expect(formatAge('2026-11-25T08:00:00.000000Z', now)).toBe('2 d 4 h');
    expect(formatAge(null, now)).toBe(unknownText);
  });
});
