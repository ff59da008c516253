import { describe, expect, it } from 'vitest';
import { streamCatalog } from '../../src/extract/streams/index.ts';
import { selectStreams } from '../../src/extract/extract-run.ts';
import { streamMappings, streamNames } from '../../src/normalize/index.ts';
import { ConfigError } from '../../src/util/errors.ts';

describe('the stream catalog', () => {
  it('has exactly one endpoint per normalizer stream', () => {
    expect(streamCatalog.map((s) => s.name).sort()).toEqual([...streamNames].sort());
    for (const s of streamCatalog) expect(streamMappings[s.name], s.name).toBeDefined();
  });

  it('fans out only from streams that run before it, with per-parent scopes for what it owns', () => {
    const order = streamCatalog.map((s) => s.name);
    for (const s of streamCatalog.filter((c) => c.parent)) {
      expect(order.indexOf(s.parent!.stream), s.name).toBeLessThan(order.indexOf(s.name));
      expect(s.path, s.name).toContain('{parent}');
      expect(
        streamMappings[s.name].owns.every((o) => o.parentColumn),
        s.name,
      ).toBe(true);
    }
  });

  it('brings a fan-out stream’s parent along, and names unknown streams', () => {
    expect(selectStreams(['application_tasks']).map((s) => s.name)).toEqual(['applications', 'application_tasks']);
    expect(() => selectStreams(['aplications'])).toThrow(ConfigError);
    expect(() => selectStreams(['aplications'])).toThrow(/unknown stream "aplications"; known streams: .*applications/);
  });
});
