/** What each benchmark returns: rows for BENCHMARKS.md, each figure next to its goal. */
export interface Check {
  readonly figure: string;
  readonly value: string;
  readonly goal: string;
  /** null: informational, no goal. */
  readonly met: boolean | null;
}

export interface FigureResult {
  readonly name: string;
  readonly title: string;
  readonly scale: string;
  readonly checks: readonly Check[];
  /** Markdown paragraphs/tables with the details and method. */
  readonly details: readonly string[];
  readonly durationMs: number;
  /** Raw numbers later figures reuse (figure 6 compares against figures 1-3). */
  readonly numbers?: Readonly<Record<string, number>>;
  /** Set by the runner. */
  measuredAt?: string;
  command?: string;
}

export interface BenchOptions {
  /** Scale of the request-count figures (2, 3) and the demo run (5); default small. */
  readonly scale: string;
  /** Scales of the load figure (4); default medium and large. */
  readonly loadScales: readonly string[];
  readonly seed: number;
  readonly postgresUrl: string;
}

export const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

export const pct = (x: number, digits = 1): string => `${(x * 100).toFixed(digits)} %`;
