/**
 * Where `--snapshots` points: a folder, or an object store's URL. Read by the settings (to refuse a URL that names no
 * snapshot location) and by the snapshot writer (to open the store it names).
 */

/** Object store URLs grantflow writes snapshots to. */
export const objectStoreUrlPattern = /^s3:\/\//i;

export function isObjectStoreUrl(target: string): boolean {
  return objectStoreUrlPattern.test(target);
}

export interface S3Location {
  readonly bucket: string;
  /** Without leading or trailing `/`; empty for the bucket's root. */
  readonly prefix: string;
}

/** S3's bucket naming rules (3-63 lower-case letters, digits, dots and hyphens); stores that allow more are rare. */
const bucketPattern = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** `s3://bucket/prefix` split, or the reason it is not one. */
export function parseS3Url(text: string): S3Location | { readonly problem: string } {
  const m = /^s3:\/\/([^/?#]*)\/?([^?#]*)$/i.exec(text);
  if (!m) return { problem: 'must be s3://bucket or s3://bucket/prefix (no query or fragment)' };
  const bucket = m[1] ?? '';
  if (!bucketPattern.test(bucket)) {
    return {
      problem: `names bucket "${bucket}", which is not a bucket name (3-63 lower-case letters, digits, . and -)`,
    };
  }
  const prefix = (m[2] ?? '').replace(/\/+$/, '');
  if (prefix.split('/').some((part) => part === '' || part === '.' || part === '..')) {
    if (prefix !== '') return { problem: `has an empty, "." or ".." part in its prefix "${prefix}"` };
  }
  return { bucket, prefix };
}

/** Why `target` cannot name a snapshot location, or null: any URL but an object store's would become a local folder. */
export function snapshotTargetProblem(target: string): string | null {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) return null;
  if (!isObjectStoreUrl(target)) {
    return 'must be a directory or an s3://bucket/prefix URL (S3 and S3-compatible stores); no other kind of URL names a snapshot location';
  }
  const parsed = parseS3Url(target);
  return 'problem' in parsed ? parsed.problem : null;
}
