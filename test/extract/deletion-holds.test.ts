import { describe, expect, it } from 'vitest';

import { HoldTracker } from '../../src/extract/deletion-holds.ts';

import { maxHeldKeys, parentDeletions, scanDeletions } from '../../src/extract/deletions.ts';

import type { CompleteScope } from '../../src/warehouse/types.ts';
import { defaultCatalog, streamCatalog, mappingOf, type StreamName } from '../../src/streams/registry.ts';

const def = (name: StreamName) => streamCatalog.find((s) => s.name === name)!;
const tracker = (name: StreamName) => new HoldTracker(mappingOf(name).owns);
const scopeOf = (scopes: CompleteScope[], table: string) => scopes.find((s) => s.table === table);

describe('HoldTracker', () => {
  it('holds the rows of a list a loaded record did not send as a list, and only those', () => {
    const t = tracker('applications');
    expect(t.loaded({ id: 1, collaborators: [], custom_fields: [] }, undefined)).toBe(false);
    expect(t.loaded({ id: 2, custom_fields: [] }, undefined)).toBe(true); // collaborators absent
    expect(t.loaded({ id: 3, collaborators: [], custom_fields: null }, undefined)).toBe(true);
    expect(t.loaded({ id: '4', collaborators: { id: 9 }, custom_fields: [] }, undefined)).toBe(true);
    const scopes = scanDeletions(defaultCatalog, def('applications'), t.holds()).completeScopes;
    expect(scopeOf(scopes, 'applications')).toEqual({ table: 'applications', where: undefined });
    expect(scopeOf(scopes, 'application_collaborators')?.keep).toEqual({ column: 'application_id', values: [2, 4] });
    expect(scopeOf(scopes, 'custom_field_values')).toMatchObject({
      where: { entity_type: 'application' },
      keep: { column: 'entity_id', values: [3] },
    });
  });

  it('holds every row of a quarantined record by its id, and everything when it has no usable id', () => {
    const t = tracker('applications');
    t.quarantined({ id: 5, created_at: 'bad' }, undefined);
    const scopes = scanDeletions(defaultCatalog, def('applications'), t.holds()).completeScopes;
    expect(scopes.map((s) => s.keep?.values)).toEqual([[5], [5], [5], [5]]);
    t.quarantined({ id: 'five' }, undefined);
    expect(t.holds().everything).toBe(true);
    expect(scanDeletions(defaultCatalog, def('applications'), t.holds()).completeScopes).toEqual([]);
  });

  it('keeps the rows of a list the spec does not promise (labels) without counting its absence as silent', () => {
    const t = tracker('applications');
    const full = { id: 6, collaborators: [], custom_fields: [] };
    expect(t.loaded({ ...full, labels: [] }, undefined)).toBe(false);
    expect(t.loaded(full, undefined)).toBe(false);
    expect(t.loaded({ id: 7, labels: [] }, undefined)).toBe(true);
    const scopes = scanDeletions(defaultCatalog, def('applications'), t.holds()).completeScopes;
    expect(scopes.find((s) => s.table === 'application_labels')?.keep?.values).toEqual([6]);
  });

  it('holds a whole scope whose rows have no single id column to keep them by', () => {
    const t = tracker('assignments');
    t.quarantined({ application: { id: 1 } }, undefined);
    expect(scanDeletions(defaultCatalog, def('assignments'), t.holds()).completeScopes).toEqual([]);
  });

  it('spares the held parents of a fan-out, in the scope that holds them only', () => {
    const t = tracker('application_tasks');
    t.loaded({ id: 1, data: { q: 1 } }, 10);
    t.loaded({ id: 2 }, 11); // no data: its responses are not known
    t.loaded({ id: 3, data: [1] }, 12); // data of another shape
    const scopes = parentDeletions(defaultCatalog, def('application_tasks'), [10, 11, 12, 13], t.holds());
    expect(scopeOf(scopes, 'application_tasks')).toMatchObject({ parentIds: [10, 11, 12, 13] });
    expect(scopeOf(scopes, 'task_responses')).toMatchObject({ parentIds: [10, 13] });
    t.quarantined({ id: 4 }, 13);
    const after = parentDeletions(defaultCatalog, def('application_tasks'), [10, 11, 12, 13], t.holds());
    expect(scopeOf(after, 'application_tasks')).toMatchObject({ parentIds: [10, 11, 12] });
  });

  it('gives up a scope rather than name more held keys than one statement should carry', () => {
    const t = tracker('programs');
    for (let id = 1; id <= maxHeldKeys + 1; id++) t.loaded({ id, funding_sources: [] }, undefined);
    const scopes = scanDeletions(defaultCatalog, def('programs'), t.holds()).completeScopes;
    expect(scopes.map((s) => s.table)).toEqual(['programs', 'program_funding_sources']);
    expect(scopes.every((s) => s.keep === undefined)).toBe(true);
  });
});
