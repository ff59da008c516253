/**
 * The bottom of a terminal that a live view redraws in place, shared with log lines: a log line first erases the view,
 * is written above it, and the view is drawn again below, so neither overwrites the other. Every line is cut to the
 * terminal's width (a wrapped line would throw the cursor-up count off) and the view to its height.
 */
export interface TerminalOut {
  write(text: string): unknown;
  readonly columns?: number;
  readonly rows?: number;
}

/** The widest a line may be: one column short of the width, so no terminal wraps it (pending-wrap differs). */
export function usableColumns(out: Pick<TerminalOut, 'columns'>): number {
  return Math.max((out.columns ?? 80) - 1, 20);
}

/** Characters, not UTF-16 units, so a name with an emoji is cut where it shows. */
export function cutToWidth(text: string, width: number): string {
  const chars = [...text];
  if (chars.length <= width) return text;
  return chars.slice(0, Math.max(width - 1, 0)).join('') + '…';
}

export class TerminalScreen {
  private block: readonly string[] = [];
  private drawn = 0;

  constructor(private readonly out: TerminalOut) {}

  get columns(): number {
    return usableColumns(this.out);
  }

  /** Rows the view may take: the screen less one row for the cursor, so drawing never scrolls the view's top away. */
  get rows(): number {
    return Math.max((this.out.rows ?? 24) - 1, 1);
  }

  /** Replaces the live view (already fitted by the caller; cut again here in case the terminal shrank). */
  show(lines: readonly string[]): void {
    this.block = lines;
    this.out.write(this.erase() + this.draw());
  }

  /** Writes text (ending in a newline) above the live view. */
  log(text: string): void {
    this.out.write(this.erase() + text + this.draw());
  }

  /** Leaves the last view on the screen and forgets it: what follows is written below it. */
  release(): void {
    this.block = [];
    this.drawn = 0;
  }

  private erase(): string {
    if (this.drawn === 0) return '';
    const n = this.drawn;
    this.drawn = 0;
    // To the start of the view's first line, then clear to the end of the screen.
    return `\x1b[${n}F\x1b[J`;
  }

  private draw(): string {
    const lines = this.block.slice(0, this.rows).map((l) => cutToWidth(l, this.columns));
    this.drawn = lines.length;
    return lines.length > 0 ? lines.join('\n') + '\n' : '';
  }
}

/** The screen of stderr, shared by the live progress view and the human-readable log. */
export const stderrScreen = new TerminalScreen(process.stderr);
