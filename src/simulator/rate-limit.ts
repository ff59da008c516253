/** Sliding 1-second window per client: at most `rate` accepted requests in any 1000 ms. */
export class SlidingWindowLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(public rate: number) {}

  /** True when the request may proceed (and it is counted); false means 429. */
  allow(key: string, now = Date.now()): boolean {
    if (!(this.rate > 0) || !Number.isFinite(this.rate)) return true;
    const list = this.hits.get(key) ?? [];
    while (list.length > 0 && (list[0] as number) <= now - 1000) list.shift();
    if (list.length >= this.rate) {
      this.hits.set(key, list);
      return false;
    }
    list.push(now);
    this.hits.set(key, list);
    return true;
  }

  reset(): void {
    this.hits.clear();
  }
}
