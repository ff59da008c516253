import { describe, expect, it } from 'vitest';
import { col, id } from '../../src/streams/columns.ts';
import { defineStream } from '../../src/streams/stream-definition.ts';
import {
  isStreamName,
  registerStream,
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

/** What the registry holds, by name: enough to see a stream arrive and leave. */
function catalogState() {
  return {
    streams: streamCatalog.map((s) => s.name),
    names: [...streamNames],
    tables: tables.map((t) => t.name),
    mappings: Object.keys(streamMappings).sort(),
    fields: Object.keys(streamFields).sort(),
  };
}

describe('registerStream', () => {
  it('adds a stream everywhere the catalog is read, and what it returns takes it out again', () => {
    const before = catalogState();
    const unregister = registerStream(extra('test_cycles'));
    expect(isStreamName('test_cycles')).toBe(true);
    expect(tableByName('test_cycles')).toBeDefined();
    expect(catalogState().streams).toEqual([...before.streams, 'test_cycles']);
    expect(catalogState().mappings).toContain('test_cycles');

    unregister();
    expect(catalogState()).toEqual(before);
    expect(isStreamName('test_cycles')).toBe(false);
    expect(tableByName('test_cycles')).toBeUndefined();
    // Out again, its name and path are free for the next registration.
    registerStream(extra('test_cycles'))();
    expect(catalogState()).toEqual(before);
  });

  it('keeps a registered parent while a registered child of it is in', () => {
    const before = catalogState();
    const outParent = registerStream(extra('test_parents'));
    const outChild = registerStream(extra('test_children', 'test_parents'));
    expect(() => outParent()).toThrow(/test_parents is the parent of a registered stream/);
    outChild();
    outParent();
    expect(catalogState()).toEqual(before);
  });
});
