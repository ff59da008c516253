import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { walkRecord, type FieldNode, type FieldObserver, type MappedRow } from '../../src/normalize/index.ts';
import { startSimulator, type SimulatorHandle } from '../../src/simulator/index.ts';

import { Drift, driftPaths } from '../../src/simulator/drift.ts';

import type { JsonObject, JsonValue } from '../../src/util/json.ts';
import {
  builtinStreamNames,
  declaredMappings,
  mappingOf,
  streamByName,
  streamFields,
  type StreamName,
} from '../../src/streams/registry.ts';
import { routeTemplate, servedRecords } from '../../src/simulator/stream-serving.ts';

/** The streams read from the site (report_downloads is built by grantflow): the registry's, every one. */
const fromSite = builtinStreamNames.filter((s) => streamFields[s] !== null);

class Recorder implements FieldObserver {
  readonly unmappedPaths = new Set<string>();
  readonly retypedPaths = new Set<string>();
  startRecord(): void {}
  unmapped(path: string): void {
    this.unmappedPaths.add(path);
  }
  retyped(path: string): void {
    this.retypedPaths.add(path);
  }
}

let sim: SimulatorHandle;
/** Records of each stream as the site sends them. */
const records = new Map<StreamName, JsonObject[]>();

beforeAll(async () => {
  sim = await startSimulator({ scale: 'tiny', seed: 5 });
  for (const stream of fromSite)
    records.set(
      stream,
      servedRecords(sim.control.data, stream, sim.control.config).map(({ record }) => record),
    );
});
afterAll(() => sim.close());

describe('source fields', () => {
  it('lists every field the simulator sends: no drift without drift', () => {
    for (const [stream, list] of records) {
      const obs = new Recorder();
      for (const r of list) walkRecord(r, streamFields[stream]!, [], obs);
      expect([...obs.unmappedPaths], stream).toEqual([]);
      expect([...obs.retypedPaths], stream).toEqual([]);
    }
  });

  it('lists every field each mapping reads', () => {
    // Property reads of the mapping, recorded through proxies (JSON.stringify of `_raw` sees the plain record).
    const targets = new WeakMap<object, object>();
    const read = new Set<string>();
    const watch = (v: JsonValue, path: string): JsonValue => {
      if (typeof v !== 'object' || v === null) return v;
      const p = new Proxy(v, {
        get(t, k, recv) {
          const x = Reflect.get(t, k, recv) as JsonValue;
          if (typeof k !== 'string' || k === 'toJSON') return x;
          if (Array.isArray(t)) return /^\d+$/.test(k) ? watch(x, `${path}[]`) : x;
          const sub = path === '' ? k : `${path}.${k}`;
          read.add(sub);
          return watch(x, sub);
        },
      });
      targets.set(p, v);
      return p;
    };
    const stringify = JSON.stringify;
    JSON.stringify = ((v: unknown, ...rest: []) => stringify(targets.get(v as object) ?? v, ...rest)) as never;
    try {
      for (const [stream, list] of records) {
        read.clear();
        for (const r of list) {
          try {
            declaredMappings[stream]!.map(watch(r, '') as JsonObject, { siteTimeZone: 'UTC', parentId: 1 });
          } catch {
            // A quarantined record still shows what was read.
          }
        }
        const unlisted = [...read].filter((p) => !covers(streamFields[stream]!, p));
        expect(unlisted, stream).toEqual([]);
      }
    } finally {
      JSON.stringify = stringify;
    }
  });
});

/** Whether `path` (as the recorder writes it) is inside the definition. */
function covers(root: FieldNode, path: string): boolean {
  let node: FieldNode | undefined = root;
  for (const part of path.split('.')) {
    let name = part;
    let items = 0;
    while (name.endsWith('[]')) {
      name = name.slice(0, -2);
      items++;
    }
    if (node.fields === undefined) return true; // kept whole
    node = node.fields.get(name);
    if (node === undefined) return false;
    for (let i = 0; i < items; i++) {
      if (node.items === undefined) return true;
      node = node.items;
    }
  }
  return true;
}

describe('with simulator drift', () => {
  it('reports exactly the paths drift added and feeds every user it mentions to users', () => {
    const drift = new Drift(true);
    for (const [stream, list] of records) {
      const template = routeTemplate(streamByName(stream)!.path);
      const decorated = drift.decorateBody(sim.control.data, template, list) as JsonObject[];
      const obs = new Recorder();
      const out: MappedRow[] = [];
      for (const r of decorated) walkRecord(r, streamFields[stream]!, out, obs);
      expect([...obs.unmappedPaths].sort(), stream).toEqual([...driftPaths]);
      expect(obs.retypedPaths.size, stream).toBe(0);
      // Through the whole mapping too: the drift users and the related programs become dimension rows.
      const rows = decorated.flatMap((r) => mappingOf(stream).map(r, { siteTimeZone: 'UTC', parentId: 1 }));
      const users = new Set(rows.filter((m) => m.table === 'users').map((m) => m.row.id));
      const mentioned = decorated.flatMap((r) => {
        const extra = r['extra'] as JsonObject;
        return [r['drift_owner'], extra['reviewed_by'], ...(extra['watchers'] as JsonValue[])].map(
          (u) => (u as JsonObject)['id'],
        );
      });
      for (const id of mentioned) expect(users.has(id as number), `${stream} user ${String(id)}`).toBe(true);
      const programs = new Set(rows.filter((m) => m.table === 'programs').map((m) => m.row.id));
      for (const r of decorated)
        expect(
          programs.has(
            (r['extra'] as JsonObject)['related_program'] &&
              (((r['extra'] as JsonObject)['related_program'] as JsonObject)['id'] as number),
          ),
        ).toBe(true);
    }
    const report = drift.report();
    expect(report.driftOnlyUserIds.length).toBeGreaterThan(0);
    for (const id of report.driftOnlyUserIds) expect(sim.control.data.users.has(id)).toBe(false);
  });

  it('reports a mapped field of another JSON kind, and a reference by its key', () => {
    const obs = new Recorder();
    const out: MappedRow[] = [];
    walkRecord(
      {
        id: 1,
        title: 7,
        program: { id: 2, name: 'P' },
        extra: { lead_team: { id: 9, name: 'Team' }, stages: [{ id: 4, title: 'S' }], note: { x: 1 } },
      },
      streamFields.applications!,
      out,
      obs,
    );
    expect([...obs.retypedPaths]).toEqual(['title']);
    expect([...obs.unmappedPaths].sort()).toEqual(['extra.lead_team', 'extra.note.x', 'extra.stages']);
    // The mapped program reference is the mapping's to feed; the walk adds only what it found elsewhere.
    expect(out.map((m) => [m.table, m.row.id])).toEqual([
      ['teams', 9],
      ['stages', 4],
    ]);
  });

  it('covers every stream', () => {
    expect(fromSite.filter((s) => (records.get(s) ?? []).length === 0)).toEqual([]);
  });
});
