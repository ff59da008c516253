/**
 * Site text made safe to print: control characters (C0, DEL, C1), CR and LF shown as visible escapes (`\n`, `\r`,
 * `\t`, `\x1b`, `\u2028`), so a body or a field name from a site can neither move the cursor, set a window title nor
 * forge a line of its own. A backslash is left as it is: the output is for reading, not for parsing back.
 */

// eslint-disable-next-line no-control-regex
const unsafe = /[\x00-\x1f\x7f-\x9f\u2028\u2029]/g;
const named: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

export function escapeControl(text: string): string {
  return text.replace(unsafe, (c) => {
    const code = c.charCodeAt(0);
    return named[c] ?? (code > 0xff ? `\\u${code.toString(16)}` : `\\x${code.toString(16).padStart(2, '0')}`);
  });
}
