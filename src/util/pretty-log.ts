import { escapeControl } from './escape-control.ts';
import { usableColumns, type TerminalOut, type TerminalScreen } from './terminal-screen.ts';

/**
 * Log lines for a person at a terminal: `12:04:31 WARN  message  key=value ...`, folded to the terminal's width with
 * an indent. pino-pretty prints each extra field on a line of its own and knows nothing of the width or of a live view
 * being redrawn below, so this small formatter stands in for it; a pipe still gets pino's JSON.
 */

const levelNames: Readonly<Record<string, string>> = {
  trace: 'TRACE',
  debug: 'DEBUG',
  info: 'INFO ',
  warn: 'WARN ',
  error: 'ERROR',
  fatal: 'FATAL',
};

/** pino's own fields, shown in the head of the line or not at all. */
const ownFields = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'name', 'v']);

function fieldText(value: unknown): string {
  if (typeof value === 'string') return /[\s"=]/.test(value) || value === '' ? JSON.stringify(value) : value;
  if (value !== null && typeof value === 'object' && 'message' in value && typeof value.message === 'string')
    return JSON.stringify(value.message);
  return JSON.stringify(value) ?? String(value);
}

/** One JSON log line as text for a person; a line that is not JSON is returned as it is. */
export function formatLogLine(line: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return escapeControl(line.replace(/\n$/, ''));
  }
  const time = typeof entry.time === 'number' ? new Date(entry.time).toTimeString().slice(0, 8) : '';
  const level = levelNames[String(entry.level)] ?? String(entry.level).toUpperCase();
  const fields = Object.entries(entry)
    .filter(([k]) => !ownFields.has(k))
    .map(([k, v]) => `${k}=${fieldText(v)}`);
  // A message or field may quote a site (an error body, a field name): shown escaped, never sent to the terminal raw.
  return escapeControl([time, level, String(entry.msg ?? ''), ...fields].filter((p) => p !== '').join(' '));
}

/** Folds text into lines of at most `width` characters at spaces (a longer word is cut), later lines indented. */
export function foldToWidth(text: string, width: number, indent = '    '): string[] {
  const out: string[] = [];
  // A line's own indent is kept (and added to the later lines'), not read as empty words.
  const lead = /^ */.exec(text)?.[0] ?? '';
  indent = lead + indent;
  let line = lead;
  const room = (): number => width - (out.length === 0 ? 0 : indent.length);
  for (const word of text.slice(lead.length).split(' ')) {
    let rest = [...word];
    const sep = line === '' || line === lead ? '' : ' ';
    if ([...line].length + sep.length + rest.length <= room()) {
      line += sep + word;
      continue;
    }
    if (line !== '' && line !== lead) {
      out.push(line);
      line = '';
    }
    while (rest.length > room()) {
      out.push(rest.slice(0, room()).join(''));
      rest = rest.slice(room());
    }
    line = rest.join('');
  }
  if (line !== '' || out.length === 0) out.push(line);
  return out.map((l, i) => (i === 0 ? l : indent + l).trimEnd());
}

/**
 * A pino destination writing human-readable lines to a terminal screen, above its live view. pino calls `write` with
 * each line already redacted (the logger's streamWrite hook).
 */
export function prettyDestination(screen: TerminalScreen): { write(line: string): void } {
  return {
    write(line: string): void {
      const text = formatLogLine(line).replace(/\s*\n\s*/g, ' ');
      screen.log(foldToWidth(text, screen.columns).join('\n') + '\n');
    },
  };
}

/** Text for stdout: folded to the width when it is a terminal (a wrapped line is hard to read), as it is otherwise. */
export function fitForTerminal(text: string, out: TerminalOut = process.stdout): string {
  if (!('isTTY' in out) || !out.isTTY) return text;
  const width = usableColumns(out);
  return text
    .split('\n')
    .flatMap((line) => foldToWidth(line, width))
    .join('\n');
}
