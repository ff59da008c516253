/**
 * Evenly spaced rate limiter (GCRA with a burst of one): consecutive releases are at least
 * `1000 / (rate * (1 - margin))` ms apart (less at most 3 ms of forgiven timer lateness), measured from the
 * previous release rather than a fixed schedule, so a badly late timer never lets requests bunch up.
 * A fixed window would allow 2 × rate across a window edge.
 */
export interface RateLimiterOptions {
  /** Requests per second. */
  readonly rate: number;
  /** Safety margin so arrival jitter (network, GC pauses) cannot fit rate + 1 requests in a window (default 3 %). */
  readonly margin?: number;
  readonly now?: () => number;
}

export class RateLimiter {
  private readonly baseIntervalMs: number;
  private readonly now: () => number;
  private lastRelease = Number.NEGATIVE_INFINITY;
  private pausedUntil = 0;
  private slowUntil = 0;
  private readonly waiters: Array<() => void> = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(options: RateLimiterOptions) {
    if (!(options.rate > 0)) throw new RangeError('rate must be > 0');
    const margin = options.margin ?? 0.03;
    this.baseIntervalMs = 1000 / (options.rate * (1 - margin));
    this.now = options.now ?? (() => performance.now());
  }

  get intervalMs(): number {
    // While slowed after a 429, space requests 1.5 × further apart.
    return this.now() < this.slowUntil ? this.baseIntervalMs * 1.5 : this.baseIntervalMs;
  }

  /** Resolves when the caller may start one request. FIFO. */
  acquire(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.waiters.push(resolve);
      this.pump();
    });
  }

  /** After a 429: nobody starts for `pauseMs`, then the rate is lowered for `slowForMs`. */
  penalize(pauseMs: number, slowForMs = 10_000): void {
    const now = this.now();
    this.pausedUntil = Math.max(this.pausedUntil, now + pauseMs);
    this.slowUntil = Math.max(this.slowUntil, now + pauseMs + slowForMs);
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.pump();
  }

  private pump(): void {
    if (this.timer || this.waiters.length === 0) return;
    const now = this.now();
    let at = Math.max(this.lastRelease + this.intervalMs, this.pausedUntil);
    if (at > now) return this.arm(at - now);
    // Release every waiter whose slot has come: at high rates (interval ~1 ms) one release per timer tick would
    // cap the rate at the timer's resolution (~400/s at --rate 1000). Slots stay `interval` apart, so at 5/s
    // this releases one. Count a timer that fired up to 3 ms late as on time, so timer latency does not pile up
    // into a lower rate. Gaps stay >= interval - 3 ms, so six starts span >= 5 x interval - 3 ms (~1028 ms at 5/s).
    while (at <= now && this.waiters.length > 0) {
      this.lastRelease = Math.max(at, now - 3);
      this.waiters.shift()?.();
      at = this.lastRelease + this.intervalMs;
    }
    // Schedule the following waiter relative to the last release.
    if (this.waiters.length > 0) this.arm(at - now);
  }

  private arm(delayMs: number): void {
    // A timer that fires early (relative to performance.now) just re-arms for the remainder in pump().
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.pump();
      },
      Math.max(1, Math.ceil(delayMs)),
    );
  }
}

/** Caps how many requests are in flight at once. */
export class Semaphore {
  private active = 0;
  private readonly queue: Array<() => void> = [];

  constructor(private readonly limit: number) {
    if (!(limit >= 1)) throw new RangeError('concurrency must be >= 1');
  }

  async acquire(): Promise<() => void> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.queue.push(resolve));
    else this.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.queue.shift();
      if (next) next();
      else this.active--;
    };
  }
}
