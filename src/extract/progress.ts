import type { Logger } from '../util/logger.ts';
import { stderrScreen, type TerminalScreen } from '../util/terminal-screen.ts';
import { describeOverall, progressView, type ProgressSnapshot, type StreamProgress } from './progress-view.ts';

export type StreamEnd = 'done' | 'skipped' | 'failed' | 'interrupted';

/** A fan-out stream as the estimate sees it before it reports its parents. */
export interface FanOutExpectation {
  readonly parent: string;
  /** This run reads every parent again (a full refresh, a first sync, a reset), not only new or changed ones. */
  readonly everyParent: boolean;
  /** Pages per parent read in earlier runs (1 when unknown). */
  readonly perParent: number;
}

export interface ProgressOptions {
  /** Requests the client has sent so far (retries and token refreshes included); default: pages counted here. */
  readonly requests?: () => number;
  /** Every stream the run will run, fan-out included: the "of N streams" of the view, fixed from the start. */
  readonly streams?: readonly string[];
  /** Pages each stream is expected to take before it reports a size, when earlier runs tell. */
  readonly expected?: ReadonlyMap<string, number>;
  readonly fanOut?: ReadonlyMap<string, FanOutExpectation>;
  /** Lists read only down to the records already held: the list's total says nothing of the pages they take. */
  readonly stopEarly?: ReadonlySet<string>;
  /** Called about once a second with the current state (status reads it; see pipeline/live-progress-file.ts). */
  readonly publish?: (snapshot: ProgressSnapshot) => void;
  readonly screen?: TerminalScreen;
  readonly now?: () => number;
}

/** How far back the rate is measured: long enough to smooth 429 pauses, short enough to follow a rate change. */
const rateWindowMs = 30_000;

/**
 * Live progress. On a TTY: an overall line (requests done of the estimate, rate, ETA) and the active streams below
 * it, fitted to the terminal and redrawn in place under the log lines (util/terminal-screen.ts); otherwise a
 * structured log line every few seconds.
 */
export class Progress {
  private readonly lines = new Map<string, StreamProgress>();
  private timer: NodeJS.Timeout | null = null;
  private lastLog = 0;
  private lastPublish = 0;
  private readonly startedAt: number;
  private readonly requestsAtStart: number;
  private readonly samples: { at: number; requests: number }[] = [];
  private stopped = false;
  /** Fan-out streams that said how many parents they read: their size is known. */
  private readonly parentsReported = new Set<string>();
  private announced = false;

  constructor(
    private readonly logger: Logger,
    private readonly tty: boolean = Boolean(process.stderr.isTTY),
    private readonly options: ProgressOptions = {},
  ) {
    this.startedAt = this.now();
    this.requestsAtStart = options.requests?.() ?? 0;
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  start(): void {
    // At once: a run whose every stream's size earlier runs tell announces its estimate before its first request.
    this.render();
    this.timer = setInterval(() => this.render(), this.tty ? 250 : 1_000);
    this.timer.unref();
  }

  /** Ends the view; `interrupted`: the run was stopped, so streams still running are shown as interrupted. */
  stop(interrupted = false): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (interrupted) for (const l of this.lines.values()) if (!l.end) l.end = 'interrupted';
    this.stopped = true;
    this.render(true);
  }

  private line(stream: string): StreamProgress {
    let l = this.lines.get(stream);
    if (!l) {
      l = {
        stream,
        pages: 0,
        records: 0,
        pageSize: 0,
        total: null,
        parentsDone: 0,
        parentsTotal: 0,
        startedAt: this.now(),
      };
      this.lines.set(stream, l);
    }
    return l;
  }

  /** A page read: its records, and the list's total when the site sends one (`count`). */
  page(stream: string, records: number, total: number | null = null): void {
    const l = this.line(stream);
    l.pages++;
    l.records += records;
    l.pageSize = Math.max(l.pageSize, records);
    if (total !== null) l.total = total;
  }

  parents(stream: string, done: number, total: number): void {
    const l = this.line(stream);
    this.parentsReported.add(stream);
    l.parentsDone = done;
    l.parentsTotal = total;
  }

  finish(stream: string, note: string, end: StreamEnd = 'done'): void {
    const l = this.line(stream);
    l.end = end;
    l.note = note;
  }

  /** The state now: overall counts and every stream seen. */
  snapshot(): ProgressSnapshot {
    const now = this.now();
    const pages = [...this.lines.values()].reduce((a, l) => a + l.pages, 0);
    const requests = this.options.requests ? this.options.requests() - this.requestsAtStart : pages;
    this.samples.push({ at: now, requests });
    while (this.samples.length > 2 && now - this.samples[0]!.at > rateWindowMs) this.samples.shift();
    const first = this.samples[0]!;
    const span = (now - first.at) / 1000;
    // The window's rate once it spans a few seconds; before that, the average since the start.
    const rate = span >= 3 ? (requests - first.requests) / span : requests / Math.max((now - this.startedAt) / 1000, 1);
    // Requests that are not list pages (retries, refreshes, confirming walks) are expected to go on as so far.
    const estimate = this.expectedPages() + Math.max(requests - pages, 0);
    return {
      startedAt: new Date(this.startedAt).toISOString(),
      at: new Date(now).toISOString(),
      requests,
      estimate: Math.max(estimate, requests),
      rate,
      finished: this.stopped,
      streamCount: Math.max(this.allStreams().size, this.lines.size),
      streams: [...this.lines.values()].map((l) => ({ ...l })),
    };
  }

  private allStreams(): Set<string> {
    const o = this.options;
    return new Set([...(o.streams ?? []), ...(o.expected?.keys() ?? []), ...(o.fanOut?.keys() ?? [])]);
  }

  /** Pages the whole run is expected to take: each stream's known size, else earlier runs', else what it read so far. */
  private expectedPages(): number {
    const expected = this.options.expected ?? new Map<string, number>();
    let sum = 0;
    for (const l of this.lines.values()) {
      const fan = this.options.fanOut?.get(l.stream);
      if (l.end) sum += l.pages;
      else if (this.parentsReported.has(l.stream)) {
        const perParent = l.parentsDone > 0 ? l.pages / l.parentsDone : (fan?.perParent ?? 1);
        sum += Math.max(l.pages, Math.ceil(perParent * l.parentsTotal));
      } else if (l.total !== null && l.pageSize > 0 && !this.options.stopEarly?.has(l.stream))
        sum += Math.max(l.pages, Math.ceil(l.total / l.pageSize));
      else sum += Math.max(l.pages, expected.get(l.stream) ?? 0);
    }
    for (const name of this.allStreams()) if (!this.lines.has(name)) sum += this.notStarted(name) ?? 1;
    return sum;
  }

  /**
   * Pages a stream not started yet is expected to take, or null when nothing tells yet: a fan-out stream reading every
   * parent takes its pages per parent times the parents its parent stream is reading (or held at the last run).
   */
  private notStarted(name: string): number | null {
    const fan = this.options.fanOut?.get(name);
    const parentLine = fan ? this.lines.get(fan.parent) : undefined;
    if (fan?.everyParent && parentLine && (parentLine.total !== null || parentLine.end))
      return Math.ceil((parentLine.total ?? parentLine.records) * fan.perParent);
    return this.options.expected?.get(name) ?? null;
  }

  /** Every stream's size is known (reported, or told by earlier runs): the estimate is worth announcing. */
  private informed(): boolean {
    for (const name of this.allStreams()) {
      const l = this.lines.get(name);
      if (!l) {
        if (this.notStarted(name) === null) return false;
      } else if (!l.end && !this.parentsReported.has(name) && l.total === null && !this.options.expected?.has(name))
        return false;
    }
    return true;
  }

  private render(final = false): void {
    const now = this.now();
    const snap = this.snapshot();
    if (!this.announced && !final && this.informed()) {
      // Once, as soon as every stream's size is known: what a log (cron, CI) keeps of the estimate.
      this.announced = true;
      this.logger.info({ requests: snap.estimate }, `about ${snap.estimate.toLocaleString('en-US')} requests expected`);
    }
    if (this.options.publish && (final || now - this.lastPublish >= 1_000)) {
      this.lastPublish = now;
      this.options.publish(snap);
    }
    if (this.tty) {
      const screen = this.options.screen ?? stderrScreen;
      screen.show(progressView(snap, screen.columns, screen.rows));
      if (final) screen.release();
      return;
    }
    if (!final && now - this.lastLog < 4_000) return;
    this.lastLog = now;
    // One line for all streams still running, so a cron log gets a heartbeat, not a flood.
    const running = snap.streams.filter((l) => final || !l.end);
    if (running.length === 0) return;
    const streams = Object.fromEntries(
      running.map((l) => [
        l.stream,
        l.parentsTotal ? `${l.records} records, parents ${l.parentsDone}/${l.parentsTotal}` : `${l.records} records`,
      ]),
    );
    this.logger.info(
      { overall: describeOverall(snap), streams },
      final
        ? snap.streams.some((l) => l.end === 'interrupted')
          ? 'extraction interrupted'
          : 'extraction finished'
        : 'progress',
    );
  }
}
