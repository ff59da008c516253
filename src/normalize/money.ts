import type { JsonValue } from '../util/json.ts';

/**
 * Money as exact decimal text for DECIMAL(18,2): never through binary floating point. Numbers use their
 * shortest round-trip representation; strings may carry a currency sign or code and US thousands separators
 * ("$1,250.00", "USD 1250"). Anything ambiguous ("1 250,00", "1.250", "1,25") or too large gives null (the
 * record's `_raw` keeps the original). Rounds half away from zero to 2 decimals.
 */
export function parseMoney(v: JsonValue | undefined): string | null {
  if (typeof v === 'number') return numberToMoney(v);
  if (typeof v === 'string') return stringToMoney(v);
  return null;
}

const MAX_INT_DIGITS = 16; // DECIMAL(18,2)

export function numberToMoney(n: number): string | null {
  if (!Number.isFinite(n)) return null;
  if (Number.isInteger(n) && Math.abs(n) < 1e16) return `${n === 0 ? 0 : n}.00`; // fast path, also turns -0 into 0
  return decimalTextToMoney(String(n));
}

const STRING_RE = /^([+-])?\s*(?:[A-Za-z]{3}\s*)?(?:[$€£¥]\s*)?([+-])?\s*(\d[\d,.]*)\s*(?:[$€£¥]|[A-Za-z]{3})?$/;

function stringToMoney(s: string): string | null {
  const m = STRING_RE.exec(s.trim());
  if (m === null) return null;
  if (m[1] !== undefined && m[2] !== undefined) return null;
  const negative = (m[1] ?? m[2]) === '-';
  let body = m[3]!;
  if (/^\d+(\.\d+)?$/.test(body)) {
    // "1.250" could be European thousands: ambiguous unless the integer part starts with 0 or is long.
    if (/^[1-9]\d{0,2}\.\d{3}$/.test(body)) return null;
  } else if (/^\d{1,3}(,\d{3})+(\.\d+)?$/.test(body)) {
    body = body.replaceAll(',', '');
  } else return null;
  return decimalTextToMoney(negative ? `-${body}` : body);
}

/** Plain or exponent decimal text ("-12.345", "1.5e-7", "1e+21") to money text, or null if too large. */
export function decimalTextToMoney(text: string): string | null {
  const m = /^([+-])?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (m === null) return null;
  let intPart = m[2] ?? '';
  let frac = m[3] ?? '';
  if (intPart === '' && frac === '') return null;
  const exp = m[4] === undefined ? 0 : +m[4];
  if (exp > 0) {
    const shift = frac.padEnd(exp, '0');
    intPart += shift.slice(0, exp);
    frac = shift.slice(exp);
  } else if (exp < 0) {
    const all = intPart.padStart(-exp + 1, '0');
    frac = all.slice(all.length + exp) + frac;
    intPart = all.slice(0, all.length + exp);
  }
  intPart = intPart.replace(/^0+/, '');
  let cents = frac.padEnd(3, '0');
  // Round half away from zero on the third decimal, in text.
  let digits = (intPart === '' ? '0' : intPart) + cents.slice(0, 2);
  if (cents.charCodeAt(2) >= 53 /* '5' */) digits = incrementDigits(digits);
  digits = digits.replace(/^0+(?=\d\d\d)/, '').padStart(3, '0');
  const whole = digits.slice(0, -2);
  cents = digits.slice(-2);
  if (whole.length > MAX_INT_DIGITS) return null;
  const negative = m[1] === '-' && /[1-9]/.test(digits);
  return `${negative ? '-' : ''}${whole}.${cents}`;
}

function incrementDigits(d: string): string {
  const chars = d.split('');
  for (let i = chars.length - 1; i >= 0; i--) {
    if (chars[i] === '9') chars[i] = '0';
    else {
      chars[i] = String(+chars[i]! + 1);
      return chars.join('');
    }
  }
  return `1${chars.join('')}`;
}
