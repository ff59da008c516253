import { subscribe } from 'node:diagnostics_channel';

/**
 * When undici writes a request's headers to its socket, the moment a remote server's clock starts to count it. A
 * request handed to undici may reach its socket much later: a connection being opened (a TLS handshake to a distant
 * site takes a few round trips) or an event loop busy with a load. The rate limiter's window counts that moment, so
 * a late write cannot crowd the requests after it into one of the server's seconds.
 *
 * undici publishes `undici:request:create` synchronously inside `dispatch` when a connection is free (the transport's
 * concurrency cap keeps one free), then `undici:client:sendHeaders` as it writes. A request created later (queued
 * in the pool) is not matched and keeps the time it was handed over.
 */
const written = new WeakMap<object, () => void>();
let creating: (() => void) | null = null;
let subscribed = false;

function subscribeOnce(): void {
  if (subscribed) return;
  subscribed = true;
  subscribe('undici:request:create', (message) => {
    if (creating) written.set((message as { request: object }).request, creating);
    creating = null;
  });
  subscribe('undici:client:sendHeaders', (message) => {
    const request = (message as { request: object }).request;
    written.get(request)?.();
    written.delete(request);
  });
}

/** Runs `dispatch` (one undici request) so that `onWritten` is called when its headers are written to the socket. */
export function whenWritten<T>(onWritten: () => void, dispatch: () => T): T {
  subscribeOnce();
  creating = onWritten;
  try {
    return dispatch();
  } finally {
    creating = null;
  }
}
