import { readdirSync, readFileSync } from 'node:fs';

import { basename, join } from 'node:path';

import {
  columnTypes,
  personalDataKinds,
  type ColumnDef,
  type ColumnType,
  type PersonalData,
  type TableDef,
} from '../normalize/table-def.ts';

import { dialects, type DecimalPrecision, type Dialect } from '../warehouse/types.ts';

import { sqlDialects } from '../warehouse/dialects.ts';

import { enumLabelSql, labelColumnName } from '../warehouse/enum-label-sql.ts';

import { labelComment } from '../warehouse/catalog-comments.ts';

import { ident } from '../warehouse/values.ts';

import { enumNames } from '../normalize/enums.ts';

import { ConfigError } from '../util/errors.ts';

import { commaList } from '../util/comma-list.ts';
import { tables as catalog } from '../streams/registry.ts';
import { packagePath } from '../util/package-root.ts';

/** `models/` at the package root, next to `src/`. */
export const defaultModelsDir = packagePath('models');

/**
 * A model column: the catalog fields plus the exact SQL type the model casts it to (e.g. DECIMAL(9,6)), as the first
 * of `sqlDialects` spells it; `decimal` when the header gives a precision of its own.
 */
export interface ModelColumn extends ColumnDef {
  readonly sqlType: string;
  readonly decimal?: DecimalPrecision;
  /** The label of this enum code column (`-- column <code> <type> enum <name>: ...`), added by grantflow. */
  readonly labelOf?: string;
}

export interface ModelDef {
  readonly name: string;
  readonly description: string;
  /** The SELECT, per dialect (a `<name>.postgres.sql` file overrides the shared one for Postgres). */
  readonly sql: Readonly<Record<Dialect, string>>;
  /** Explicit `-- depends_on:` names plus other models the SQL mentions. */
  readonly dependsOn: readonly string[];
  /** Declared by `-- column <name> <type>: <description>` lines; the dictionary and tests use them. */
  readonly columns: readonly ModelColumn[];
  /** Its inclusion rules, one per `-- includes: <rule>` line: which rows it counts and which it leaves out. */
  readonly includes: readonly string[];
  /** `-- primary_key: a, b`: columns that identify a row, declared on the table (none when not given). */
  readonly primaryKey?: readonly string[];
  readonly file: string;
}

export interface SqlTestDef {
  readonly name: string;
  readonly description: string;
  readonly severity: 'error' | 'warn';
  readonly sql: string;
  readonly file: string;
}

const namePattern = /^[a-z_][a-z0-9_]*$/;

interface Header {
  description: string;
  primaryKey: string[];
  dependsOn: string[];
  columns: ModelColumn[];
  includes: string[];
  severity: string | null;
  body: string;
}

/** Header comment lines (`-- key: value`) at the top of a SQL file; the rest is the statement. */
function parseHeader(text: string, file: string): Header {
  const header: Header = {
    description: '',
    primaryKey: [],
    dependsOn: [],
    columns: [],
    includes: [],
    severity: null,
    body: '',
  };
  const lines = text.split('\n');
  let i = 0;
  for (; i < lines.length; i++) {
    const line = (lines[i] ?? '').trim();
    if (line === '') continue;
    if (!line.startsWith('--')) break;
    const content = line.slice(2).trim();
    const column =
      /^column\s+([a-z_][a-z0-9_]*)\s+([a-z]+)(?:\((\d+),(\d+)\))?(?:\s+enum\s+([a-z_][a-z0-9_]*))?(?:\s+([a-z_]+))?\s*:\s*(.*)$/.exec(
        content,
      );
    if (column) {
      const [, name = '', type = '', precision, scale, enumName, personal, description = ''] = column;
      if (!(columnTypes as readonly string[]).includes(type)) {
        throw new ConfigError(`${file}: column ${name} has unknown type "${type}" (one of ${columnTypes.join(', ')})`);
      }
      if (enumName !== undefined && !(enumNames as readonly string[]).includes(enumName))
        throw new ConfigError(
          `${file}: column ${name} names unknown enum "${enumName}" (one of ${enumNames.join(', ')})`,
        );
      // The personal data it holds, after the type (`-- column reviewer_email text identifier: ...`; docs/privacy.md).
      if (personal !== undefined && !(personalDataKinds as readonly string[]).includes(personal)) {
        throw new ConfigError(
          `${file}: column ${name} has unknown personal data kind "${personal}" (one of ${personalDataKinds.join(', ')})`,
        );
      }
      const decimal =
        precision !== undefined && type === 'decimal' ? { precision: Number(precision), scale: Number(scale) } : null;
      const sqlType = sqlDialects[0].sqlType(type as ColumnType, decimal ?? undefined);
      const declared: ModelColumn = {
        name,
        type: type as ColumnType,
        description,
        sqlType,
        ...(decimal ? { decimal } : {}),
        ...(enumName ? { enum: enumName } : {}),
        ...(personal !== undefined ? { personal: personal as PersonalData } : {}),
      };
      header.columns.push(declared);
      // A model that shows codes shows their labels too, right after them (added to its SELECT by labelledSql).
      if (enumName)
        header.columns.push({
          name: labelColumnName(name),
          type: 'text',
          description: labelComment(declared),
          sqlType: sqlDialects[0].sqlType('text'),
          labelOf: name,
        });
      continue;
    }
    // A mistyped header line would otherwise be dropped without a word (a column left out of the dictionary).
    if (/^column\s/.test(content))
      throw new ConfigError(
        `${file}: bad header line "${line}"; expected -- column <name> <type> [identifier|free_text]: <description>`,
      );
    const kv = /^([a-z_]+)\s*:\s*(.*)$/.exec(content);
    if (!kv) continue;
    const [, key, value = ''] = kv;
    if (key === 'description') header.description = value;
    else if (key === 'depends_on') header.dependsOn.push(...commaList(value));
    else if (key === 'primary_key') header.primaryKey.push(...commaList(value));
    else if (key === 'severity') header.severity = value;
    else if (key === 'includes') {
      if (value.trim() !== '') header.includes.push(value.trim());
    } else
      throw new ConfigError(
        `${file}: unknown header key "${key}" (known: description, depends_on, column, severity, includes, primary_key)`,
      );
  }
  // The statement's closing ';' goes, with any line comments after it: the body is nested in other SQL.
  header.body = lines
    .slice(i)
    .join('\n')
    .trim()
    .replace(/;\s*(?:--[^\n]*\s*)*$/, '');
  if (!header.body) throw new ConfigError(`${file} has no SQL statement`);
  return header;
}

/**
 * A model's SELECT with a label beside each enum code column its header declares: the model's own columns, in
 * header order, the labels spelt out as in the `_current` views (warehouse/enum-label-sql.ts). A model without enum
 * columns is left as written.
 */
function labelledSql(body: string, columns: readonly ModelColumn[], dialect: Dialect): string {
  if (!columns.some((c) => c.labelOf !== undefined)) return body;
  const sqlDialect = sqlDialects.find((d) => d.name === dialect) ?? sqlDialects[0];
  const byName = new Map(columns.map((c) => [c.name, c]));
  const select = columns.map((c) => {
    const code = c.labelOf === undefined ? undefined : byName.get(c.labelOf);
    return code
      ? `${enumLabelSql(sqlDialect, code, `m.${ident(code.name)}`)} AS ${ident(c.name)}`
      : `m.${ident(c.name)}`;
  });
  return `SELECT ${select.join(', ')}\nFROM (\n${body}\n) AS m`;
}

/** `.sql` files of `dir`; a missing directory is an error unless `optional` (a user's models dir without tests/). */
function sqlFiles(dir: string, optional = false): string[] {
  try {
    return readdirSync(dir)
      .filter((f) => f.endsWith('.sql'))
      .sort();
  } catch (e) {
    if (optional && (e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new ConfigError(`cannot read the models directory ${dir}: ${(e as Error).message}`);
  }
}

/** The tables `runModels` builds (one per model, the user's too), for checking up front that they may be replaced. */
export function modelTableNames(userDir?: string): string[] {
  return loadAllModels(userDir).map((m) => m.name);
}

/**
 * Every model of `dir`: `<name>.sql`, optionally overridden for Postgres by `<name>.postgres.sql`. `visible` names
 * models of other directories these may read (a user's models read the built-in ones; never the other way round).
 */
export function loadModels(dir: string = defaultModelsDir, visible: readonly string[] = []): ModelDef[] {
  const files = sqlFiles(dir);
  const base = files.filter((f) => !f.endsWith('.postgres.sql') && !f.endsWith('.duckdb.sql'));
  const names = [...base.map((f) => basename(f, '.sql')), ...visible];
  return base.map((f, idx) => {
    const name = names[idx] ?? f;
    if (!namePattern.test(name)) throw new ConfigError(`model file ${f}: the name must be lower_snake_case`);
    const file = join(dir, f);
    const shared = parseHeader(readFileSync(file, 'utf8'), file);
    const variant = (d: Dialect): string => {
      const v = `${name}.${d}.sql`;
      return files.includes(v) ? parseHeader(readFileSync(join(dir, v), 'utf8'), join(dir, v)).body : shared.body;
    };
    const sql = Object.fromEntries(dialects.map((d) => [d, labelledSql(variant(d), shared.columns, d)])) as Record<
      Dialect,
      string
    >;
    const every = Object.values(sql).join('\n');
    const mentioned = names.filter((other) => other !== name && new RegExp(`\\b${other}\\b`).test(every));
    for (const dep of shared.dependsOn) {
      if (!names.includes(dep)) throw new ConfigError(`model ${name} depends on unknown model ${dep}`);
    }
    for (const k of shared.primaryKey) {
      if (!shared.columns.some((c) => c.name === k))
        throw new ConfigError(`${file}: primary_key names ${k}, which no -- column line declares`);
    }
    return {
      name,
      description: shared.description,
      sql,
      dependsOn: [...new Set([...shared.dependsOn, ...mentioned])],
      columns: shared.columns,
      includes: shared.includes,
      primaryKey: shared.primaryKey,
      file,
    };
  });
}

/**
 * The built-in models plus those of the user's `--models-dir` (none without one), in dependency order across both.
 * A user model named like a built-in model or a warehouse table would replace it: refused, as is a cycle.
 */
export function loadAllModels(userDir?: string): ModelDef[] {
  const builtIn = loadModels();
  if (userDir === undefined) return orderModels(builtIn);
  const taken = new Map<string, string>([
    ...catalog.map((t): [string, string] => [t.name, 'a warehouse table']),
    ...builtIn.map((m): [string, string] => [m.name, 'a built-in model']),
  ]);
  const user = loadModels(
    userDir,
    builtIn.map((m) => m.name),
  );
  for (const m of user) {
    const what = taken.get(m.name);
    if (what) throw new ConfigError(`model ${m.file} has the name of ${what} (${m.name}); rename the file`);
  }
  return orderModels([...builtIn, ...user]);
}

/** Dependencies first; a cycle is an error naming the models in it. */
export function orderModels(models: readonly ModelDef[]): ModelDef[] {
  const byName = new Map(models.map((m) => [m.name, m]));
  const done = new Set<string>();
  const visiting = new Set<string>();
  const out: ModelDef[] = [];
  const visit = (m: ModelDef, path: string[]): void => {
    if (done.has(m.name)) return;
    if (visiting.has(m.name))
      throw new ConfigError(`models depend on each other in a cycle: ${[...path, m.name].join(' -> ')}`);
    visiting.add(m.name);
    for (const dep of m.dependsOn) {
      const d = byName.get(dep);
      if (d) visit(d, [...path, m.name]);
    }
    visiting.delete(m.name);
    done.add(m.name);
    out.push(m);
  };
  for (const m of models) visit(m, []);
  return out;
}

/** The models as catalog entries (kind `model`) for the data dictionary and snapshots. */
export function modelTableDefs(models: readonly ModelDef[] = loadModels()): TableDef[] {
  return models.map((m) => ({
    name: m.name,
    description: m.description,
    kind: 'model',
    columns: m.columns,
    primaryKey: m.primaryKey ?? [],
    includes: m.includes,
  }));
}

/** The built-in SQL data tests plus those of `<userDir>/tests/` (a folder it may lack); a name may be used once. */
export function loadAllSqlTests(userDir?: string): SqlTestDef[] {
  const builtIn = loadSqlTests();
  if (userDir === undefined) return builtIn;
  const names = new Set(builtIn.map((t) => t.name));
  const user = loadSqlTests(join(userDir, 'tests'), true);
  for (const t of user) {
    if (names.has(t.name))
      throw new ConfigError(`data test ${t.file} has the name of a built-in data test (${t.name})`);
  }
  return [...builtIn, ...user];
}

/** SQL data tests: `models/tests/<name>.sql`, each returning the failing rows. */
export function loadSqlTests(dir: string = join(defaultModelsDir, 'tests'), optional = false): SqlTestDef[] {
  return sqlFiles(dir, optional).map((f) => {
    const file = join(dir, f);
    const h = parseHeader(readFileSync(file, 'utf8'), file);
    const severity = h.severity ?? 'error';
    if (severity !== 'error' && severity !== 'warn') throw new ConfigError(`${file}: severity must be error or warn`);
    return { name: basename(f, '.sql'), description: h.description, severity, sql: h.body, file };
  });
}
