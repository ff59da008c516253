/**
 * Whether a process with this pid exists: a lock note (a DuckDB warehouse's, a snapshot writer's) whose process is
 * gone was left by a kill and may be taken over. EPERM means it exists under another user.
 */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
