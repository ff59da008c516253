/** Which credentials a command uses when both a credentials file and GRANTFLOW_CLIENT_* variables are given. */
import { afterAll, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadSettings } from '../../src/config/load-settings.ts';
import { credentialsSource, environmentForCredentials } from '../../src/credentials/credentials-source.ts';
import { ConfigError } from '../../src/util/errors.ts';
import { tempDir } from '../support/temp-dir.ts';

const { path: dir, remove: cleanup } = await tempDir('gf-credsource-');
afterAll(() => cleanup());

const clientVars = {
  GRANTFLOW_CLIENT_ID: 'id-value',
  GRANTFLOW_CLIENT_SECRET: 'secret-value',
  GRANTFLOW_ACCESS_TOKEN: 'access-value',
  GRANTFLOW_REFRESH_TOKEN: 'refresh-value',
};

describe('credentials source', () => {
  it('--credentials FILE wins over GRANTFLOW_CLIENT_* variables (flags win over variables)', async () => {
    const env = { GRANTFLOW_CLIENT_ID: 'x' };
    const settings = await loadSettings({ credentials: 'creds.json' }, { env });
    expect(credentialsSource(settings, env)).toBe('file');
    const seen = environmentForCredentials(settings, { ...env, GRANTFLOW_RATE: '3' });
    expect(seen.GRANTFLOW_CLIENT_ID).toBeUndefined();
    expect(seen.GRANTFLOW_RATE).toBe('3');
  });

  it('the variables win over a credentials file named in the pipeline file', async () => {
    const file = join(dir, 'p.json');
    await writeFile(file, JSON.stringify({ credentials: 'creds.json' }));
    const settings = await loadSettings({}, { pipeline: file, env: clientVars });
    expect(credentialsSource(settings, clientVars)).toBe('environment');
    expect(environmentForCredentials(settings, clientVars)).toEqual(clientVars);
  });

  it('without the variables the file is used, wherever it was named', async () => {
    const settings = await loadSettings({}, { env: { GRANTFLOW_CREDENTIALS: 'creds.json' } });
    expect(credentialsSource(settings, {})).toBe('file');
    expect(credentialsSource(await loadSettings({}, { env: {} }), {})).toBe('file');
  });

  it('GRANTFLOW_CREDENTIALS next to GRANTFLOW_CLIENT_* variables is ambiguous: a ConfigError naming both', async () => {
    const env = { GRANTFLOW_CREDENTIALS: 'creds.json', ...clientVars };
    const settings = await loadSettings({}, { env });
    const error = (() => {
      try {
        credentialsSource(settings, env);
        return null;
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/GRANTFLOW_CREDENTIALS names a file and GRANTFLOW_CLIENT_ID, .* are set/);
    for (const value of Object.values(clientVars)) expect((error as Error).message).not.toContain(value);
  });
});
