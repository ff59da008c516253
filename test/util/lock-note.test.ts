import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { holderGone, leaseMs, markHeld, markReleased, thisHolder } from '../../src/util/lock-note.ts';
import { processStart } from '../../src/util/process-start.ts';

/** The one rule every lock note is judged by (the snapshot writer lock of a folder or bucket, DuckDB's note). */
describe('holderGone', () => {
  it('on this host: alive while its pid names the process that took it, gone once the pid names another', () => {
    const started = processStart(process.ppid);
    expect(holderGone({ pid: process.ppid, host: hostname(), started }, 'n', undefined)).toBe(false);
    // A note written before hosts and start times were recorded: this host, judged by the pid alone.
    expect(holderGone({ pid: process.ppid }, 'n', undefined)).toBe(false);
    const [boot, ticks] = started!.split(':');
    expect(holderGone({ pid: process.ppid, started: `${boot}:${Number(ticks) + 1}` }, 'n', undefined)).toBe(true);
  });

  it("this process's pid counts only while this process holds that note (a container's earlier run)", () => {
    expect(holderGone(thisHolder(), 'note-a', undefined)).toBe(true);
    markHeld('note-a');
    expect(holderGone(thisHolder(), 'note-a', undefined)).toBe(false);
    markReleased('note-a');
    expect(holderGone(thisHolder(), 'note-a', undefined)).toBe(true);
  });

  it('on another host: alive while renewed within the lease, gone after it or when never renewed', () => {
    const other = { pid: process.pid, host: 'elsewhere.example' };
    expect(holderGone(other, 'n', Date.now() - 1_000)).toBe(false);
    expect(holderGone(other, 'n', Date.now() - leaseMs - 1_000)).toBe(true);
    expect(holderGone(other, 'n', undefined)).toBe(true);
  });
});
