import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeUploadStaging, removeAbandonedStaging } from '../../src/snapshot/upload-staging.ts';
import { tempDir } from '../support/temp-dir.ts';

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ path: root, remove: cleanup } = await tempDir('gf-upload-staging-'));
});
afterEach(async () => cleanup());

/** A pid no process can have: one above the kernel's largest. */
const goneId = (): number => Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8')) + 1;

describe('the local folders of uploads to an object store', () => {
  it('are named after their process', () => {
    const folder = makeUploadStaging(root);
    expect(readdirSync(root)).toEqual([basename(folder)]);
    expect(basename(folder).startsWith(`grantflow-snapshot-${process.pid}-`)).toBe(true);
  });

  it('of a process that is gone are removed with their files; those of live processes and others stay', () => {
    const own = basename(makeUploadStaging(root));
    const gone = `grantflow-snapshot-${goneId()}-aB3dEf`;
    const live = `grantflow-snapshot-${process.ppid}-x1Y2z3`;
    const older = 'grantflow-snapshot-Qw12Er'; // an earlier version's name, with no process id
    const unrelated = `other-${goneId()}-abc`;
    for (const name of [gone, live, older, unrelated]) mkdirSync(join(root, name));
    writeFileSync(join(root, gone, 'applications.parquet'), 'PAR1');

    expect(removeAbandonedStaging(root)).toEqual([gone]);
    expect(readdirSync(root).sort()).toEqual([live, older, own, unrelated].sort());
    expect(removeAbandonedStaging(root)).toEqual([]);
  });

  it('are not looked for in a folder that does not exist', () => {
    expect(removeAbandonedStaging(join(root, 'missing'))).toEqual([]);
  });
});
