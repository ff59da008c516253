import { describe, expect, it } from 'vitest';
import { parseMoney, parseTimestamp, untypedValues } from '../../src/normalize/index.ts';
import { bool, dbl } from '../../src/normalize/coerce.ts';
import { ConfigError } from '../../src/util/errors.ts';

describe('parseTimestamp', () => {
  it.each([
    ['2024-03-01T12:00:00Z', 'UTC', '2024-03-01T12:00:00Z'],
    ['2024-03-01T12:00:00z', 'UTC', '2024-03-01T12:00:00Z'],
    ['2024-03-01T12:00:00+02:00', 'UTC', '2024-03-01T10:00:00Z'],
    ['2024-03-01T12:00:00-0530', 'UTC', '2024-03-01T17:30:00Z'],
    ['2024-03-01T00:30:00+01', 'UTC', '2024-02-29T23:30:00Z'],
    ['2024-03-01T12:00:00.123456789Z', 'UTC', '2024-03-01T12:00:00.123456Z'],
    ['2024-03-01T12:00:00.120000+00:00', 'UTC', '2024-03-01T12:00:00.12Z'],
    ['2024-03-01T12:00:00.000Z', 'UTC', '2024-03-01T12:00:00Z'],
    ['2024-03-01 12:00:00', 'UTC', '2024-03-01T12:00:00Z'],
    ['2024-03-01T12:00', 'UTC', '2024-03-01T12:00:00Z'],
    ['2024-03-01', 'UTC', '2024-03-01T00:00:00Z'],
    // naive times are read in the site's zone
    ['2024-01-15T09:00:00', 'America/New_York', '2024-01-15T14:00:00Z'],
    ['2024-07-15T09:00:00.5', 'America/New_York', '2024-07-15T13:00:00.5Z'],
    ['2024-07-15T09:00:00', 'Asia/Kolkata', '2024-07-15T03:30:00Z'],
    ['2024-07-15T09:00:00', 'Europe/Paris', '2024-07-15T07:00:00Z'],
    // an explicit offset wins over the site zone
    ['2024-07-15T09:00:00Z', 'Europe/Paris', '2024-07-15T09:00:00Z'],
    // DST gap: 02:30 does not exist -> 03:30 EDT; overlap: the earlier instant
    ['2024-03-10T02:30:00', 'America/New_York', '2024-03-10T07:30:00Z'],
    ['2024-11-03T01:30:00', 'America/New_York', '2024-11-03T05:30:00Z'],
    ['2024-10-06T02:30:00', 'Australia/Sydney', '2024-10-05T16:30:00Z'],
  ])('%s in %s -> %s', (input, zone, expected) => {
    expect(parseTimestamp(input, zone)).toBe(expected);
  });

  it('rejects a time that only an offset moves into year 0', () => {
    expect(parseTimestamp('0001-01-01T00:30:00+01:00', 'UTC')).toBeNull();
    expect(parseTimestamp('0001-01-01T01:30:00+01:00', 'UTC')).toBe('0001-01-01T00:30:00Z');
  });

  it.each([
    '',
    'yesterday',
    '2024-13-01T00:00:00Z',
    '2023-02-29',
    '2024-03-01T25:00:00',
    '2024-03-01T12:00:00+25:00',
    '1709294400',
    // no year 0 in Postgres (DuckDB would store one): the two warehouses must not differ
    '0000-06-01T00:00:00Z',
  ])('rejects %j', (input) => expect(parseTimestamp(input, 'UTC')).toBeNull());

  it('matches Date for naive times across a year in a DST zone', () => {
    for (let day = 0; day < 366; day += 3) {
      const d = new Date(Date.UTC(2024, 0, 1 + day, 12, 15, 0));
      const local = d.toISOString().slice(0, 19);
      const out = parseTimestamp(local, 'Europe/Berlin');
      const offset = new Intl.DateTimeFormat('en-US', { timeZone: 'Europe/Berlin', timeZoneName: 'shortOffset' })
        .formatToParts(new Date(out!))
        .find((p) => p.type === 'timeZoneName')?.value;
      const hours = offset === 'GMT+2' ? 2 : 1;
      expect(new Date(out!).getTime()).toBe(d.getTime() - hours * 3_600_000);
    }
  });

  // Date reads a local time as Temporal's 'compatible' does: a gap moves forward, an overlap takes the earlier
  // instant. Node re-reads TZ when it is assigned, so Date can be asked in each zone.
  it.each([
    'Europe/Berlin',
    'Europe/London',
    'Australia/Sydney',
    'Australia/Lord_Howe',
    'America/New_York',
    'America/Santiago',
  ])('matches Date every 15 minutes around the 2024 transitions of %s', (zone) => {
    const saved = process.env.TZ;
    process.env.TZ = zone;
    try {
      let checked = 0;
      for (let day = 1; day <= 366; day++) {
        const noon = (d: number): number => new Date(2024, 0, d, 12).getTimezoneOffset();
        if (noon(day) === noon(day + 1)) continue;
        for (let q = 0; q < 96; q++) {
          const wall = new Date(Date.UTC(2024, 0, day, 12, q * 15));
          const [y, mo, d, h, mi] = [
            wall.getUTCFullYear(),
            wall.getUTCMonth(),
            wall.getUTCDate(),
            wall.getUTCHours(),
            wall.getUTCMinutes(),
          ];
          const text = `${wall.toISOString().slice(0, 16)}:00`;
          const expected = new Date(y, mo, d, h, mi).toISOString().replace('.000', '');
          expect(parseTimestamp(text, zone), text).toBe(expected);
          checked++;
        }
      }
      expect(checked).toBeGreaterThanOrEqual(2 * 96);
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });

  // Before standard time a zone's offset is its local mean time, in seconds (New York -4:56:02, Paris +0:09:21
  // until 1911): rounded to minutes, a naive time was read seconds off the instant Postgres reads for it.
  it.each([
    ['1850-06-01T12:00:00', 'America/New_York', '1850-06-01T16:56:02Z'],
    ['1499-12-07', 'America/New_York', '1499-12-07T04:56:02Z'],
    ['1900-06-01T12:00:00', 'Europe/Paris', '1900-06-01T11:50:39Z'],
    ['1850-06-01T12:00:00.25', 'Asia/Kolkata', '1850-06-01T06:06:32.25Z'],
  ])('a naive %s in %s keeps the seconds of local mean time: %s', (input, zone, expected) => {
    expect(parseTimestamp(input, zone)).toBe(expected);
  });

  it('an unknown zone is a configuration error, not a bad record', () => {
    expect(() => parseTimestamp('2024-03-01T12:00:00', 'Mars/Olympus')).toThrow(ConfigError);
  });
});

describe('parseMoney', () => {
  it.each([
    [1250, '1250.00'],
    [0, '0.00'],
    [-0, '0.00'],
    [-5, '-5.00'],
    [0.1, '0.10'],
    [1234.5, '1234.50'],
    [0.125, '0.13'],
    [1.005, '1.01'], // decimal text "1.005", not the binary 1.00499999...
    [-2.675, '-2.68'],
    [1e-7, '0.00'],
    [9_999_999_999_999.99, '9999999999999.99'],
    // From 10^13 a JSON number with cents has 16 significant digits, more than a double carries: the text
    // 80000000000000.01 parses to the double printed 80000000000000.02, so such numbers are not trusted.
    [JSON.parse('80000000000000.01') as number, null],
    [JSON.parse('90071992547409.91') as number, null],
    [10_000_000_000_000, null],
    [90_071_992_547_410, null],
    [1.5e15, null],
    [1e21, null],
    [1e16, null], // 17 integer digits do not fit DECIMAL(18,2)
    ['1250', '1250.00'],
    ['1250.5', '1250.50'],
    ['$1,250.00', '1250.00'],
    ['-$1,250.00', '-1250.00'],
    ['$-3.10', '-3.10'],
    ['USD 1,000,000', '1000000.00'],
    ['1250 EUR', '1250.00'],
    ['€ 12.345678', '12.35'],
    ['  42  ', '42.00'],
    ['0.125', '0.13'],
    ['1 250,00', null],
    ['1.250,00', null],
    ['1.250', null],
    ['1,25', null],
    ['12,50', null],
    ['0,500', null], // a European decimal comma, not 500
    ['0,123', null],
    ['1.5 bln', null], // a unit word is not a currency code
    ['USD 1.5 mln', null],
    ['5 mil', null],
    ['Fee 12', null],
    ['abc5', null],
    ['usd 7', '7.00'],
    ['12 CHF', '12.00'],
    ['1,000,000.5', '1000000.50'],
    ['abc', null],
    ['', null],
    ['--5', null],
    // numeric text only a number writes: exponent, a bare leading or trailing dot (Python's Decimal prints 1E+3)
    ['1e3', '1000.00'],
    ['1E+3', '1000.00'],
    ['-1.5e2', '-150.00'],
    ['12.345e1', '123.45'],
    ['5e-3', '0.01'],
    ['.5', '0.50'],
    ['-.5', '-0.50'],
    ['12.', '12.00'],
    ['+7.', '7.00'],
    ['1e17', null], // past DECIMAL(18,2)
    // an exponent far past any amount is no amount (or rounds to zero), not a string of a billion digits
    ['1e999999999', null],
    ['-1.5E+999999999', null],
    ['0e999999999', '0.00'],
    ['1e-999999999', '0.00'],
    ['-123e-999999999', '0.00'],
    ['0.000001e21', '1000000000000000.00'],
    ['12345e-7', '0.00'],
    ['45e-3', '0.05'],
    ['1e', null],
    ['e3', null],
    ['.', null],
    [null, null],
    [true, null],
    [undefined, null],
  ])('%j -> %j', (input, expected) => {
    expect(parseMoney(input)).toBe(expected);
  });
});

describe('bool', () => {
  it.each([
    [true, true],
    [false, false],
    [1, true],
    [0, false],
    ['true', true],
    ['TRUE', true],
    [' True ', true],
    ['t', true],
    ['yes', true],
    ['Y', true],
    ['on', true],
    ['1', true],
    ['false', false],
    ['FALSE', false],
    ['F', false],
    ['No', false],
    ['n', false],
    ['off', false],
    ['0', false],
  ])('%j -> %j', (input, expected) => {
    const before = untypedValues.count;
    expect(bool(input)).toBe(expected);
    expect(untypedValues.count).toBe(before);
  });

  it.each([['maybe'], ['2'], [2], ['tru'], [[]]])('%j is NULL and counted as untyped', (input) => {
    const before = untypedValues.count;
    expect(bool(input)).toBeNull();
    expect(untypedValues.count).toBe(before + 1);
  });

  it.each([[null], [undefined], ['']])('%j is a plain NULL', (input) => {
    const before = untypedValues.count;
    expect(bool(input)).toBeNull();
    expect(untypedValues.count).toBe(before);
  });
});

describe('dbl', () => {
  it.each([
    [93.6, 93.6],
    ['93.6', 93.6],
    [' -1.5e2 ', -150],
    ['.5', 0.5],
    ['7.', 7],
    ['+3', 3],
  ])('%j -> %j', (input, expected) => {
    expect(dbl(input)).toBe(expected);
  });

  // Number() reads these as 16, 5 and 15: a score or an elapsed time sent so is no decimal number.
  it.each([['0x10'], ['0b101'], ['0o17'], ['1_000'], ['Infinity'], ['NaN'], ['12 ms']])(
    '%j is NULL and counted as untyped',
    (input) => {
      const before = untypedValues.count;
      expect(dbl(input)).toBeNull();
      expect(untypedValues.count).toBe(before + 1);
    },
  );
});
