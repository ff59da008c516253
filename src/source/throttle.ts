import { abortableWait } from './retry.ts';

/**
 * Evenly spaced rate limiter (GCRA with a burst of one) with a sliding-window guard. Consecutive releases are at
 * least `1000 / (rate * (1 - margin))` ms apart (less at most 3 ms of forgiven timer lateness), measured from the
 * previous release rather than a fixed schedule, so a badly late timer never lets requests bunch up. On top of that,
 * no request starts within `1000 + windowMarginMs` ms of the start `floor(rate)` starts before it, where a start is
 * the latest of when the request was handed to undici and when undici wrote it to its socket (`Slot.started`, called
 * at both), not when its slot came: a request held up in between (an event loop busy with a load, a connection being
 * opened) would otherwise arrive close to the ones after it, and a server counting a strict sliding second would see
 * one too many. A fixed window would allow 2 × rate across a window edge.
 */
export interface RateLimiterOptions {
  /** Requests per second. */
  readonly rate: number;
  /** Safety margin so arrival jitter (network, GC pauses) cannot fit rate + 1 requests in a window (default 3 %). */
  readonly margin?: number;
  /**
   * Added to the one-second window the last `floor(rate)` starts are kept out of (default 45 ms: an arrival that
   * much late, a busy server or a connection being opened, still fits; the rate stays at 95.7 % of the limit).
   */
  readonly windowMarginMs?: number;
  readonly now?: () => number;
}

/** A released request: call `started` as it is handed over and again as it is written, so the window counts its real start. */
export interface Slot {
  started(): void;
}

/** Releases without a 429 before the spacing shrinks one step back towards `rate`. */
const recoverEvery = 20;
const maxSlowdown = 10;

export class RateLimiter {
  private readonly baseIntervalMs: number;
  private readonly now: () => number;
  private lastRelease = Number.NEGATIVE_INFINITY;
  private pausedUntil = 0;
  /** How much further apart than `rate` requests go, learned from 429s (see `penalize`). */
  private slowdown = 1;
  private lastSlowdownAt = Number.NEGATIVE_INFINITY;
  private releasesSinceChange = 0;
  private readonly waiters: Array<(slot: Slot) => void> = [];
  private timer: NodeJS.Timeout | null = null;
  /** The last `perWindow` starts, oldest first: a release waits until the oldest is a window (and margin) old. */
  private readonly starts: { at: number }[] = [];
  private readonly perWindow: number;
  private readonly windowMs: number;

  constructor(options: RateLimiterOptions) {
    if (!(options.rate > 0)) throw new RangeError('rate must be > 0');
    const margin = options.margin ?? 0.03;
    this.baseIntervalMs = 1000 / (options.rate * (1 - margin));
    this.perWindow = Math.max(1, Math.floor(options.rate));
    this.windowMs = 1000 + (options.windowMarginMs ?? 45);
    this.now = options.now ?? (() => performance.now());
  }

  get intervalMs(): number {
    return this.baseIntervalMs * this.slowdown;
  }

  /**
   * Resolves when the caller may start one request. FIFO, but a `first` caller goes before every waiter. Once
   * `signal` is aborted the caller leaves the queue and the wait fails with a StoppedError.
   */
  acquire(first = false, signal?: AbortSignal): Promise<Slot> {
    return abortableWait<Slot>(
      signal,
      (resolve) => {
        if (first) this.waiters.unshift(resolve);
        else this.waiters.push(resolve);
        this.pump();
      },
      (resolve) => {
        removeWaiter(this.waiters, resolve);
        // The timer was armed for the waiters (after a 429, up to the end of a Retry-After pause): with none left it
        // would only keep the process alive, a stopped sync sitting out the pause. The next waiter arms it again.
        if (this.waiters.length === 0 && this.timer) {
          clearTimeout(this.timer);
          this.timer = null;
        }
      },
    );
  }

  /**
   * After a 429: nobody starts for `pauseMs`, and requests go 25 % further apart from then on (up to 10 ×), once per
   * burst of 429s (those of requests already in flight count as one). Every `recoverEvery` releases without a 429
   * the spacing shrinks by 5 % back towards `rate`. When the site's real limit is below `rate` (a plan that changed,
   * a limit shared with another client), the pace settles just under it, meeting a 429 every hundred requests or so,
   * instead of one in two.
   */
  penalize(pauseMs: number): void {
    const now = this.now();
    this.pausedUntil = Math.max(this.pausedUntil, now + pauseMs);
    if (now >= this.lastSlowdownAt + Math.max(pauseMs, 1000)) {
      this.slowdown = Math.min(this.slowdown * 1.25, maxSlowdown);
      this.lastSlowdownAt = now;
      this.releasesSinceChange = 0;
    }
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.pump();
  }

  /** When the next request may start: its even spacing, a 429's pause, and the sliding window. */
  private nextAt(): number {
    // The earliest of the last `perWindow` starts (one held up may have started after a later one) must leave the
    // window before another starts.
    let oldest = -Infinity;
    if (this.starts.length >= this.perWindow) oldest = Math.min(...this.starts.map((s) => s.at)) + this.windowMs;
    return Math.max(this.lastRelease + this.intervalMs, this.pausedUntil, oldest);
  }

  /** A slot released now: counted in the window from now, or from its real start once the transport says. */
  private slot(now: number): Slot {
    const entry = { at: now };
    this.starts.push(entry);
    if (this.starts.length > this.perWindow) this.starts.shift();
    return {
      started: () => {
        entry.at = Math.max(entry.at, this.now());
      },
    };
  }

  private pump(): void {
    if (this.timer || this.waiters.length === 0) return;
    const now = this.now();
    let at = this.nextAt();
    if (at > now) return this.arm(at - now);
    // Release every waiter whose slot has come: at high rates (interval ~1 ms) one release per timer tick would
    // cap the rate at the timer's resolution (~400/s at --rate 1000). Slots stay `interval` apart, so at 5/s
    // this releases one. Count a timer that fired up to 3 ms late as on time, so timer latency does not pile up
    // into a lower rate. Gaps stay >= interval - 3 ms, so six starts span >= 5 x interval - 3 ms (~1028 ms at 5/s).
    // The window counts a slot from `now`, the moment it is handed out, even when the spacing forgave lateness.
    while (at <= now && this.waiters.length > 0) {
      this.lastRelease = Math.max(at, now - 3);
      this.waiters.shift()?.(this.slot(now));
      if (this.slowdown > 1 && ++this.releasesSinceChange >= recoverEvery) {
        this.slowdown = Math.max(1, this.slowdown * 0.95);
        this.releasesSinceChange = 0;
      }
      at = this.nextAt();
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

  /** A `first` caller goes before every waiter; once `signal` is aborted a waiter leaves with a StoppedError. */
  async acquire(first = false, signal?: AbortSignal): Promise<() => void> {
    if (this.active >= this.limit)
      await abortableWait<void>(
        signal,
        (resolve) => (first ? this.queue.unshift(resolve) : this.queue.push(resolve)),
        (resolve) => removeWaiter(this.queue, resolve),
      );
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

function removeWaiter<T>(queue: Array<(value: T) => void>, waiter: (value: T) => void): void {
  const i = queue.indexOf(waiter);
  if (i >= 0) queue.splice(i, 1);
}
