import type { FaultKind, FaultOptions } from './options.ts';
import { Rng } from './random.ts';

export type Fault =
  { kind: '5xx'; status: number } | { kind: 'truncate' } | { kind: 'reset' } | { kind: 'latency'; ms: number };

const ALL_KINDS: readonly FaultKind[] = ['5xx', 'truncate', 'reset', 'latency'];
/** Faults that happen before the request is processed: the only ones safe on the token endpoint. */
const BEFORE_PROCESSING: readonly FaultKind[] = ['5xx', 'latency'];

/** Seeded: the n-th request gets the same fault for the same seed and settings. */
export class FaultInjector {
  private rng: Rng;
  readonly injected: Record<FaultKind, number> = { '5xx': 0, truncate: 0, reset: 0, latency: 0 };

  constructor(
    private options: FaultOptions,
    defaultSeed: number,
  ) {
    this.rng = new Rng(options.seed ?? defaultSeed);
  }

  configure(options: FaultOptions, defaultSeed: number): void {
    this.options = options;
    this.rng = new Rng(options.seed ?? defaultSeed);
  }

  roll(tokenEndpoint: boolean): Fault | null {
    if (!(this.options.rate > 0)) return null;
    const hit = this.rng.next() < this.options.rate;
    const kindRoll = this.rng.next();
    const jitterRoll = this.rng.next();
    if (!hit) return null;
    let kinds = this.options.kinds && this.options.kinds.length > 0 ? this.options.kinds : ALL_KINDS;
    if (tokenEndpoint) kinds = kinds.filter((k) => BEFORE_PROCESSING.includes(k));
    const kind = kinds[Math.floor(kindRoll * kinds.length)];
    if (!kind) return null;
    this.injected[kind]++;
    switch (kind) {
      case '5xx':
        return { kind, status: [502, 503, 500][Math.floor(jitterRoll * 3)] ?? 502 };
      case 'latency':
        return { kind, ms: (this.options.latencyMs ?? 500) + Math.floor(jitterRoll * (this.options.jitterMs ?? 500)) };
      default:
        return { kind };
    }
  }
}
