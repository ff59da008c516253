import { Worker } from 'node:worker_threads';
import type { BatchContext } from '../extract/row-batcher.ts';
import { GrantflowError } from '../util/errors.ts';
import type { ReplayEvent } from './replay-events.ts';
import { packagePath } from '../util/package-root.ts';

export type ToWorker =
  | {
      readonly type: 'start';
      readonly id: number;
      readonly dir: string;
      readonly stream: string;
      /** Without the catalog, which holds functions: the worker uses the built-in one (defaultCatalog). */
      readonly context: Omit<BatchContext, 'catalog'>;
    }
  | { readonly type: 'ack'; readonly id: number };

export type FromWorker =
  | { readonly type: 'event'; readonly id: number; readonly event: ReplayEvent }
  | { readonly type: 'done'; readonly id: number }
  | { readonly type: 'error'; readonly id: number; readonly message: string };

type Inbox = (FromWorker | { readonly type: 'crash'; readonly error: Error })[];

/** Messages for one stream, and the wake-up of its reader while it waits for the next. */
interface Box {
  readonly inbox: Inbox;
  notify: (() => void) | null;
}

/**
 * Compiled (dist/), the worker module runs as it is; from the sources, a worker does not inherit the tsx loader the
 * CLI registered, so it starts through an entry that registers it (and pays for a second TypeScript load). Both are
 * found from the package root: the one-file CLI build does not sit next to them.
 */
const entry = import.meta.url.endsWith('.ts')
  ? packagePath('src', 'pipeline', 'replay-worker-entry.js')
  : packagePath('dist', 'pipeline', 'replay-worker.js');

/**
 * One worker thread that reads, parses and normalises raw pages (`replayEvents`) while the main thread stages and
 * merges, so the two halves of a replay overlap instead of taking turns. Streams replayed at the same time share
 * it (a second thread would cost its own heap and TypeScript load for little gain on a small machine). A failed
 * worker fails every stream it was serving.
 */
export class ReplayWorker {
  private worker: Worker | null = null;
  private readonly inboxes = new Map<number, Box>();
  private nextId = 1;

  private start(): Worker {
    if (this.worker) return this.worker;
    // A small young generation: the worker's rows are short-lived, and V8's default semi-spaces hold more of them
    // (medium replay peak RSS ~520 → ~500–510 MB, time within noise).
    const worker = new Worker(entry, { resourceLimits: { maxYoungGenerationSizeMb: 8 } });
    const deliver = (box: Box | undefined, m: Inbox[number]): void => {
      if (!box) return;
      box.inbox.push(m);
      box.notify?.();
      box.notify = null;
    };
    const crash = (error: Error): void => {
      for (const box of this.inboxes.values()) deliver(box, { type: 'crash', error });
    };
    worker.on('message', (m: FromWorker) => deliver(this.inboxes.get(m.id), m));
    worker.on('error', crash);
    worker.on('exit', (code: number) => {
      if (this.worker === worker) this.worker = null;
      crash(new Error(`it exited with code ${code}`));
    });
    this.worker = worker;
    return worker;
  }

  async *events(dir: string, stream: string, context: BatchContext): AsyncGenerator<ReplayEvent> {
    const worker = this.start();
    const id = this.nextId++;
    const box: Box = { inbox: [], notify: null };
    this.inboxes.set(id, box);
    let finished = false;
    try {
      const { catalog: _catalog, ...cloneable } = context;
      worker.postMessage({ type: 'start', id, dir, stream, context: cloneable } satisfies ToWorker);
      for (;;) {
        if (box.inbox.length === 0) await new Promise<void>((r) => (box.notify = r));
        const m = box.inbox.shift()!;
        if (m.type === 'event') {
          yield m.event;
          worker.postMessage({ type: 'ack', id } satisfies ToWorker);
        } else if (m.type === 'done') {
          finished = true;
          return;
        } else if (m.type === 'error') {
          finished = true;
          throw new GrantflowError(`replay of ${stream}: ${m.message}`);
        } else {
          throw new GrantflowError(`replay of ${stream}: the worker thread failed: ${m.error.message}`);
        }
      }
    } finally {
      this.inboxes.delete(id);
      // A stream abandoned midway leaves the worker blocked on it: stop the worker; the next stream starts another.
      if (!finished) await this.close();
    }
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    // Streams still reading from it get the exit as a failure (see start).
    if (worker) await worker.terminate();
  }
}
