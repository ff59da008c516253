import { withRecordWalk } from '../normalize/record-walk.ts';
import type { StreamMapping } from '../normalize/mapping.ts';
import type { TableDef } from '../normalize/table-def.ts';
import type { FieldNode } from '../normalize/field-kinds.ts';
import { deriveFields } from './derive-fields.ts';
import { deriveMapping } from './derive-mapping.ts';
import { sharedTables } from './dimensions.ts';
import type { StreamDefinition } from './stream-definition.ts';
import { ConfigError } from '../util/errors.ts';

/**
 * The streams a sync knows and everything derived from them, built once and never changed: the extraction, the
 * warehouse's tables, the data tests and the dictionary read it. The built-in one is `defaultCatalog`
 * (registry.ts); code that knows more streams (a test adding an endpoint) builds its own and hands it to the sync.
 */
export interface StreamCatalog {
  /** The streams, in run order. */
  readonly streams: readonly StreamDefinition[];
  /** Every table of the warehouse schema: each stream's tables, then the shared ones. */
  readonly tables: readonly TableDef[];
  /** Each stream's mapping: declared columns, bridges, `finish`, and the record walk. */
  readonly mappings: Readonly<Record<string, StreamMapping | undefined>>;
  /** The mappings alone, without the record walk (a test checks every field they read is in `fields`). */
  readonly declaredMappings: Readonly<Record<string, StreamMapping | undefined>>;
  /** Each stream's known source fields, for the drift catalog; null for streams not read from the site. */
  readonly fields: Readonly<Record<string, FieldNode | null>>;
  /** Stream names in run order. */
  readonly names: readonly string[];
  streamByName(name: string): StreamDefinition | undefined;
  /** A stream's mapping; an unknown name is a bug of the caller (names are checked where they are read). */
  mappingOf(name: string): StreamMapping;
  tableByName(name: string): TableDef | undefined;
  isStreamName(name: string): boolean;
  /**
   * Resolves `--streams a,b` (null or empty: every stream), in run order: an unknown name is a usage error; a fan-out
   * stream brings its parent along.
   */
  select(names: readonly string[] | null): StreamDefinition[];
}

function tablesOf(def: StreamDefinition): TableDef[] {
  return [def.table, ...(def.bridges ?? []), ...(def.otherTables ?? [])];
}

/** Names, paths and tables must be unique, and a fan-out stream's parent must come before it. */
function checkDefinitions(definitions: readonly StreamDefinition[]): void {
  const names = new Set<string>();
  const paths = new Set<string>();
  const tables = new Set(sharedTables.map((t) => t.name));
  for (const def of definitions) {
    if (names.has(def.name)) throw new Error(`stream ${def.name} is declared twice`);
    if (paths.has(def.path)) throw new Error(`path ${def.path} already belongs to a stream`);
    if (def.parent !== undefined && !names.has(def.parent.stream))
      throw new Error(`stream ${def.name}: parent stream ${def.parent.stream} is not declared before it`);
    for (const t of tablesOf(def)) {
      if (tables.has(t.name)) throw new Error(`table ${t.name} of stream ${def.name} is already declared`);
      tables.add(t.name);
    }
    names.add(def.name);
    paths.add(def.path);
  }
}

/** The catalog of `definitions`, in their order (the order a sync starts them). */
export function buildStreamCatalog(definitions: readonly StreamDefinition[]): StreamCatalog {
  checkDefinitions(definitions);
  const streams = Object.freeze([...definitions]);
  const mappings: Record<string, StreamMapping> = {};
  const declaredMappings: Record<string, StreamMapping> = {};
  const fields: Record<string, FieldNode | null> = {};
  for (const def of streams) {
    const walk = deriveFields(def);
    const mapping = deriveMapping(def);
    declaredMappings[def.name] = mapping;
    mappings[def.name] = walk === null ? mapping : withRecordWalk(mapping, walk);
    fields[def.name] = walk;
  }
  const tables = Object.freeze([...streams.flatMap(tablesOf), ...sharedTables]);
  const tableIndex = new Map(tables.map((t) => [t.name, t]));
  const names = Object.freeze(streams.map((s) => s.name));
  return Object.freeze({
    streams,
    tables,
    mappings: Object.freeze(mappings),
    declaredMappings: Object.freeze(declaredMappings),
    fields: Object.freeze(fields),
    names,
    streamByName: (name: string) => streams.find((s) => s.name === name),
    mappingOf(name: string): StreamMapping {
      const m = mappings[name];
      if (m === undefined) throw new Error(`no stream named ${name}`);
      return m;
    },
    tableByName: (name: string) => tableIndex.get(name),
    isStreamName: (name: string) => names.includes(name),
    select: (wanted: readonly string[] | null) => selectStreams(streams, wanted),
  });
}

function selectStreams(streams: readonly StreamDefinition[], names: readonly string[] | null): StreamDefinition[] {
  if (!names || names.length === 0) return [...streams];
  const byName = new Map(streams.map((s) => [s.name, s]));
  const unknown = names.filter((n) => !byName.has(n));
  if (unknown.length > 0) {
    throw new ConfigError(
      `unknown stream${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `"${n}"`).join(', ')}; known streams: ${streams.map((s) => s.name).join(', ')}`,
    );
  }
  const wanted = new Set(names);
  for (const n of names) {
    const parent = byName.get(n)?.parent?.stream;
    if (parent) wanted.add(parent);
  }
  return streams.filter((s) => wanted.has(s.name));
}
