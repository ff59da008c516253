import type { JsonValue } from '../util/json.ts';

/**
 * Money as exact decimal text for DECIMAL(18,2): never through binary floating point. Numbers use their
 * shortest round-trip representation (below 10^13); strings may carry a currency sign or ISO 4217 code and
 * US thousands separators ("$1,250.00", "USD 1250"). Anything ambiguous ("1 250,00", "1.250", "1,25", "0,500"),
 * with a word that is not a currency ("1.5 mln") or too large gives null (the record's `_raw` keeps the original). Rounds half away from zero to 2 decimals.
 */
export function parseMoney(v: JsonValue | undefined): string | null {
  if (typeof v === 'number') return numberToMoney(v);
  if (typeof v === 'string') return stringToMoney(v);
  return null;
}

const MAX_INT_DIGITS = 16; // DECIMAL(18,2)

/**
 * A double carries 15 significant digits: below 10^13 every amount with cents (at most 15 digits) reads back as
 * sent. From 10^13 up a JSON number may not carry its cents (80000000000000.01 parses as the double printed
 * ...000.02, 90071992547409.91 as ...409.9), so such amounts are not trusted. Strings carry any amount exactly.
 */
const MAX_EXACT_NUMBER = 1e13;

export function numberToMoney(n: number): string | null {
  if (!Number.isFinite(n) || Math.abs(n) >= MAX_EXACT_NUMBER) return null;
  if (Number.isInteger(n)) return `${n === 0 ? 0 : n}.00`; // fast path, also turns -0 into 0
  return decimalTextToMoney(String(n));
}

const STRING_RE = /^([+-])?\s*(?:([A-Za-z]{3})\s*)?(?:[$€£¥]\s*)?([+-])?\s*(\d[\d,.]*)\s*(?:[$€£¥]|([A-Za-z]{3}))?$/;

/**
 * ISO 4217 codes (from the runtime's ICU data): only these count as a currency, so a unit word such as "mln" or
 * "bln" makes the amount unreadable instead of a billion times smaller.
 */
const currencyCodes: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

const isCurrency = (code: string | undefined): boolean => code === undefined || currencyCodes.has(code.toUpperCase());

/**
 * Numeric text that only a number reads this way: with an exponent ("1e3", "1.5E+2") or a bare dot at either end
 * (".5", "12."). Python's Decimal and many serializers print such text; no locale writes an amount like it.
 */
const NUMERIC_TEXT_RE = /^[+-]?(?:\d+\.?\d*[eE][+-]?\d+|\.\d+(?:[eE][+-]?\d+)?|\d+\.)$/;

function stringToMoney(s: string): string | null {
  const t = s.trim();
  if (NUMERIC_TEXT_RE.test(t)) return decimalTextToMoney(t);
  const m = STRING_RE.exec(t);
  if (m === null) return null;
  if (m[1] !== undefined && m[3] !== undefined) return null;
  if (!isCurrency(m[2]) || !isCurrency(m[5])) return null;
  const negative = (m[1] ?? m[3]) === '-';
  let body = m[4]!;
  if (/^\d+(\.\d+)?$/.test(body)) {
    // "1.250" could be European thousands: ambiguous unless the integer part starts with 0 or is long.
    if (/^[1-9]\d{0,2}\.\d{3}$/.test(body)) return null;
  } else if (/^[1-9]\d{0,2}(,\d{3})+(\.\d+)?$/.test(body)) {
    // US thousands; a leading "0," ("0,500") is a European decimal comma, not a thousands group.
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
  let exp = m[4] === undefined ? 0 : +m[4];
  // Site text may carry any exponent ("1e999999999"): shifting by it would build a string of that many digits. Zero
  // stays zero; a nonzero value at least 10^(exp - fraction digits) is past DECIMAL(18,2); one below 10^-3 is 0.00.
  if (!/[1-9]/.test(intPart + frac)) exp = 0;
  else if (exp > frac.length + MAX_INT_DIGITS) return null;
  else if (-exp > intPart.length + 3) return '0.00';
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
