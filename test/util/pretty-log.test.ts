import { describe, expect, it } from 'vitest';
import { foldToWidth, formatLogLine } from '../../src/util/pretty-log.ts';

describe('log lines for a person', () => {
  it('shows time, level, message and fields, without pino bookkeeping', () => {
    const line = JSON.stringify({
      level: 'warn',
      time: 0,
      pid: 1,
      hostname: 'h',
      name: 'grantflow',
      msg: 'slow',
      stream: 'awards',
      err: { message: 'HTTP 503' },
    });
    expect(formatLogLine(line)).toMatch(/^\d\d:\d\d:\d\d WARN {2}slow stream=awards err="HTTP 503"$/);
    expect(formatLogLine('not json\n')).toBe('not json');
  });

  it('folds to the width at spaces, keeping the indent, and cuts a longer word', () => {
    const text = '  stream  status  ' + 'word '.repeat(20) + 'x'.repeat(50);
    const lines = foldToWidth(text, 30);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(30);
    expect(lines[0]).toMatch(/^ {2}stream {2}status/);
    expect(lines.slice(1).every((l) => l.startsWith('      '))).toBe(true);
    expect(lines.join(' ').replace(/\s+/g, '')).toBe(text.replace(/\s+/g, ''));
  });
});
