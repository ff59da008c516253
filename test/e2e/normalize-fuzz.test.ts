/**
 * Seeded property test of "nothing is dropped silently; nothing crashes the run; money correct to the last cent":
 * real records of every stream, as the simulator serves them, are mutated the ways a real site could differ (a
 * field of another JSON type, missing or extra fields, references as bare ids or `[]`, money and timestamps in
 * other spellings, odd ids and strings), normalised by the real RowBatcher and loaded into a DuckDB file and a
 * Postgres schema. GRANTFLOW_FUZZ_SEED replays another seed; a failure names the seed it ran with.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { join } from 'node:path';
import { generateDataset } from '../../src/simulator/index.ts';
import { recordStreamNames, servedRecords, type ServedRecord } from '../../src/simulator/stream-serving.ts';

// The simulator's seeded PRNG (mulberry32): the same seed gives the same cases everywhere.
import { Rng as Prng } from '../../src/simulator/random.ts';

import { RowBatcher, type RowBatch } from '../../src/extract/row-batcher.ts';

import { parseListPage } from '../../src/source/index.ts';

import { canonicalJson, recordKey } from '../../src/normalize/index.ts';
import type { CellValue } from '../../src/normalize/table-def.ts';

import { openWarehouse } from '../../src/warehouse/index.ts';

import type { Warehouse } from '../../src/warehouse/types.ts';

import { silentLogger } from '../../src/util/logger.ts';

import type { JsonObject, JsonValue } from '../../src/util/json.ts';

import { clusterName, dropPostgresSchema, dumpWarehouse, postgresUrl, summarize, tempDir } from '../support/harness.ts';
import {
  builtinStreamNames,
  defaultCatalog,
  mappingOf,
  tableByName,
  type StreamName,
  tables,
} from '../../src/streams/registry.ts';

const SEED = Number(process.env.GRANTFLOW_FUZZ_SEED ?? 20261126) >>> 0;
/** Base records taken per stream, and mutants made of each. */
const BASES = 4;
const MUTANTS = 8;
/** The site's zone, in which naive times are read (GRANTFLOW_FUZZ_ZONE tries another). */
const ZONE = process.env.GRANTFLOW_FUZZ_ZONE ?? 'America/New_York';

// ---------------------------------------------------------------------------------------------------------------
// The records as served

/**
 * The first BASES records of every stream the simulator serves as records (one per parent for a fan-out stream, so
 * the bases come from different parents), as it serves them: the registry's streams, through the simulator's own map.
 */
function basesOf(): Map<StreamName, ServedRecord[]> {
  const ds = generateDataset({ scale: 'tiny', seed: 17 });
  const out = new Map<StreamName, ServedRecord[]>();
  for (const stream of recordStreamNames) {
    const served = servedRecords(ds, stream);
    const seen = new Set<number>();
    const firstPerParent = served.filter(({ parentId }) => {
      if (parentId === undefined) return true;
      if (seen.has(parentId)) return false;
      seen.add(parentId);
      return true;
    });
    out.set(stream, firstPerParent.slice(0, BASES));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Expectations the generator knows independently of the code under test

/** What a mutated money field means: exact cents, or `null` when the text means no definite amount. */
interface MoneyExpect {
  kind: 'money';
  field: string;
  column: string;
  cents: bigint | null;
  sent: JsonValue;
}
/** What a mutated timestamp means: an instant (micros), a wall time in ZONE (naive), or nothing (invalid). */
interface TsExpect {
  kind: 'ts';
  field: string;
  column: string;
  micros?: bigint;
  wall?: string;
  sent: JsonValue;
}
type Expectation = MoneyExpect | TsExpect;

const roundHalfAwayMillsToCents = (mills: bigint): bigint => {
  const neg = mills < 0n;
  const a = neg ? -mills : mills;
  const c = (a + 5n) / 10n;
  return neg ? -c : c;
};

const groupThousands = (digits: string): string => digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** A money value in one of the spellings a site may use, with what it means. */
function moneyCase(rng: Prng): { sent: JsonValue; cents: bigint | null } {
  // Up to 2^53 cents: every JSON number below it is an integer number of cents, but not every one a double carries.
  const magnitude = BigInt(rng.pick([1, 100, 10_000, 1_000_000, 1e11, 1e15, 2 ** 53]));
  const draw = (BigInt(rng.int(0, 2 ** 26)) << 27n) | BigInt(rng.int(0, 2 ** 27 - 1));
  // A quarter of the time just below 2^53 cents, where doubles are a cent or more apart.
  let cents = rng.chance(0.25) ? 2n ** 53n - 1n - (draw % 2n ** 51n) : draw % (magnitude + 1n);
  if (rng.chance(0.3)) cents = -cents;
  const neg = cents < 0n;
  const abs = neg ? -cents : cents;
  const whole = (abs / 100n).toString();
  const frac = (abs % 100n).toString().padStart(2, '0');
  const plain = `${neg ? '-' : ''}${whole}.${frac}`;
  const safe = abs < 2n ** 53n;
  switch (rng.chance(0.3) ? 0 : rng.int(1, 12)) {
    case 0:
      return safe ? { sent: Number(plain), cents } : { sent: plain, cents };
    case 1:
      return { sent: `${neg ? '-' : ''}$${groupThousands(whole)}.${frac}`, cents };
    case 2:
      return { sent: `USD ${plain}`, cents };
    case 3:
      return { sent: `${plain} EUR`, cents };
    case 4:
      return { sent: `${neg ? '-' : ''}€${whole}.${frac}`, cents };
    case 5:
      // Accounting parentheses: no code may read them as the positive amount.
      return { sent: `(${groupThousands(whole)}.${frac})`, cents: -abs };
    case 6: {
      // Too many decimals: rounded half away from zero (money.ts, data dictionary).
      const mills = cents * 10n + BigInt((neg ? -1 : 1) * rng.int(0, 9));
      const m = mills < 0n ? -mills : mills;
      const text = `${mills < 0n ? '-' : ''}${(m / 1000n).toString()}.${(m % 1000n).toString().padStart(3, '0')}`;
      return { sent: rng.chance(0.5) && m < 2n ** 50n ? Number(text) : text, cents: roundHalfAwayMillsToCents(mills) };
    }
    case 7:
      // Exponent: whole dollars times 10^k.
      return { sent: `${neg ? '-' : ''}${whole}.${frac}e2`, cents: cents * 100n };
    case 8:
      return { sent: '9'.repeat(rng.int(17, 400)) + '.00', cents: null };
    case 9:
      return { sent: `${whole} ${frac}`, cents: null };
    case 10:
      return { sent: `${plain}${rng.pick(['', ' ', '\u00a0'])}`, cents };
    case 11:
      return rng.pick<{ sent: JsonValue; cents: bigint | null }>([
        { sent: '1e999999999', cents: null },
        { sent: '-1e-999999999', cents: 0n },
        { sent: 'NaN', cents: null },
        { sent: 'Infinity', cents: null },
        { sent: '--1', cents: null },
        { sent: '$', cents: null },
        { sent: '.', cents: null },
        { sent: '1.2.3', cents: null },
      ]);
    default:
      return { sent: `${neg ? '-' : '+'}${whole}.${frac}`, cents };
  }
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
const isoParts = (ms: number) => new Date(ms).toISOString().slice(0, 19);

function wallTime(ms: number, zone: string): string {
  const f = new Intl.DateTimeFormat('en-CA', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  const p = Object.fromEntries(f.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}`;
}

/** A timestamp in one of the spellings a site may use, with what it means. */
function tsCase(rng: Prng): { sent: JsonValue; micros?: bigint; wall?: string } {
  // Mostly recent; sometimes before standard time (local mean time, offsets with seconds) or anywhere up to year
  // 9999, where DuckDB and Postgres must both read the same instant.
  const year1 = Date.parse('0001-01-03T00:00:00Z');
  const roll = rng.next();
  const ms =
    roll < 0.7
      ? Date.UTC(1990, 0, 1) + Math.floor(rng.next() * 40 * 365.25 * 86_400_000)
      : year1 + Math.floor(rng.next() * (roll < 0.9 ? 1900 : 9998) * 365.2425 * 86_400_000);
  const sec = Math.floor(ms / 1000) * 1000;
  const fracDigits = rng.int(1, 9);
  const fracText = Array.from({ length: fracDigits }, () => rng.int(0, 9)).join('');
  const fracMicros = BigInt(fracText.padEnd(9, '0').slice(0, 6));
  const base = BigInt(sec) * 1000n;
  switch (rng.int(0, 9)) {
    case 0:
      return { sent: `${isoParts(sec)}Z`, micros: base };
    case 1:
      return { sent: `${isoParts(sec)}.${fracText}Z`, micros: base + fracMicros };
    case 2: {
      const off = rng.int(-14 * 4, 14 * 4) * 15;
      const sign = off < 0 ? '-' : '+';
      const a = Math.abs(off);
      const style = rng.int(0, 2);
      const o =
        style === 0 ? `${pad((a / 60) | 0)}:${pad(a % 60)}` : style === 1 ? `${pad((a / 60) | 0)}${pad(a % 60)}` : null;
      if (o === null && a % 60 !== 0)
        return { sent: `${isoParts(sec + off * 60_000)}${sign}${pad((a / 60) | 0)}:${pad(a % 60)}`, micros: base };
      return { sent: `${isoParts(sec + off * 60_000)}${sign}${o ?? pad((a / 60) | 0)}`, micros: base };
    }
    case 3:
      return { sent: `${isoParts(sec).replace('T', ' ')}.${fracText}+00:00`, micros: base + fracMicros };
    case 4:
      return { sent: wallTime(sec, ZONE), wall: wallTime(sec, ZONE) };
    case 5: {
      const day = wallTime(sec, ZONE).slice(0, 10);
      return { sent: day, wall: `${day}T00:00:00` };
    }
    case 6:
      return {
        sent: rng.pick([
          '2023-02-29T10:00:00Z',
          '2024-13-01T00:00:00Z',
          '2024-04-31',
          'yesterday',
          '2024-01-01T24:00:00Z',
          '2024-01-01T10:00:60Z',
          '0000-01-01T00:00:00Z',
          '12/31/2024',
        ]),
      };
    case 7:
      return { sent: `${isoParts(sec).toLowerCase()}z`, micros: base };
    case 8:
      return { sent: sec / 1000 };
    default:
      return { sent: `${isoParts(sec)}.${fracText}`.replace('T', 't') + 'Z', micros: base + fracMicros };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Mutations

const weirdStrings = [
  '',
  ' ',
  'naïve café — 日本語 🎉👩‍👩‍👧',
  'nul\u0000inside',
  '\u0000',
  'lone \ud800 surrogate',
  'tab\tnew\nline\r\\back"quote\'',
  '\u202eRTL',
  'x'.repeat(100_000),
  '0',
  '-1',
  '123',
  'true',
  'null',
  '{"a":1}',
  '0x10',
  '0b101',
  ' 1e3 ',
  '1_000',
  '12.5',
];

function randomValue(rng: Prng, depth = 0): JsonValue {
  switch (rng.int(0, depth > 1 ? 5 : 7)) {
    case 0:
      return rng.pick(weirdStrings);
    case 1:
      return rng.pick([0, -1, 1, 1.5, -0.000001, 2 ** 31, 2 ** 53 + 2, 1e308, -1e-308, 123456789.12345679]);
    case 2:
      return rng.chance(0.5);
    case 3:
      return null;
    case 4:
      return [];
    case 5:
      return {};
    case 6:
      return [randomValue(rng, depth + 1), randomValue(rng, depth + 1)];
    default:
      return { id: randomValue(rng, depth + 1), name: randomValue(rng, depth + 1) };
  }
}

interface Mutant {
  stream: StreamName;
  parentId?: number;
  record: JsonObject;
  expectations: Expectation[];
  notes: string[];
}

function moneyFields(stream: StreamName, r: JsonObject): { field: string; column: string }[] {
  const def = tableByName(mappingOf(stream).owns[0]!.table)!;
  const out: { field: string; column: string }[] = [];
  for (const c of def.columns) {
    if (c.type !== 'decimal') continue;
    if (c.name === 'awarded_amount') {
      if (stream === 'awards' && 'awarded' in r) out.push({ field: 'awarded', column: c.name });
    } else if (c.name in r) out.push({ field: c.name, column: c.name });
  }
  return out;
}

function tsFields(stream: StreamName, r: JsonObject): { field: string; column: string }[] {
  const def = tableByName(mappingOf(stream).owns[0]!.table)!;
  const out: { field: string; column: string }[] = [];
  for (const c of def.columns) {
    if (c.type !== 'timestamptz') continue;
    if (c.name === 'logged_at' && stream === 'api_log') out.push({ field: 'timestamp', column: c.name });
    else if (c.name in r) out.push({ field: c.name, column: c.name });
  }
  return out;
}

function mutate(rng: Prng, stream: StreamName, base: JsonObject, parentId: number | undefined, n: number): Mutant {
  const record = structuredClone(base);
  const expectations: Expectation[] = [];
  const notes: string[] = [];
  // Fresh identity for each mutant so mutants do not replace one another.
  if (typeof record.id === 'number' && stream !== 'eligibility') record.id = record.id + 1_000_000 * (n + 1);
  const pid = parentId === undefined ? undefined : parentId + 1_000_000 * (n + 1);
  const count = rng.int(1, 4);
  for (let i = 0; i < count; i++) {
    const roll = rng.int(0, 9);
    const money = moneyFields(stream, record).filter((f) => !expectations.some((e) => e.field === f.field));
    const stamps = tsFields(stream, record).filter((f) => !expectations.some((e) => e.field === f.field));
    if (roll <= 3 && money.length > 0) {
      const f = rng.pick(money);
      const c = moneyCase(rng);
      record[f.field] = c.sent;
      expectations.push({ kind: 'money', ...f, cents: c.cents, sent: c.sent });
      notes.push(`money ${f.field}=${JSON.stringify(c.sent).slice(0, 40)}`);
    } else if (roll <= 5 && stamps.length > 0) {
      const f = rng.pick(stamps);
      const c = tsCase(rng);
      record[f.field] = c.sent;
      expectations.push({
        kind: 'ts',
        ...f,
        sent: c.sent,
        ...(c.micros !== undefined ? { micros: c.micros } : {}),
        ...(c.wall !== undefined ? { wall: c.wall } : {}),
      });
      notes.push(`ts ${f.field}=${JSON.stringify(c.sent)}`);
    } else {
      // Anywhere in the record: top level, or an object nested in it (references, list entries, decision, ...).
      const target = rng.chance(0.5) ? record : nestedObject(rng, record);
      const top = target === record;
      const keys = Object.keys(target).filter((x) => !top || !expectations.some((e) => e.field === x));
      if (keys.length === 0) continue;
      const k = rng.pick(top ? keys.concat(['id']) : keys);
      const v = target[k];
      const at = top ? k : `..${k}`;
      const kind = rng.int(0, 7);
      if (kind === 0) {
        delete target[k];
        notes.push(`delete ${at}`);
      } else if (kind === 1) {
        target[rng.pick(['extra', 'Id', '__proto__', 'constructor', '', 'nul\u0000key', 'ключ'])] = randomValue(rng);
        notes.push(`extra field in ${at}`);
      } else if (kind === 2 && typeof v === 'object' && v !== null && !Array.isArray(v) && 'id' in v) {
        const id = v.id;
        target[k] = rng.pick<JsonValue>([
          id ?? null,
          typeof id === 'number' ? String(id) : 'x',
          [],
          { id: String(id) },
          { ...v, id: null },
          { ...v, name: rng.pick(weirdStrings), title: rng.pick(weirdStrings) },
        ]);
        notes.push(`ref ${at} -> ${JSON.stringify(target[k]).slice(0, 60)}`);
      } else if (kind === 3 && typeof v === 'number') {
        target[k] = rng.pick<JsonValue>([
          String(v),
          ` ${v} `,
          v + 0.5,
          `${v}.0`,
          -v,
          `00${v}`,
          '9007199254740993',
          '-9223372036854775808',
          '9223372036854775808',
          '0x10',
          '0b101',
          '1_000',
          ' 1e3 ',
          '+7',
        ]);
        notes.push(`number ${at} -> ${JSON.stringify(target[k])}`);
      } else if (kind === 4 && typeof v === 'string') {
        target[k] = rng.pick(weirdStrings);
        notes.push(`string ${at}`);
      } else if (kind === 5 && Array.isArray(v) && v.length > 0) {
        // The same entry twice (same id), the copy changed: which one a table keeps must not depend on the dialect.
        const copy = structuredClone(rng.pick(v));
        if (typeof copy === 'object' && copy !== null && !Array.isArray(copy)) {
          const ck = Object.keys(copy).filter((x) => x !== 'id');
          if (ck.length > 0) copy[rng.pick(ck)] = randomValue(rng);
        }
        v.splice(rng.int(0, v.length), 0, copy);
        notes.push(`duplicate entry in ${at}`);
      } else {
        target[k] = randomValue(rng);
        notes.push(`swap ${at} -> ${JSON.stringify(target[k]).slice(0, 40)}`);
      }
    }
  }
  // Money nested in a DecisionRef, set last so no later mutation moves it.
  const decision = record.decision;
  if ((stream === 'applications' || stream === 'payments') && isObject(decision) && rng.chance(0.5)) {
    const c = moneyCase(rng);
    decision.awarded = c.sent;
    expectations.push({ kind: 'money', field: 'decision.awarded', column: 'awarded_amount', ...c });
    notes.push(`money decision.awarded=${JSON.stringify(c.sent).slice(0, 40)}`);
  }
  return { stream, record, expectations, notes, ...(pid !== undefined ? { parentId: pid } : {}) };
}

const isObject = (v: JsonValue | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** An object somewhere below the record's top level, or the record itself when it nests none. */
function nestedObject(rng: Prng, record: JsonObject): JsonObject {
  let at: JsonObject = record;
  for (let depth = 0; depth < 3; depth++) {
    const inner = Object.values(at).flatMap((v) =>
      Array.isArray(v) ? v.filter((x) => typeof x === 'object' && x !== null && !Array.isArray(x)) : [v],
    );
    const objects = inner.filter((v): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v));
    if (objects.length === 0 || (depth > 0 && rng.chance(0.5))) break;
    at = rng.pick(objects);
  }
  return at;
}

/** The records as the pipeline sees them: through a page's text and the list parser. */
function throughPage(records: JsonObject[]): JsonObject[] {
  const parsed = parseListPage(JSON.stringify({ count: records.length, next: null, previous: null, results: records }));
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.value.records;
}

// ---------------------------------------------------------------------------------------------------------------

let dir: Awaited<ReturnType<typeof tempDir>>;
const schema = clusterName('fuzz');
beforeAll(async () => {
  dir = await tempDir('grantflow-fuzz-');
});
afterAll(async () => {
  await dropPostgresSchema(schema);
  await dir.remove();
});

interface Fed {
  mutant: Mutant;
  parsed: JsonObject;
  untyped: number;
  quarantined: boolean;
}

describe(`normaliser and loader under mutated records (seed ${SEED}, GRANTFLOW_FUZZ_SEED to replay)`, () => {
  it('load every record or quarantine it, type money and times exactly or count them, the same in both dialects', async () => {
    const rng = new Prng(SEED);
    const served = basesOf();
    const runId = 'fuzz-run';
    const extractedAt = '2026-01-01T00:00:00Z';
    const fed: Fed[] = [];
    const batches: { stream: StreamName; batches: RowBatch[] }[] = [];
    // A report's file is one record spread over many rows, none of which holds it as `_raw`, so the checks below do
    // not apply; its mapping is tested in test/extract/report-csv.test.ts and its loads in report-downloads.test.ts.
    for (const stream of builtinStreamNames.filter((s) => s !== 'report_downloads')) {
      const bases = served.get(stream) ?? [];
      expect(bases.length, `simulator records of ${stream}`).toBeGreaterThan(0);
      const mutants = bases.flatMap(({ record, parentId }) =>
        Array.from({ length: MUTANTS }, (_, n) => mutate(rng, stream, record, parentId, n)),
      );
      const batcher = new RowBatcher(stream, { catalog: defaultCatalog, runId, extractedAt, siteTimeZone: ZONE });
      const out: RowBatch[] = [];
      const seenKeys = new Set<string>();
      for (const mutant of mutants) {
        const [parsed] = throughPage([mutant.record]);
        const where = `seed ${SEED} ${stream} ${mutant.notes.join('; ')}`;
        // Mutants that collide with an earlier one on the entity key (or payload) replace it by design: skipped.
        let key: string;
        try {
          const first = mappingOf(stream).map(structuredClone(parsed!), {
            ...(mutant.parentId !== undefined ? { parentId: mutant.parentId } : {}),
            siteTimeZone: ZONE,
          })[0]!;
          const def = tableByName(first.table)!;
          key = `e:${def.primaryKey.map((c) => String(first.row[c])).join('|')}`;
        } catch {
          key = `q:${recordKey(parsed!)}`;
        }
        if (seenKeys.has(key)) continue;
        seenKeys.add(key);
        const before = { ...batcher.counts };
        let produced: RowBatch[] = [];
        expect(() => {
          produced = batcher.add([parsed!], mutant.parentId);
        }, where).not.toThrow();
        out.push(...produced);
        fed.push({
          mutant,
          parsed: parsed!,
          untyped: batcher.counts.untyped - before.untyped,
          quarantined: batcher.counts.quarantined > before.quarantined,
        });
      }
      out.push(...batcher.drain());
      batches.push({ stream, batches: out });
    }
    expect(fed.length).toBeGreaterThan(builtinStreamNames.length * BASES * 2);
    let summary: Checked | undefined;
    const duckPath = join(dir.path, 'fuzz.duckdb');
    const targets: [string, string | undefined][] = [
      [duckPath, undefined],
      [postgresUrl, schema],
    ];
    for (const [target, s] of targets) {
      const warehouse = await openWarehouse(target, { schema: s, logger: silentLogger });
      try {
        await warehouse.migrate(tables);
        // One load unit for every stream (a commit costs DuckDB ~0.25 s): the merges are the same as per stream.
        const unit = await warehouse.openLoad();
        let stream = '';
        try {
          for (const b of batches) {
            stream = b.stream;
            for (const x of b.batches) await unit.append(x.table, x.rows, x.merge);
          }
          stream = 'the commit';
          await unit.commit({ runId, extractedAt });
        } catch (e) {
          await unit.discard();
          throw new Error(`seed ${SEED}: loading ${stream} into ${s ?? 'duckdb'} failed: ${String(e)}`, { cause: e });
        }
        const checked = await checkWarehouse(warehouse, fed);
        for (const [kind, n] of Object.entries(checked))
          expect(n, `seed ${SEED}: ${kind} records checked`).toBeGreaterThan(5);
        if (s === undefined) summary = checked;
      } finally {
        await warehouse.close();
      }
    }

    const duck = await dumpWarehouse(duckPath);
    const pg = await dumpWarehouse(postgresUrl, { schema });
    const differing = Object.keys(duck).filter((t) => duck[t]!.checksum !== pg[t]?.checksum);
    for (const t of differing.slice(0, 1))
      expect(firstDifference(duck[t]!.content, pg[t]!.content), `seed ${SEED}: ${t} differs`).toBeNull();
    expect(summarize(pg), `seed ${SEED}`).toEqual(summarize(duck));
    console.log(`normalize fuzz seed ${SEED}: ${fed.length} records, checked ${JSON.stringify(summary)}`);
  }, 120_000);
});

function firstDifference(a: readonly Record<string, CellValue>[], b: readonly Record<string, CellValue>[]): unknown {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = JSON.stringify(a[i], (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    const y = JSON.stringify(b[i], (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    if (x !== y) return { row: i, duckdb: x?.slice(0, 600), postgres: y?.slice(0, 600) };
  }
  return null;
}

const centsText = (c: bigint): string => {
  const neg = c < 0n;
  const a = neg ? -c : c;
  return `${neg ? '-' : ''}${(a / 100n).toString()}.${(a % 100n).toString().padStart(2, '0')}`;
};

function isoMicros(iso: string): bigint {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?Z$/.exec(iso);
  if (!m) throw new Error(`not a UTC timestamp: ${iso}`);
  return BigInt(Date.parse(`${m[1]}Z`)) * 1000n + BigInt((m[2] ?? '').padEnd(6, '0'));
}

/** How many of each check ran: a run that checked nothing of a kind proves nothing of it. */
interface Checked {
  loaded: number;
  quarantined: number;
  money: number;
  moneyNull: number;
  ts: number;
  tsNull: number;
}

async function checkWarehouse(warehouse: Warehouse, fed: readonly Fed[]): Promise<Checked> {
  const checked: Checked = { loaded: 0, quarantined: 0, money: 0, moneyNull: 0, ts: 0, tsNull: 0 };
  const dialect = warehouse.dialect;
  const quarantine = await warehouse.query('SELECT stream, record_key, reason, payload FROM _grantflow_quarantine');
  const qByKey = new Map<string, Record<string, CellValue>[]>();
  for (const q of quarantine) {
    const k = `${String(q.stream)}|${String(q.record_key)}`;
    qByKey.set(k, [...(qByKey.get(k) ?? []), q]);
  }
  const entityRows = new Map<string, Map<string, Record<string, CellValue>>>();
  const rowsOf = async (table: string) => {
    let m = entityRows.get(table);
    if (m === undefined) {
      m = new Map();
      for (const r of await warehouse.query(`SELECT * FROM ${table}`))
        m.set(canonicalJson(JSON.parse(String(r._raw)) as JsonValue), r);
      entityRows.set(table, m);
    }
    return m;
  };
  for (const f of fed) {
    const { stream } = f.mutant;
    const where = `seed ${SEED} ${dialect} ${stream} [${f.mutant.notes.join('; ')}] ${JSON.stringify(f.parsed).slice(0, 300)}`;
    const table = mappingOf(stream).owns[0]!.table;
    const row = (await rowsOf(table)).get(canonicalJson(f.parsed));
    const qs = qByKey.get(`${stream}|${recordKey(f.parsed)}`) ?? [];
    // Loaded or quarantined, never neither; quarantined once, with a reason and the record as sent.
    expect(row !== undefined || qs.length > 0, `${where}: neither loaded nor quarantined`).toBe(true);
    expect(row === undefined || qs.length === 0, `${where}: both loaded and quarantined`).toBe(true);
    expect(row !== undefined, `${where}: the batcher said quarantined=${f.quarantined}`).toBe(!f.quarantined);
    if (qs.length > 0) {
      expect(qs.length, where).toBe(1);
      expect(String(qs[0]!.reason).trim(), where).not.toBe('');
      expect(JSON.parse(String(qs[0]!.payload)), where).toEqual(f.parsed);
      checked.quarantined++;
      continue;
    }
    checked.loaded++;
    checkPlainColumns(table, row!, f, where);
    for (const e of f.mutant.expectations) {
      const cell = row![e.column] ?? null;
      const what = `${where}: ${e.column} from ${JSON.stringify(e.sent).slice(0, 60)}`;
      if (cell === null) {
        // Every value sent is present: a NULL for it is allowed only when counted as untyped.
        expect(f.untyped, `${what}: NULL not counted`).toBeGreaterThan(0);
        checked[e.kind === 'money' ? 'moneyNull' : 'tsNull']++;
        continue;
      }
      checked[e.kind]++;
      if (e.kind === 'money') {
        expect(e.cents, `${what}: typed ${String(cell)} from an amount that means nothing definite`).not.toBeNull();
        expect(String(cell), what).toBe(centsText(e.cents!));
      } else if (e.micros !== undefined) {
        expect(isoMicros(String(cell)), `${what}: got ${String(cell)}`).toBe(e.micros);
      } else if (e.wall !== undefined) {
        const micros = isoMicros(String(cell));
        expect(micros % 1_000_000n, what).toBe(0n);
        expect(wallTime(Number(micros / 1000n), ZONE), `${what}: got ${String(cell)}`).toBe(e.wall);
      } else {
        expect.fail(`${what}: typed ${String(cell)} from a value that is not a timestamp`);
      }
    }
  }
  return checked;
}

/**
 * Top-level fields stored in the column of the same name: a string is kept as sent (U+0000 aside, which Postgres
 * cannot store), an integer, a double or a boolean as sent; anything else there is NULL only when counted.
 */
function checkPlainColumns(table: string, row: Record<string, CellValue>, f: Fed, where: string): void {
  // The typing of the whole record is checked here; a NULL counted anywhere in it may be this one.
  const def = tableByName(table)!;
  for (const c of def.columns) {
    if (!(c.name in f.parsed) || c.references !== undefined || c.name === 'id') continue;
    const v = f.parsed[c.name]!;
    const cell = row[c.name] ?? null;
    const what = `${where}: ${c.name} (${c.type}) from ${JSON.stringify(v).slice(0, 60)} got ${String(cell).slice(0, 60)}`;
    if (v === null || (typeof v === 'string' && v.trim() === '' && c.type !== 'text')) continue;
    // A column named like an object of the record is typed from inside it (applications.decision).
    if (typeof v === 'object' && c.type !== 'json') continue;
    if (cell === null) {
      if (c.type !== 'json') expect(f.untyped, `${what}: NULL not counted`).toBeGreaterThan(0);
      continue;
    }
    // UTF-8 has no U+0000 in Postgres text and no lone surrogate at all: both become U+FFFD, `_raw` keeps them.
    if (c.type === 'text' && typeof v === 'string')
      expect(cell, what).toBe(wellFormed(v.replaceAll('\u0000', '\uFFFD')));
    else if ((c.type === 'integer' || c.type === 'bigint') && typeof v === 'number') expect(Number(cell), what).toBe(v);
    else if (c.type === 'double' && typeof v === 'number') expect(cell, what).toBe(v);
    else if (c.type === 'double' && typeof v === 'string') {
      // Decimal text only: "0x10" is not sixteen.
      expect(
        /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(v),
        `${what}: typed from text that is no decimal`,
      ).toBe(true);
      expect(cell, what).toBe(Number(v));
    } else if ((c.type === 'integer' || c.type === 'bigint') && typeof v === 'string') {
      expect(/^\s*-?\d+\s*$/.test(v), `${what}: typed from text that is no integer`).toBe(true);
      expect(BigInt(String(cell)), what).toBe(BigInt(v.trim()));
    } else if (c.type === 'boolean' && typeof v === 'boolean') expect(cell, what).toBe(v);
    else if (c.type === 'json') expect(JSON.parse(String(cell)), what).toEqual(v);
  }
}

const wellFormed = (s: string): string =>
  s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
