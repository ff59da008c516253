import { parentPort } from 'node:worker_threads';

import { replayEvents } from './replay-events.ts';

import type { ToWorker, FromWorker } from './replay-worker-client.ts';
import { defaultCatalog } from '../streams/registry.ts';

/** Events of one stream sent and not yet taken by the main thread: bounds the rows in flight between threads. */
const window = 8;

const port = parentPort;
if (!port) throw new Error('replay-worker runs as a worker thread');
const post = (m: FromWorker): void => port.postMessage(m);

/** Streams this worker is replaying (several interleave: each waits for the main thread to take its events). */
const flows = new Map<number, { sent: number; taken: number; wake: (() => void) | null }>();

port.on('message', (m: ToWorker) => {
  if (m.type === 'ack') {
    const flow = flows.get(m.id);
    if (!flow) return;
    flow.taken++;
    flow.wake?.();
    flow.wake = null;
    return;
  }
  void replay(m);
});

async function replay(m: Extract<ToWorker, { type: 'start' }>): Promise<void> {
  const flow = { sent: 0, taken: 0, wake: null as (() => void) | null };
  flows.set(m.id, flow);
  try {
    const def = defaultCatalog.streamByName(m.stream);
    if (!def) throw new Error(`unknown stream ${m.stream}`);
    for await (const event of replayEvents(m.dir, def, { ...m.context, catalog: defaultCatalog })) {
      post({ type: 'event', id: m.id, event });
      flow.sent++;
      while (flow.sent - flow.taken >= window) await new Promise<void>((r) => (flow.wake = r));
    }
    post({ type: 'done', id: m.id });
  } catch (e) {
    post({ type: 'error', id: m.id, message: e instanceof Error ? e.message : String(e) });
  } finally {
    flows.delete(m.id);
  }
}
