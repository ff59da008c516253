import { describe, expect, it } from 'vitest';
import { col, id } from '../../src/streams/columns.ts';
import { defineStream } from '../../src/streams/stream-definition.ts';
import { buildStreamCatalog, type StreamCatalog } from '../../src/streams/catalog.ts';
import {
  builtinStreams,
  defaultCatalog,
  isStreamName,
  streamCatalog,
  streamFields,
  streamMappings,
  streamNames,
  tableByName,
  tables,
} from '../../src/streams/registry.ts';

const extra = (name: string, parent?: string) =>
  defineStream({
    name,
    path: parent ? `/api/${name}/{parent}/` : `/api/${name}/`,
    description: `A stream only this test knows (${name}).`,
    ...(parent ? { parent: { stream: parent, marker: () => null } } : {}),
    table: {
      name,
      kind: 'entity',
      description: `Rows of ${name}.`,
      primaryKey: ['id'],
      columns: [id(`Id of ${name}.`), col('name', 'text', 'Its name.')],
    },
  });

/** What a catalog holds, by name: enough to see a stream in it or not. */
function catalogState(catalog: StreamCatalog) {
  return {
    streams: catalog.streams.map((s) => s.name),
    names: [...catalog.names],
    tables: catalog.tables.map((t) => t.name),
    mappings: Object.keys(catalog.mappings).sort(),
    fields: Object.keys(catalog.fields).sort(),
  };
}

/** The same, through the registry's exports of the default catalog (what the CLI, snapshots and simulator read). */
function registryState() {
  return {
    streams: streamCatalog.map((s) => s.name),
    names: [...streamNames],
    tables: tables.map((t) => t.name),
    mappings: Object.keys(streamMappings).sort(),
    fields: Object.keys(streamFields).sort(),
  };
}

describe('buildStreamCatalog', () => {
  it('adds a stream everywhere its catalog is read, and leaves the default catalog as it was', () => {
    const before = registryState();
    expect(catalogState(defaultCatalog)).toEqual(before);
    const catalog = buildStreamCatalog([...builtinStreams, extra('test_cycles')]);
    expect(catalog.isStreamName('test_cycles')).toBe(true);
    expect(catalog.tableByName('test_cycles')).toBeDefined();
    expect(catalogState(catalog).streams).toEqual([...before.streams, 'test_cycles']);
    expect(catalogState(catalog).mappings).toContain('test_cycles');
    expect(catalog.mappingOf('test_cycles').owns.map((o) => o.table)).toEqual(['test_cycles']);

    expect(registryState()).toEqual(before);
    expect(isStreamName('test_cycles')).toBe(false);
    expect(tableByName('test_cycles')).toBeUndefined();
    // Nothing was taken: another catalog may hold the same stream, and the default one still does not.
    buildStreamCatalog([...builtinStreams, extra('test_cycles')]);
    expect(registryState()).toEqual(before);
  });

  it('takes a fan-out stream only after its parent', () => {
    const before = registryState();
    expect(() => buildStreamCatalog([...builtinStreams, extra('test_children', 'test_parents')])).toThrow(
      /test_children: parent stream test_parents is not declared before it/,
    );
    const catalog = buildStreamCatalog([
      ...builtinStreams,
      extra('test_parents'),
      extra('test_children', 'test_parents'),
    ]);
    expect(catalog.select(['test_children']).map((s) => s.name)).toEqual(['test_parents', 'test_children']);
    expect(registryState()).toEqual(before);
  });

  it('refuses a name, a path or a table that is already declared', () => {
    expect(() => buildStreamCatalog([...builtinStreams, extra('programs')])).toThrow(
      /stream programs is declared twice/,
    );
    const samePath = { ...extra('test_paths'), path: builtinStreams[0].path };
    expect(() => buildStreamCatalog([...builtinStreams, samePath])).toThrow(/path \/api\/programs\/ already belongs/);
    const sameTable = { ...extra('test_tables'), table: { ...extra('test_tables').table, name: 'users' } };
    expect(() => buildStreamCatalog([...builtinStreams, sameTable])).toThrow(/table users of stream test_tables/);
  });

  it('cannot be changed once built', () => {
    const catalog = buildStreamCatalog([...builtinStreams]);
    expect(Object.isFrozen(catalog)).toBe(true);
    expect(() => (catalog.streams as unknown[]).push(extra('test_late'))).toThrow(TypeError);
    expect(() => (catalog.tables as unknown[]).pop()).toThrow(TypeError);
    expect(() => {
      (catalog.mappings as Record<string, unknown>).test_late = {};
    }).toThrow(TypeError);
    expect(catalogState(catalog)).toEqual(catalogState(defaultCatalog));
  });
});
