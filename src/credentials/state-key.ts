import { createCipheriv, createDecipheriv, randomBytes, scrypt } from 'node:crypto';
import { ConfigError } from '../util/errors.ts';
import { registerSecret } from '../util/redact.ts';

/** The variable holding the key that encrypts the credential pair kept in the warehouse. */
export const stateKeyVariable = 'GRANTFLOW_STATE_KEY';

/** Shorter passphrases are refused: the key guards a live refresh token. */
const minLength = 16;

/** A sealed value: `sealed:v1:<salt>.<iv>.<tag>.<ciphertext>`, each part base64url. */
const prefix = 'sealed:v1:';

/**
 * scrypt stretches whatever text the key is (a passphrase as well as `openssl rand -base64 32`) into the AES-256
 * key. N = 2^15, r = 8 takes 32 MiB and about 0.1 s, once per salt and process; Node's default memory cap for
 * scrypt is exactly 32 MiB, so it is raised.
 */
const kdf = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 2 ** 20 } as const;

/** The value cannot be opened with this key: another key sealed it, or it was altered. */
export class StateKeyMismatch extends Error {}

export function isSealed(value: string): boolean {
  return value.startsWith(prefix);
}

/**
 * The key of GRANTFLOW_STATE_KEY: seals values with AES-256-GCM (authenticated, so a wrong key or an altered value is
 * detected, never decrypted into garbage) and opens them. `context` names what a value is (a column and the client
 * id) and is authenticated with it, so a sealed value copied into another column or row does not open.
 */
export class StateKey {
  readonly #passphrase: string;
  readonly #keys = new Map<string, Promise<Buffer>>();
  /** One salt per process: every value it seals shares one derivation. */
  readonly #salt = randomBytes(16).toString('base64url');

  private constructor(passphrase: string) {
    this.#passphrase = passphrase;
  }

  /** The key from `env`, or null when GRANTFLOW_STATE_KEY is unset or empty; a ConfigError when it is too short. */
  static fromEnv(env: NodeJS.ProcessEnv): StateKey | null {
    const text = env[stateKeyVariable];
    if (!text) return null;
    registerSecret(text);
    if (text.length < minLength) {
      throw new ConfigError(
        `${stateKeyVariable} is too short (${text.length} characters): use at least ${minLength}, for example the ` +
          'output of `openssl rand -base64 32`',
      );
    }
    return new StateKey(text);
  }

  async seal(plain: string, context: string): Promise<string> {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', await this.#key(this.#salt), iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const parts = [iv, cipher.getAuthTag(), body].map((b) => b.toString('base64url'));
    return `${prefix}${[this.#salt, ...parts].join('.')}`;
  }

  /** The plain value; a StateKeyMismatch when this key did not seal it (or it was altered or cut). */
  async open(sealed: string, context: string): Promise<string> {
    const parts = sealed.slice(prefix.length).split('.');
    const [salt, iv, tag, body] = parts;
    if (!isSealed(sealed) || parts.length !== 4 || !salt || !iv || !tag || body === undefined)
      throw new StateKeyMismatch('not a sealed value');
    try {
      // The tag's length is fixed: GCM would otherwise accept a cut tag, which is far easier to forge.
      const decipher = createDecipheriv('aes-256-gcm', await this.#key(salt), Buffer.from(iv, 'base64url'), {
        authTagLength: 16,
      });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    } catch (e) {
      throw new StateKeyMismatch('the value does not open with this key', { cause: e });
    }
  }

  #key(salt: string): Promise<Buffer> {
    let key = this.#keys.get(salt);
    if (!key) {
      key = new Promise<Buffer>((resolve, reject) =>
        scrypt(this.#passphrase, Buffer.from(salt, 'base64url'), 32, kdf, (e, k) => (e ? reject(e) : resolve(k))),
      );
      this.#keys.set(salt, key);
    }
    return key;
  }
}
