/** The names of a comma-separated list (`a, b,,c`), trimmed, blanks dropped: flags, variables, model headers. */
export function commaList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
