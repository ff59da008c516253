import { stat } from 'node:fs/promises';

/**
 * The warning for a credentials file that group or others may read or change (null when only its owner may, or it
 * is not there: reading it reports that). `doctor` says the same; `sync` logs it and goes on.
 */
export async function credentialsModeWarning(path: string | undefined): Promise<string | null> {
  if (path === undefined) return null;
  const mode = await stat(path).then(
    (s) => s.mode & 0o777,
    () => null,
  );
  if (mode === null || (mode & 0o077) === 0) return null;
  return `credentials file ${path} (mode ${mode.toString(8)}): other users may read or change it; run chmod 600 ${path}`;
}
