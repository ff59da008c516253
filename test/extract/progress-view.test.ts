import { describe, expect, it } from 'vitest';
import { Progress } from '../../src/extract/progress.ts';
import { progressView } from '../../src/extract/progress-view.ts';
import { silentLogger } from '../../src/util/logger.ts';

/** A progress driven by a clock the test moves. */
function progressAt(): { progress: Progress; tick: (ms: number) => void } {
  let now = Date.UTC(2026, 0, 1);
  const progress = new Progress(silentLogger, false, { now: () => now });
  return { progress, tick: (ms) => (now += ms) };
}

describe('the live view', () => {
  it('fits any width and height: names cut, streams beyond the rows counted, the overall line first', () => {
    const { progress, tick } = progressAt();
    for (let i = 0; i < 12; i++) progress.page(`a_stream_with_a_rather_long_name_number_${i}`, 100, 1000);
    tick(10_000);
    for (const [columns, rows] of [
      [79, 23],
      [39, 6],
      [20, 3],
    ] as const) {
      const lines = progressView(progress.snapshot(), columns, rows);
      expect(lines.length).toBeLessThanOrEqual(rows);
      for (const line of lines) expect([...line].length).toBeLessThanOrEqual(columns);
      // The overall line first, its ETA kept as long as the width allows.
      expect(lines[0]).toMatch(columns >= 39 ? /ETA \d+m\d\ds/ : /^requests/);
    }
    const small = progressView(progress.snapshot(), 39, 6);
    // The overall line, as many streams as fit, a line counting the others, the ended count.
    expect(small).toHaveLength(6);
    expect(small.slice(1, 4).every((l) => /^ {2}a_stream_wit… +100 rec/.test(l))).toBe(true);
    expect(small.slice(4)).toEqual(['  … and 9 more streams', '  0 of 12 streams ended']);
  });

  it('estimates from list totals and fan-out parents, and the ETA from the measured rate', () => {
    const { progress, tick } = progressAt();
    // 1,000 records at 100 a page: 10 pages; a fan-out with 40 parents, 10 read in 10 pages.
    progress.page('applications', 100, 1000);
    progress.parents('application_tasks', 10, 40);
    for (let i = 0; i < 10; i++) progress.page('application_tasks', 3);
    tick(11_000);
    const snap = progress.snapshot();
    expect(snap.requests).toBe(11);
    expect(snap.estimate).toBe(10 + 40);
    expect(snap.rate).toBeCloseTo(1, 5);
    const [head] = progressView(snap, 120, 10);
    expect(head).toMatch(/requests 11\/~50 \(22%\) {2}1\.0\/s {2}ETA 39s/);
  });

  it('counts the streams ended out of every stream the run will run, fan-out ones not started included', () => {
    let now = Date.UTC(2026, 0, 1);
    const streams = ['programs', 'applications', 'application_tasks', 'application_notes', 'organizations'];
    const progress = new Progress(silentLogger, false, { now: () => now, streams });
    const foot = (): string => progressView(progress.snapshot(), 100, 20).at(-1)!;
    progress.page('programs', 3);
    progress.finish('programs', '3 records');
    expect(foot()).toBe(`  1 of ${streams.length} streams ended`);
    progress.page('applications', 100, 1000);
    progress.finish('applications', '1000 records');
    progress.parents('application_tasks', 0, 1000);
    now += 1_000;
    expect(foot()).toBe(`  2 of ${streams.length} streams ended`);
  });

  it("never shows a stream's ETA above the overall one", () => {
    const { progress, tick } = progressAt();
    // Many quick requests elsewhere, while one fan-out stream crawls: 1 of 100 parents in 10 s.
    for (let i = 0; i < 200; i++) progress.page('applications', 1, 210);
    progress.parents('application_tasks', 0, 100);
    tick(10_000);
    progress.parents('application_tasks', 1, 100);
    progress.page('application_tasks', 1);
    const lines = progressView(progress.snapshot(), 120, 10);
    const seconds = (line: string): number => {
      const m = /ETA (?:(\d+)h)?(?:(\d+)m)?(\d+)?s?/.exec(line.replace(/ETA (\d+)h(\d+)m/, 'ETA $1h$2m0s'))!;
      return Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
    };
    const stream = lines.find((l) => l.startsWith('  application_tasks'))!;
    expect(stream).toMatch(/ETA/);
    expect(seconds(lines[0]!)).toBeGreaterThanOrEqual(seconds(stream));
  });

  it('shows the streams a stop cut short as interrupted', () => {
    const { progress, tick } = progressAt();
    progress.page('programs', 3);
    progress.finish('programs', '3 records');
    progress.page('applications', 100, 1000);
    tick(1_000);
    progress.stop(true);
    const lines = progressView(progress.snapshot(), 100, 10);
    expect(lines[0]).toMatch(/ interrupted {2}elapsed/);
    expect(lines.filter((l) => /interrupted$/.test(l))).toEqual([expect.stringMatching(/^ {2}applications /)]);
  });
});
