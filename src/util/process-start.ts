import { readFileSync } from 'node:fs';

/**
 * When a process started, as a token that differs for any two processes one machine has run under the same pid:
 * the boot's id and the start time in clock ticks since boot (Linux's `/proc/<pid>/stat`, field 22). A pid alone
 * is reused, by an unrelated process after a while or by any process after a reboot (a lock file on a disk that
 * outlives the boot), and would keep a dead holder's lock alive. `undefined` where `/proc` does not say (not
 * Linux, or the process is gone): callers then fall back to whether the pid is alive.
 */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces or ')': fields after its last ')' are plain.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = fields[19]; // field 22; fields[0] is field 3
    return ticks && /^\d+$/.test(ticks) ? `${bootId()}:${ticks}` : undefined;
  } catch {
    return undefined;
  }
}

let boot: string | undefined;
function bootId(): string {
  if (boot === undefined) {
    try {
      boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      boot = '';
    }
  }
  return boot;
}
