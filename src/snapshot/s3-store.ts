import { createReadStream, createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { isLoopbackHost, loopbackOnlyLookup } from '../util/loopback-host.ts';
import { Agent as HttpAgent } from 'node:http';
import { ConfigError, ExitCode, firstLine, GrantflowError } from '../util/errors.ts';
import { registerSecret } from '../util/redact.ts';
import { parseS3Url } from '../config/snapshot-location.ts';
import type { ObjectStore } from './object-store.ts';

export interface S3StoreOptions {
  /** Path-style addressing (`endpoint/bucket/key`), which MinIO and most self-hosted stores need. */
  readonly forcePathStyle?: boolean;
}

/**
 * Errors a person must fix (credentials, permissions, the bucket or region named): exit 2 like any bad setting. Anything
 * else (the network, a 5xx after the SDK's own retries) fails the run (exit 1).
 */
const configErrorNames = new Set([
  'AccessDenied',
  'AllAccessDisabled',
  'AuthorizationHeaderMalformed',
  'CredentialsProviderError',
  'InvalidAccessKeyId',
  'InvalidBucketName',
  'InvalidToken',
  'ExpiredToken',
  'NoSuchBucket',
  'PermanentRedirect',
  'SignatureDoesNotMatch',
]);

/** Multipart uploads in parts of 16 MiB (S3's least is 5 MiB): 4 in flight, so 64 MiB of memory at most. */
const partSize = 16 * 1024 * 1024;
const queueSize = 4;

/**
 * An SDK error as one line naming what failed; never the request (its signature) or the credentials. Without the SDK's
 * error as its cause: logged, that one carries the response's fields (the access key id, the string signed).
 */
export function s3Failure(what: string, e: unknown): GrantflowError {
  if (e instanceof GrantflowError) return e;
  const name = e instanceof Error ? e.name : '';
  const status = e instanceof S3ServiceException ? e.$metadata.httpStatusCode : undefined;
  const text = firstLine(e);
  const why = name && !text.startsWith(name) && name !== 'Error' ? `${name}: ${text}` : text;
  const where = status === undefined ? '' : ` (HTTP ${status})`;
  if (/region is missing/i.test(text)) {
    return new ConfigError(
      `${what}: no AWS region is set; set AWS_REGION (or region in ~/.aws/config; any value for most S3-compatible stores)`,
    );
  }
  if (configErrorNames.has(name) || status === 403) {
    return new ConfigError(
      `${what}: ${why}${where}; check the bucket, the credentials (AWS_ACCESS_KEY_ID, AWS_PROFILE, ...) and, for a ` +
        'store other than AWS, AWS_ENDPOINT_URL and --s3-force-path-style',
    );
  }
  return new GrantflowError(`${what}: ${why}${where}`, ExitCode.runFailed, 'snapshot_failed');
}

/**
 * The SDK signs requests but does not encrypt them: over plain http the objects (personal data) and session tokens
 * would cross the network readable, so http is only for a store on this machine (MinIO, s3rver in tests).
 */
function checkEndpoint(): void {
  for (const name of ['AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL']) {
    const value = process.env[name];
    if (!value) continue;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new ConfigError(`${name} is not a URL`);
    }
    if (url.protocol === 'http:' && !isLoopbackHost(url.hostname))
      throw new ConfigError(`${name} ${url.origin} must use https:// (plain http only to a loopback host)`);
  }
}

const notFound = (e: unknown): boolean =>
  e instanceof S3ServiceException &&
  (e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata.httpStatusCode === 404);

/**
 * An S3 bucket (AWS or any S3-compatible store) through the AWS SDK v3. Endpoint, region and credentials come from the
 * SDK's standard sources (AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, the
 * ~/.aws files, instance roles...), so the store is configured as the AWS CLI is.
 */
export class S3Store implements ObjectStore {
  private constructor(
    readonly description: string,
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly prefix: string,
  ) {}

  static open(url: string, options: S3StoreOptions = {}): S3Store {
    const location = parseS3Url(url);
    if ('problem' in location) throw new ConfigError(`--snapshots ${url} ${location.problem}`);
    checkEndpoint();
    // Printed by the SDK on every run under Node 20 about versions after the one pinned here: not this run's concern.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    // Any message that would echo one of these (none should) has it replaced; see util/redact.ts.
    registerSecret(process.env.AWS_SECRET_ACCESS_KEY);
    registerSecret(process.env.AWS_SESSION_TOKEN);
    // Over plain http (an endpoint on this machine), each connection checks where the name resolved to.
    const client = new S3Client({
      forcePathStyle: options.forcePathStyle ?? false,
      requestHandler: { httpAgent: new HttpAgent({ keepAlive: true, lookup: loopbackOnlyLookup }) },
    });
    return new S3Store(url.replace(/\/+$/, ''), client, location.bucket, location.prefix);
  }

  private key(key: string): string {
    return this.prefix === '' ? key : `${this.prefix}/${key}`;
  }

  async putFile(key: string, path: string, contentType: string, signal?: AbortSignal): Promise<void> {
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: this.key(key), Body: createReadStream(path), ContentType: contentType },
      partSize,
      queueSize,
      // A failed multipart upload is aborted, so its parts are not left stored (and billed).
      leavePartsOnError: false,
    });
    const abort = (): void => void upload.abort().catch(() => undefined);
    signal?.addEventListener('abort', abort, { once: true });
    try {
      await upload.done();
    } finally {
      signal?.removeEventListener('abort', abort);
    }
  }

  async putText(key: string, text: string, contentType: string): Promise<void> {
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: this.key(key), Body: text, ContentType: contentType }),
    );
  }

  async getText(key: string): Promise<string | null> {
    try {
      const reply = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
      return (await reply.Body?.transformToString('utf8')) ?? '';
    } catch (e) {
      if (notFound(e)) return null;
      throw e;
    }
  }

  async getFile(key: string, path: string): Promise<void> {
    const reply = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
    await pipeline(reply.Body as Readable, createWriteStream(path));
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
      return true;
    } catch (e) {
      if (notFound(e)) return false;
      throw e;
    }
  }

  async copy(from: string, to: string): Promise<void> {
    // The source as `bucket/key`, URL-encoded; `/` and `=` (in snapshot folder names) as they are, which S3 accepts
    // and some compatible stores (s3rver) need: they do not decode `%3D`.
    const source = encodeURI(`${this.bucket}/${this.key(from)}`);
    await this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: this.key(to), CopySource: source }));
  }

  async list(prefix: string): Promise<string[]> {
    const full = this.key(prefix);
    const strip = this.prefix === '' ? 0 : this.prefix.length + 1;
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: full, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) if (o.Key !== undefined) keys.push(o.Key.slice(strip));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return keys;
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
  }

  async abortIncompleteUploads(): Promise<number> {
    let aborted = 0;
    try {
      let keyMarker: string | undefined;
      let idMarker: string | undefined;
      do {
        const page = await this.client.send(
          new ListMultipartUploadsCommand({
            Bucket: this.bucket,
            Prefix: this.prefix === '' ? undefined : `${this.prefix}/`,
            KeyMarker: keyMarker,
            UploadIdMarker: idMarker,
          }),
        );
        for (const u of page.Uploads ?? []) {
          if (u.Key === undefined || u.UploadId === undefined) continue;
          await this.client.send(
            new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: u.Key, UploadId: u.UploadId }),
          );
          aborted++;
        }
        keyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
        idMarker = page.IsTruncated ? page.NextUploadIdMarker : undefined;
      } while (keyMarker !== undefined);
    } catch (e) {
      // Stores without ListMultipartUploads (some emulators) answer NotImplemented: nothing to do there.
      if (e instanceof S3ServiceException && (e.name === 'NotImplemented' || e.$metadata.httpStatusCode === 501)) {
        return aborted;
      }
      throw e;
    }
    return aborted;
  }

  close(): void {
    this.client.destroy();
  }
}
