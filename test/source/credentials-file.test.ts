import { execFile, execFileSync } from 'node:child_process';
import fs, { readdirSync, readFileSync } from 'node:fs';
import { chmod, chown, lstat, mkdir, readdir, readFile, readlink, stat, symlink, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FileCredentialStore } from '../../src/credentials/index.ts';
import { ConfigError } from '../../src/util/errors.ts';
import { packageRoot } from '../../src/util/package-root.ts';
import { testCreds, writeCredsFile } from '../support/http-server.ts';
import { tempDir } from '../support/temp-dir.ts';

const run = promisify(execFile);
/** The uid of `nobody`, who runs the permission cases when the tests run as root. */
const nobody = (): number => Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ path: dir, remove: cleanup } = await tempDir()));
afterEach(async () => cleanup());

async function loadError(content: unknown): Promise<ConfigError> {
  const path = join(dir, 'creds.json');
  if (content !== undefined) await writeCredsFile(path, content);
  const err = await new FileCredentialStore(path).load().catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ConfigError);
  const e = err as ConfigError;
  expect(e.exitCode).toBe(2);
  expect(e.message).toContain(path);
  expect(e.message).not.toContain('\n');
  for (const v of Object.values(testCreds)) expect(e.message).not.toContain(v);
  return e;
}

describe('FileCredentialStore', () => {
  it('loads a valid file', async () => {
    const path = join(dir, 'c.json');
    await writeCredsFile(path, testCreds);
    expect(await new FileCredentialStore(path).load()).toEqual(testCreds);
  });

  it('explains a missing file', async () => {
    expect((await loadError(undefined)).message).toMatch(/does not exist/);
  });

  it('explains corrupt JSON without quoting it', async () => {
    const text = JSON.stringify(testCreds).slice(0, 60);
    expect((await loadError(text)).message).toMatch(/not valid JSON/);
  });

  it('names a missing or empty key', async () => {
    const { refresh_token: _dropped, ...rest } = testCreds;
    expect((await loadError(rest)).message).toMatch(/"refresh_token"/);
    expect((await loadError({ ...testCreds, client_id: '' })).message).toMatch(/"client_id"/);
    expect((await loadError([1, 2])).message).toMatch(/JSON object/);
  });

  it('says a value of the wrong type must be a string, instead of calling it missing (value never shown)', async () => {
    const number = (await loadError({ ...testCreds, client_id: 1234567 })).message;
    expect(number).toMatch(/"client_id" must be a string \(in quotes\), not a number/);
    expect(number).not.toMatch(/missing|1234567/);
    expect((await loadError({ ...testCreds, refresh_token: ['x'] })).message).toMatch(
      /"refresh_token" must be a string .*not an array/,
    );
    expect((await loadError({ ...testCreds, client_secret: true })).message).toMatch(/not a boolean/);
    expect((await loadError({ ...testCreds, access_token: '' })).message).toMatch(/"access_token" is empty/);
    expect((await loadError({ ...testCreds, access_token: null })).message).toMatch(/missing "access_token"/);
  });

  it('explains an unreadable file', async () => {
    if (process.getuid?.() === 0) {
      // root reads anything: a directory in place of the file is the unreadable case here.
      const err = await new FileCredentialStore(dir).load().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      return;
    }
    const path = join(dir, 'creds.json');
    await writeCredsFile(path, testCreds);
    await chmod(path, 0o000);
    expect((await loadError(undefined)).message).toMatch(/permission denied/);
  });

  it('saves atomically with mode 0600 and leaves no temp file', async () => {
    const path = join(dir, 'creds.json');
    await writeCredsFile(path, testCreds, 0o644);
    const store = new FileCredentialStore(path);
    const next = { ...testCreds, access_token: 'new-access-token-1234', refresh_token: 'new-refresh-token-5678' };
    await store.save(next);
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual(next);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(['creds.json']);
    expect(await store.load()).toEqual(next);
  });

  it('saves durably: the new pair is fsynced before it replaces the file, and the folder after the rename', async () => {
    const path = join(dir, 'creds.json');
    await writeCredsFile(path, testCreds);
    const next = { ...testCreds, access_token: 'new-access-token-1234', refresh_token: 'new-refresh-token-5678' };
    // What the file and its folder hold at each fsync: a power cut right after it keeps what was synced.
    const holds = (): string => {
      const temps = readdirSync(dir).filter((name) => name !== 'creds.json');
      const newPair = temps.some((name) => readFileSync(join(dir, name), 'utf8').includes(next.refresh_token));
      return `file ${JSON.parse(readFileSync(path, 'utf8')).refresh_token}, temp with the new pair ${newPair}`;
    };
    const seen: string[] = [];
    // Both fsyncs go through the `fs` module object (util/durable-file.ts): a folder's fd is told from the file's.
    const fsyncSync = fs.fsyncSync;
    const spy = vi.spyOn(fs, 'fsyncSync').mockImplementation((fd) => {
      fsyncSync(fd);
      seen.push(`${fs.fstatSync(fd).isDirectory() ? 'folder' : 'file'} fsync: ${holds()}`);
    });
    try {
      await new FileCredentialStore(path).save(next);
    } finally {
      spy.mockRestore();
    }
    expect(seen).toEqual([
      `file fsync: file ${testCreds.refresh_token}, temp with the new pair true`,
      `folder fsync: file ${next.refresh_token}, temp with the new pair false`,
    ]);
  });

  it('creates the file with mode 0600 when it did not exist', async () => {
    const path = join(dir, 'fresh.json');
    await new FileCredentialStore(path).save(testCreds);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('rewrites the target of a symlinked file, keeping the link (relative links and chains too)', async () => {
    const secrets = join(dir, 'secrets');
    await mkdir(secrets);
    const real = join(secrets, 'real.json');
    await writeCredsFile(real, testCreds, 0o644);
    await symlink('secrets/real.json', join(dir, 'middle.json'));
    const path = join(dir, 'creds.json');
    await symlink('middle.json', path);
    const next = { ...testCreds, access_token: 'new-access-token-1234', refresh_token: 'new-refresh-token-5678' };
    await new FileCredentialStore(path).save(next);
    expect((await lstat(path)).isSymbolicLink()).toBe(true);
    expect(await readlink(path)).toBe('middle.json');
    expect((await lstat(join(dir, 'middle.json'))).isSymbolicLink()).toBe(true);
    expect(JSON.parse(await readFile(real, 'utf8'))).toEqual(next);
    expect((await stat(real)).mode & 0o777).toBe(0o600);
    // The temp file was made next to the target and renamed: nothing left over in either folder.
    expect((await readdir(secrets)).sort()).toEqual(['real.json']);
    expect((await readdir(dir)).sort()).toEqual(['creds.json', 'middle.json', 'secrets']);
    expect(await new FileCredentialStore(path).load()).toEqual(next);
  });

  it('creates the missing target of a dangling symlink instead of replacing the link', async () => {
    const path = join(dir, 'creds.json');
    await symlink('target.json', path);
    await new FileCredentialStore(path).save(testCreds);
    expect((await lstat(path)).isSymbolicLink()).toBe(true);
    expect(JSON.parse(await readFile(join(dir, 'target.json'), 'utf8'))).toEqual(testCreds);
    expect((await stat(join(dir, 'target.json'))).mode & 0o777).toBe(0o600);
  });
});

/**
 * Runs `store.checkWritable()` and then `store.save(rotated)` as a user the folder's permissions apply to: root
 * ignores them, so as root the store runs in a child process as `nobody`.
 */
async function saveAsUnprivileged(path: string): Promise<{ check: string; save: string }> {
  const script = join(dir, 'save.mts');
  const source = new URL('../../src/credentials/file-store.ts', import.meta.url).pathname;
  await writeFile(
    script,
    `import { FileCredentialStore } from ${JSON.stringify(source)};
const store = new FileCredentialStore(${JSON.stringify(path)});
const outcome = async (f) => { try { await f(); return 'ok'; } catch (e) { return e.constructor.name + ': ' + e.message; } };
const check = await outcome(() => store.checkWritable());
const save = await outcome(() => store.save(${JSON.stringify(rotated)}));
console.log(JSON.stringify({ check, save }));`,
  );
  const root = process.getuid?.() === 0;
  if (root) {
    await chmod(dir, 0o755);
    await chmod(script, 0o644);
  }
  const argv = [process.execPath, '--import', 'tsx', script];
  const { stdout } = await run(root ? 'runuser' : argv[0]!, root ? ['-u', 'nobody', '--', ...argv] : argv.slice(1), {
    cwd: packageRoot,
  });
  return JSON.parse(stdout.trim().split('\n').pop()!) as { check: string; save: string };
}

const rotated = { ...testCreds, access_token: 'rotated-access-aaaa', refresh_token: 'rotated-refresh-bbbb' };

describe('FileCredentialStore in a folder it may not write', () => {
  it('rewrites the file in place rather than lose the rotated pair', async () => {
    const folder = join(dir, 'secrets');
    await mkdir(folder);
    const path = join(folder, 'creds.json');
    await writeCredsFile(path, testCreds);
    if (process.getuid?.() === 0) await chown(path, nobody(), -1);
    await chmod(folder, 0o555);
    try {
      expect(await saveAsUnprivileged(path)).toEqual({ check: 'ok', save: 'ok' });
      expect(JSON.parse(await readFile(path, 'utf8'))).toEqual(rotated);
      expect((await stat(path)).mode & 0o777).toBe(0o600);
    } finally {
      await chmod(folder, 0o755);
    }
  });

  it('refuses before any request when neither the folder nor the file can be written', async () => {
    const folder = join(dir, 'locked');
    await mkdir(folder);
    const path = join(folder, 'creds.json');
    await writeCredsFile(path, testCreds);
    await chmod(path, 0o444);
    await chmod(folder, 0o555);
    try {
      const outcome = await saveAsUnprivileged(path);
      const why = `neither its folder ${folder} nor the file itself may be written by this user (permission denied)`;
      const fix = 'make the file (or its folder) writable by the user grantflow runs as';
      expect(outcome.check).toBe(
        `ConfigError: credentials file ${path} cannot be rewritten: ${why}; ` +
          `a token refresh would lose the rotated refresh token, so ${fix} first`,
      );
      // A save after a refresh says the same in words, not an errno code, and never a secret.
      expect(outcome.save).toMatch(
        new RegExp(`^GrantflowError: could not save rotated credentials to credentials file `),
      );
      expect(outcome.save).toContain(`${path}: ${why}; the site has already replaced the old refresh token, so ${fix}`);
      expect(outcome.save).not.toMatch(/E[A-Z]{3,}/);
      for (const v of Object.values(rotated)) expect(outcome.save).not.toContain(v);
    } finally {
      await chmod(folder, 0o755);
    }
  });
});

describe('FileCredentialStore whose path runs through a regular file', () => {
  it('says which file is in the way, in words, both before a request and when saving', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, 'not a folder');
    const store = new FileCredentialStore(join(file, 'creds.json'));
    const check = await store.checkWritable().catch((e: unknown) => e as Error);
    expect(check).toBeInstanceOf(ConfigError);
    expect((check as Error).message).toContain(`cannot be rewritten: ${file} is a file, not a directory;`);
    const save = await store.save(rotated).catch((e: unknown) => e as Error);
    expect((save as Error).message).toContain(
      `could not save rotated credentials to credentials file ${join(file, 'creds.json')}: ${file} is a file, not a directory;`,
    );
    for (const e of [check, save]) {
      expect((e as Error).message).not.toMatch(/ENOTDIR|E[A-Z]{4,}/);
      for (const v of Object.values(rotated)) expect((e as Error).message).not.toContain(v);
    }
  });
});
