import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { takeWriterLock, writerLockName } from '../../src/snapshot/writer-lock.ts';
import { heartbeatMs, leaseMs } from '../../src/util/lock-note.ts';
import { LockedError } from '../../src/util/errors.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { processStart } from '../../src/util/process-start.ts';
import { tempDir } from '../support/temp-dir.ts';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ path: dir, remove: cleanup } = await tempDir('gf-writer-lock-'));
});
afterEach(async () => cleanup());

const lockPath = (): string => join(dir, writerLockName);
const holder = (pid: number, host = hostname(), started?: string): string =>
  JSON.stringify({ pid, host, command: 'grantflow snapshot', since: '2026-11-25T07:00:00.000Z', started });

describe('takeWriterLock (one snapshot writer per directory)', () => {
  it('holds the lock, names this process in it, and removes it on release, leaving nothing else', () => {
    const lock = takeWriterLock(dir, 'grantflow snapshot', silentLogger);
    expect(JSON.parse(readFileSync(lockPath(), 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    expect(() => takeWriterLock(dir, 'grantflow sync', silentLogger)).toThrow(LockedError);
    lock.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses while a live process holds it, naming it, and leaves its lock alone', () => {
    // The parent of this test process: alive for as long as the test runs.
    writeFileSync(lockPath(), holder(process.ppid));
    expect(() => takeWriterLock(dir, 'grantflow snapshot', silentLogger)).toThrow(
      `(pid ${process.ppid}: grantflow snapshot, since 2026-11-25T07:00:00.000Z)`,
    );
    expect(readFileSync(lockPath(), 'utf8')).toBe(holder(process.ppid));
    expect(readdirSync(dir)).toEqual([writerLockName]);
  });

  it('refuses while the live process its pid names is the one that took it (the same start)', () => {
    const started = processStart(process.ppid);
    expect(started).toMatch(/^.+:\d+$/);
    writeFileSync(lockPath(), holder(process.ppid, hostname(), started));
    expect(() => takeWriterLock(dir, 'grantflow snapshot', silentLogger)).toThrow(`pid ${process.ppid}`);
    expect(readFileSync(lockPath(), 'utf8')).toBe(holder(process.ppid, hostname(), started));
  });

  it('takes over a lock whose pid is alive but now names another process (reused, maybe after a reboot)', () => {
    // A dead writer's pid given to an unrelated process that started at another time than the lock's holder.
    const [boot, ticks] = processStart(process.ppid)!.split(':');
    writeFileSync(lockPath(), holder(process.ppid, hostname(), `${boot}:${Number(ticks) + 1}`));
    const lock = takeWriterLock(dir, 'grantflow snapshot', silentLogger);
    expect(JSON.parse(readFileSync(lockPath(), 'utf8'))).toMatchObject({
      pid: process.pid,
      started: processStart(process.pid),
    });
    lock.release();
    writeFileSync(lockPath(), holder(process.ppid, hostname(), `another-boot:${ticks}`));
    takeWriterLock(dir, 'grantflow snapshot', silentLogger).release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it("takes over a lock naming this process's pid that this process does not hold (a container's earlier run)", () => {
    // A run killed in a container restarted with the same hostname: the next run gets the same pid (often 1).
    writeFileSync(lockPath(), holder(process.pid));
    writeFileSync(`${lockPath()}.takeover`, holder(process.pid));
    const lock = takeWriterLock(dir, 'grantflow snapshot', silentLogger);
    expect(JSON.parse(readFileSync(lockPath(), 'utf8'))).toMatchObject({
      pid: process.pid,
      command: 'grantflow snapshot',
    });
    expect(readFileSync(lockPath(), 'utf8')).not.toBe(holder(process.pid));
    lock.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses a holder on another host, whose process it cannot check', () => {
    writeFileSync(lockPath(), holder(2 ** 22 + 1, 'elsewhere.example'));
    expect(() => takeWriterLock(dir, 'grantflow snapshot', silentLogger)).toThrow(/pid \d+ on elsewhere\.example/);
  });

  it("takes over another host's lock once it went unrenewed for the lease (a killed pod or runner)", () => {
    writeFileSync(lockPath(), holder(2 ** 22 + 1, 'elsewhere.example'));
    const expired = new Date(Date.now() - leaseMs - 5_000);
    utimesSync(lockPath(), expired, expired);
    const lock = takeWriterLock(dir, 'grantflow snapshot', silentLogger);
    expect(JSON.parse(readFileSync(lockPath(), 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    lock.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('keeps its own lock renewed while it holds it, so another host does not take it over', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    try {
      const lock = takeWriterLock(dir, 'grantflow snapshot', silentLogger);
      const taken = statSync(lockPath()).mtimeMs;
      vi.advanceTimersByTime(leaseMs + heartbeatMs);
      expect(statSync(lockPath()).mtimeMs).toBeGreaterThanOrEqual(taken + leaseMs);
      expect(Date.now() - statSync(lockPath()).mtimeMs).toBeLessThanOrEqual(leaseMs);
      lock.release();
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses a lock it cannot read rather than guess it is stale', () => {
    writeFileSync(lockPath(), '');
    expect(() => takeWriterLock(dir, 'grantflow snapshot', silentLogger)).toThrow('another process');
  });

  it('does not remove a lock another writer took over meanwhile on release', () => {
    const lock = takeWriterLock(dir, 'grantflow snapshot', silentLogger);
    writeFileSync(lockPath(), holder(process.ppid));
    lock.release();
    expect(existsSync(lockPath())).toBe(true);
  });
});

describe('lock temporaries of writers killed before they linked theirs', () => {
  it('are removed once the lock is held, when a minute old and their process gone; a live or fresh one is left', () => {
    const dead = spawnSync(process.execPath, ['-e', '']).pid; // exited by the time spawnSync returns
    const old = new Date(Date.now() - 120_000);
    const temp = (pid: number): string => join(dir, `${writerLockName}.${pid}`);
    for (const pid of [dead, process.ppid]) {
      writeFileSync(temp(pid), holder(pid));
      utimesSync(temp(pid), old, old);
    }
    writeFileSync(temp(dead + 1_000_000), holder(dead + 1_000_000)); // just written: perhaps about to be linked
    const lock = takeWriterLock(dir, 'grantflow snapshot', silentLogger);
    lock.release();
    expect(readdirSync(dir).sort()).toEqual(
      [`${writerLockName}.${process.ppid}`, `${writerLockName}.${dead + 1_000_000}`].sort(),
    );
  });
});
