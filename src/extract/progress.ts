import type { Logger } from '../util/logger.ts';

interface Line {
  stream: string;
  pages: number;
  records: number;
  parentsDone: number;
  parentsTotal: number;
  startedAt: number;
  done: boolean;
  note?: string;
}

/**
 * Live progress: on a TTY one line per stream (pages, records, rate, ETA for fan-outs), redrawn in place;
 * otherwise a structured log line per stream every few seconds.
 */
export class Progress {
  private readonly lines = new Map<string, Line>();
  private timer: NodeJS.Timeout | null = null;
  private drawn = 0;
  private lastLog = 0;

  constructor(
    private readonly logger: Logger,
    private readonly tty: boolean = Boolean(process.stderr.isTTY),
  ) {}

  start(): void {
    this.timer = setInterval(() => this.render(), this.tty ? 250 : 5_000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.render(true);
  }

  private line(stream: string): Line {
    let l = this.lines.get(stream);
    if (!l) {
      l = { stream, pages: 0, records: 0, parentsDone: 0, parentsTotal: 0, startedAt: Date.now(), done: false };
      this.lines.set(stream, l);
    }
    return l;
  }

  page(stream: string, records: number): void {
    const l = this.line(stream);
    l.pages++;
    l.records += records;
  }

  parents(stream: string, done: number, total: number): void {
    const l = this.line(stream);
    l.parentsDone = done;
    l.parentsTotal = total;
  }

  finish(stream: string, note: string): void {
    const l = this.line(stream);
    l.done = true;
    l.note = note;
  }

  private describe(l: Line): string {
    const secs = Math.max((Date.now() - l.startedAt) / 1000, 0.001);
    const rate = (l.pages / secs).toFixed(1);
    let text = `${l.stream.padEnd(24)} ${String(l.pages).padStart(6)} pages ${String(l.records).padStart(8)} records ${rate.padStart(5)} pages/s`;
    if (l.parentsTotal > 0) {
      const left = l.parentsTotal - l.parentsDone;
      const perSec = l.parentsDone / secs;
      const eta = perSec > 0 && !l.done ? ` ETA ${Math.ceil(left / perSec)}s` : '';
      text += `  parents ${l.parentsDone}/${l.parentsTotal}${eta}`;
    }
    if (l.done) text += `  ${l.note ?? 'done'}`;
    return text;
  }

  private render(final = false): void {
    if (this.tty) {
      if (this.drawn > 0) process.stderr.write(`\x1b[${this.drawn}A`);
      const out = [...this.lines.values()].map((l) => `\x1b[2K${this.describe(l)}`);
      if (out.length) process.stderr.write(out.join('\n') + '\n');
      this.drawn = out.length;
      return;
    }
    if (!final && Date.now() - this.lastLog < 4_000) return;
    this.lastLog = Date.now();
    // One line for all streams still running, so a cron log gets a heartbeat, not a flood.
    const running = [...this.lines.values()].filter((l) => final || !l.done);
    if (running.length === 0) return;
    const streams = Object.fromEntries(
      running.map((l) => [
        l.stream,
        l.parentsTotal ? `${l.records} records, parents ${l.parentsDone}/${l.parentsTotal}` : `${l.records} records`,
      ]),
    );
    this.logger.info({ streams }, final ? 'extraction finished' : 'progress');
  }
}
