/**
 * Setup of `npm run test:unit`: a unit test starts no process. Any child_process call fails the test that made it, so
 * a test that needs one is moved out of the unit list (vitest.unit.config.ts) instead of slowing the fast loop down.
 */
import { vi } from 'vitest';

vi.mock('node:child_process', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:child_process')>();
  const refuse = (): never => {
    throw new Error('test:unit starts no process: list this test file in vitest.unit.config.ts `needsServices`');
  };
  const blocked = {
    spawn: refuse,
    spawnSync: refuse,
    fork: refuse,
    exec: refuse,
    execSync: refuse,
    execFile: refuse,
    execFileSync: refuse,
  };
  return { ...real, ...blocked, default: { ...real, ...blocked } };
});
