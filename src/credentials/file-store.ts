import { open, readFile, readlink, realpath, unlink, chmod } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ConfigError, GrantflowError } from '../util/errors.ts';
import { pathProblem } from '../util/path-problem.ts';
import { writeFileDurable } from '../util/durable-file.ts';
import { parseCredentials, registerCredentialSecrets } from './credential-pair.ts';
import type { Credentials, CredentialStore } from './types.ts';

function errnoCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string' ? e.code : undefined;
}

/**
 * Credentials in a JSON file `{client_id, client_secret, access_token, refresh_token}`, rewritten in place
 * (atomically, mode 0600) after every refresh: the site invalidates the old refresh token at once.
 */
export class FileCredentialStore implements CredentialStore {
  readonly description: string;

  constructor(readonly path: string) {
    this.description = `credentials file ${path}`;
  }

  async load(): Promise<Credentials> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (e) {
      const code = errnoCode(e);
      const why =
        code === 'ENOENT'
          ? 'does not exist'
          : code === 'EACCES' || code === 'EPERM'
            ? 'cannot be read (permission denied)'
            : code === 'EISDIR'
              ? 'is a directory'
              : `cannot be read (${pathProblem(e, dirname(this.path))})`;
      throw new ConfigError(`${this.description} ${why}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      // The parser's message may quote file content (a secret), so it is not passed on.
      throw new ConfigError(`${this.description} is not valid JSON`);
    }
    return parseCredentials(parsed, this.description);
  }

  /**
   * Proves, before any request, that a rotated pair could be saved: the site kills the old refresh token the moment
   * it issues a new one, so a save that fails afterwards loses the credentials for good. Either a temporary file can
   * be created next to the file (the atomic write) or the file itself can be written (the fallback in `save`).
   */
  async checkWritable(): Promise<void> {
    let target = this.path;
    let fellBack = false;
    try {
      target = await linkTarget(this.path);
      const probe = hiddenSibling(target, 'probe');
      try {
        await (await open(probe, 'wx', 0o600)).close();
        await unlink(probe);
        return;
      } catch (e) {
        if (!folderRefused(e)) throw e;
      }
      fellBack = true;
      await (await open(target, 'r+')).close();
    } catch (e) {
      const { why, fix } = saveProblem(e, target, fellBack);
      throw new ConfigError(
        `${this.description} cannot be rewritten: ${why}; a token refresh would lose the rotated refresh token, ` +
          `so ${fix} first`,
        { cause: e },
      );
    }
  }

  async save(credentials: Credentials): Promise<void> {
    registerCredentialSecrets(credentials);
    const body = `${JSON.stringify(
      {
        client_id: credentials.client_id,
        client_secret: credentials.client_secret,
        access_token: credentials.access_token,
        refresh_token: credentials.refresh_token,
      },
      null,
      2,
    )}\n`;
    let target = this.path;
    let fellBack = false;
    try {
      // A symlinked file (a secrets mount, a shared folder) is rewritten where it points: renaming over the link
      // would replace it with a regular file and leave the dead refresh token in its target.
      target = await linkTarget(this.path);
      try {
        await replaceAtomically(target, body);
      } catch (e) {
        // A folder we may not write (a root-owned secrets folder) with a file we may: rewriting the file in place
        // is not atomic, but losing the only working refresh token is worse.
        if (!folderRefused(e)) throw e;
        fellBack = true;
        await rewriteInPlace(target, body);
      }
    } catch (e) {
      const { why, fix } = saveProblem(e, target, fellBack);
      throw new GrantflowError(
        `could not save rotated credentials to ${this.description}: ${why}; the site has already replaced the old ` +
          `refresh token, so ${fix}, and regenerate the credentials in the site's integration settings if this run ` +
          'cannot finish',
        1,
        'credentials_save',
        { cause: e },
      );
    }
  }
}

/**
 * Why the file at `target` could not be written, in words, and what to do about it (an errno code means little to
 * most operators). `fellBack`: its folder refused the temporary file, and `e` is from writing the file itself.
 * Never the file's content: it holds the secrets.
 */
function saveProblem(e: unknown, target: string, fellBack: boolean): { why: string; fix: string } {
  const folder = dirname(target);
  if (fellBack && folderRefused(e) && errnoCode(e) !== 'EROFS')
    return {
      why: `neither its folder ${folder} nor the file itself may be written by this user (permission denied)`,
      fix: 'make the file (or its folder) writable by the user grantflow runs as',
    };
  switch (errnoCode(e)) {
    case 'EROFS':
      return { why: 'it is on a read-only file system', fix: 'keep the credentials file on a writable file system' };
    case 'ENOSPC':
    case 'EDQUOT':
      return { why: `no space left on the device of ${folder}`, fix: 'free some space there' };
    case 'EACCES':
    case 'EPERM':
      return {
        why: `permission denied on the way to it (a folder above ${target} may not be entered)`,
        fix: 'let the user grantflow runs as enter every folder of its path',
      };
    default:
      return { why: pathProblem(e, folder), fix: 'fix the path' };
  }
}

/** Errors of creating a file in a folder that say "not allowed here", as opposed to a broken disk. */
function folderRefused(e: unknown): boolean {
  const code = errnoCode(e);
  return code === 'EACCES' || code === 'EPERM' || code === 'EROFS';
}

/** A fresh hidden file name next to `target` (same folder, so a rename over it stays on one file system). */
function hiddenSibling(target: string, suffix: string): string {
  return join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.${suffix}`);
}

/** Replaced durably and atomically (see writeFileDurable), mode 0600 whatever the umask allowed at creation. */
async function replaceAtomically(target: string, body: string): Promise<void> {
  writeFileDurable(target, hiddenSibling(target, 'tmp'), body, 0o600);
  await chmod(target, 0o600); // umask can only narrow the mode, but be explicit
}

async function rewriteInPlace(target: string, body: string): Promise<void> {
  const fh = await open(target, 'r+');
  try {
    await fh.truncate(0);
    await fh.write(body, 0, 'utf8');
    await fh.chmod(0o600).catch(() => undefined); // not ours to chmod, perhaps; the content matters more
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * The file a write to `path` must replace: the end of its chain of symlinks (resolved like the OS does, relative
 * to each link's folder), or `path` itself when it is not a link. A dangling link gives the missing file it names.
 */
async function linkTarget(path: string): Promise<string> {
  let current = path;
  for (let hops = 0; hops < 40; hops++) {
    try {
      return await realpath(current);
    } catch (e) {
      if (errnoCode(e) !== 'ENOENT') throw e;
    }
    let next: string;
    try {
      next = await readlink(current);
    } catch {
      return current; // no file yet, and not a link: created here
    }
    current = resolve(dirname(current), next);
  }
  throw Object.assign(new Error(`too many symbolic links at ${path}`), { code: 'ELOOP' });
}

/** The file store, validated now so a missing or corrupt file stops the run before anything is written. */
export async function fileCredentialStore(path: string | undefined): Promise<CredentialStore> {
  if (!path) {
    throw new ConfigError(
      'no credentials: pass --credentials FILE (JSON {client_id, client_secret, access_token, refresh_token}) or set GRANTFLOW_CLIENT_ID, GRANTFLOW_CLIENT_SECRET, GRANTFLOW_ACCESS_TOKEN and GRANTFLOW_REFRESH_TOKEN',
    );
  }
  const store = new FileCredentialStore(path);
  await store.load();
  await store.checkWritable();
  return store;
}
