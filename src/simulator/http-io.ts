import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JsonValue } from '../util/json.ts';

export const MAX_BODY_BYTES = 5 * 1024 * 1024;

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > MAX_BODY_BYTES) throw new Error('request body too large');
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** JSON or urlencoded, whichever the body is (the token endpoint accepts both). */
export function parseFormOrJson(raw: string): Record<string, string> | undefined {
  const text = raw.trim();
  if (text.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(parsed))
        if (typeof v === 'string' || typeof v === 'number') out[k] = String(v);
      return out;
    } catch {
      return undefined;
    }
  }
  return Object.fromEntries(new URLSearchParams(text));
}

export function parseJsonBody(raw: string): { ok: true; value: JsonValue | undefined } | { ok: false } {
  if (raw.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(raw) as JsonValue };
  } catch {
    return { ok: false };
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: JsonValue | undefined,
  options: { truncate?: boolean; headers?: Record<string, string> } = {},
): void {
  const text = body === undefined || status === 204 ? '' : JSON.stringify(body);
  sendJsonText(res, status, text, options);
}

/** A JSON answer already written as text. */
export function sendJsonText(
  res: ServerResponse,
  status: number,
  json: string,
  options: { truncate?: boolean; headers?: Record<string, string> } = {},
): void {
  let text = json;
  // A truncated body is a complete HTTP response whose JSON stops mid-way.
  if (options.truncate && text.length > 1) text = text.slice(0, Math.floor(text.length / 2));
  const buf = Buffer.from(text, 'utf8');
  const headers: Record<string, string | number> = { ...options.headers };
  if (status !== 204) {
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = buf.length;
  }
  res.writeHead(status, headers);
  res.end(status === 204 ? undefined : buf);
}

const REASONS: Record<number, string> = {
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

export function sendHtmlError(res: ServerResponse, status: number): void {
  const reason = REASONS[status] ?? 'Error';
  const html = `<html>\r\n<head><title>${status} ${reason}</title></head>\r\n<body>\r\n<center><h1>${status} ${reason}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;
  res.writeHead(status, { 'Content-Type': 'text/html', 'Content-Length': Buffer.byteLength(html) });
  res.end(html);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
