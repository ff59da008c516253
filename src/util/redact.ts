/**
 * Secrets registered here are replaced in every log line and every error message the CLI prints.
 * The site client registers each token as soon as it holds it (including rotated ones).
 */
const secrets = new Set<string>();

export function registerSecret(value: string | undefined | null): void {
  // Very short values would redact ordinary words; real tokens are long.
  if (!value || value.length < 8) return;
  secrets.add(value);
  // The forms a secret travels in, which a page echoing a request (the refresh form, a URL) or a JSON log line shows
  // instead of the value itself when it holds characters such as `~ / + =` or a quote.
  secrets.add(new URLSearchParams({ v: value }).toString().slice(2));
  secrets.add(encodeURIComponent(value));
  secrets.add(JSON.stringify(value).slice(1, -1));
}

export function redact(text: string): string {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join('[REDACTED]');
  return out;
}

/** Key names whose values are always redacted in structured logs. */
export const secretKeys = [
  'access_token',
  'refresh_token',
  'client_secret',
  'authorization',
  'Authorization',
  'password',
] as const;
