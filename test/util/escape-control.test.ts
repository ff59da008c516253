import { describe, expect, it } from 'vitest';
import { escapeControl } from '../../src/util/escape-control.ts';

describe('escapeControl', () => {
  it('shows line breaks, tabs, escapes, BEL, DEL, C1 controls and line separators as visible escapes', () => {
    const raw = 'a\r\nb\tc\u001b[2J\u0007\u007f\u009b\u2028z';
    const shown = escapeControl(raw);
    expect(shown).toBe('a\\r\\nb\\tc\\x1b[2J\\x07\\x7f\\x9b\\u2028z');
    expect([...shown].every((c) => c >= ' ' && c !== '\u007f')).toBe(true);
  });

  it('leaves printable text, accents, emoji and CJK as they are', () => {
    const text = 'Jalapeño 🌶 申請 "q" \\ ok';
    expect(escapeControl(text)).toBe(text);
  });
});
