/**
 * A real S3-compatible server for tests: s3rver (an npm package serving the S3 REST API over HTTP from a temp folder),
 * started in the test's process on a free port, with one bucket and a key pair of our own (long and random, so a test
 * can prove it never reaches an output). The SDK reaches it as it would MinIO: AWS_ENDPOINT_URL and path-style.
 */
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { tempDir } from './harness.ts';

interface S3rverInstance {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;
interface AccountModule {
  DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void };
}

const require = createRequire(import.meta.url);
// The SDK's notice about versions after the pinned one, printed once per process under Node 20: noise in test output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// s3rver ships CommonJS without types: only what is used here is declared above.
const S3rver = require('s3rver') as S3rverClass;
const accounts = require('s3rver/lib/models/account.js') as AccountModule;

export interface S3Server {
  readonly endpoint: string;
  readonly bucket: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** What a grantflow process needs to reach the bucket, as a user would set it. */
  readonly env: Record<string, string>;
  close(): Promise<void>;
}

/** `more` are further buckets the server holds (the docs' examples name two). */
export async function startS3Server(bucket = 'grantflow-test', more: readonly string[] = []): Promise<S3Server> {
  const dir = await tempDir('grantflow-s3rver-');
  const accessKeyId = `AKIA${randomBytes(8).toString('hex').toUpperCase()}`;
  const secretAccessKey = randomBytes(30).toString('base64');
  accounts.DUMMY_ACCOUNT.createKeyPair(accessKeyId, secretAccessKey);
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: dir.path,
    configureBuckets: [bucket, ...more].map((name) => ({ name })),
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    accessKeyId,
    secretAccessKey,
    env: {
      AWS_ENDPOINT_URL: endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: accessKeyId,
      AWS_SECRET_ACCESS_KEY: secretAccessKey,
      GRANTFLOW_S3_FORCE_PATH_STYLE: 'true',
      // No profile or config file of the machine running the tests may change what the SDK uses.
      AWS_CONFIG_FILE: '/dev/null',
      AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
      AWS_EC2_METADATA_DISABLED: 'true',
    },
    close: async () => {
      await server.close();
      await dir.remove();
    },
  };
}
