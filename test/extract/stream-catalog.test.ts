import { describe, expect, it } from 'vitest';

import { sameUpdatedAtMarker, updatedAtMarker } from '../../src/streams/stream-def.ts';

import { ConfigError } from '../../src/util/errors.ts';
import { selectStreams, streamCatalog, mappingOf, streamNames } from '../../src/streams/registry.ts';

describe('the stream catalog', () => {
  it('has exactly one endpoint per normalizer stream', () => {
    expect(streamCatalog.map((s) => s.name).sort()).toEqual([...streamNames].sort());
    for (const s of streamCatalog) expect(mappingOf(s.name), s.name).toBeDefined();
  });

  it('fans out only from streams that run before it, with per-parent scopes for what it owns', () => {
    const order = streamCatalog.map((s) => s.name);
    for (const s of streamCatalog.filter((c) => c.parent)) {
      expect(order.indexOf(s.parent!.stream), s.name).toBeLessThan(order.indexOf(s.name));
      expect(s.path, s.name).toContain('{parent}');
      expect(
        mappingOf(s.name).owns.every((o) => o.parentColumn),
        s.name,
      ).toBe(true);
    }
  });

  it('brings a fan-out stream’s parent along, and names unknown streams', () => {
    expect(selectStreams(['application_tasks']).map((s) => s.name)).toEqual(['applications', 'application_tasks']);
    expect(() => selectStreams(['aplications'])).toThrow(ConfigError);
    expect(() => selectStreams(['aplications'])).toThrow(/unknown stream "aplications"; known streams: .*applications/);
  });

  it('marks an application by its updated_at and its content, and keeps matching marks of older versions', () => {
    const app = { id: 1, title: 'A', updated_at: '2026-01-01T10:00:00Z', applicant: { id: 2, last_name: 'Li' } };
    const marker = updatedAtMarker(app);
    expect(updatedAtMarker({ ...app })).toBe(marker);
    // The same record with its keys in another order is the same.
    expect(
      updatedAtMarker({ applicant: { last_name: 'Li', id: 2 }, updated_at: app.updated_at, title: 'A', id: 1 }),
    ).toBe(marker);
    // Edited within the precision of updated_at: the marker moves all the same.
    expect(updatedAtMarker({ ...app, title: 'B' })).not.toBe(marker);
    expect(sameUpdatedAtMarker(marker, marker)).toBe(true);
    expect(sameUpdatedAtMarker(marker, updatedAtMarker({ ...app, title: 'B' }))).toBe(false);
    // A mark from before markers carried a hash: the bare updated_at.
    expect(sameUpdatedAtMarker(app.updated_at, marker)).toBe(true);
    expect(sameUpdatedAtMarker('2026-01-01T09:00:00Z', marker)).toBe(false);
    expect(sameUpdatedAtMarker(null, marker)).toBe(false);
  });
});
