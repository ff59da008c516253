/**
 * Issue 23: the simulator's list endpoints are the registry's streams, no more and no fewer. Each stream has its route
 * at the path it declares, answering with what `servedRecords` (the map the tests read every stream through) says;
 * a GET that lists anything else would be a stream the registry does not know.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type SimulatorHandle } from '../../src/simulator/index.ts';
import { simulatorRoutes } from '../../src/simulator/routes.ts';
import { routeTemplate, servedRecords, streamServing } from '../../src/simulator/stream-serving.ts';
import { builtinStreamNames, streamByName, streamCatalog, type StreamName } from '../../src/streams/registry.ts';
import type { JsonObject } from '../../src/util/json.ts';
import { api, arr, obj, walk } from '../support/simulator-api.ts';

/** GETs of the site that answer neither a stream's records nor one record by its id. */
const notRecordGets = new Set([
  // A report job's progress (spec 4.12.5), polled by the report_downloads stream before it downloads.
  '/api/reportstatuses/',
]);

const gets = simulatorRoutes.filter((r) => r.method === 'GET').map((r) => r.template);
/** A detail route answers one record: its last segment is an id parameter (`/api/funds/{id}/`). */
const isDetail = (template: string): boolean => /\/\{[a-z_]+\}\/$/.test(template);

let sim: SimulatorHandle;
beforeAll(async () => {
  sim = await startSimulator({ scale: 'tiny', seed: 5, rate: 0 });
});
afterAll(() => sim.close());

describe('the simulator’s stream routes', () => {
  it('serve every stream of the registry at its path, once', () => {
    expect(streamCatalog.map((s) => s.name)).toEqual([...builtinStreamNames]);
    for (const s of streamCatalog) {
      expect(
        gets.filter((t) => t === routeTemplate(s.path)),
        s.name,
      ).toHaveLength(1);
      expect(streamServing[s.name as StreamName].shape, s.name).toBe(s.shape);
    }
  });

  it('are the only GETs that list: every other one is a detail route or named here', () => {
    const streamPaths = new Set(streamCatalog.map((s) => routeTemplate(s.path)));
    const undeclared = gets.filter((t) => !streamPaths.has(t) && !isDetail(t) && !notRecordGets.has(t));
    expect(undeclared).toEqual([]);
  });

  it('answer over HTTP what servedRecords gives for the stream, and 404 for a parent that does not exist', async () => {
    const { data, config } = sim.control;
    for (const name of builtinStreamNames) {
      const def = streamByName(name)!;
      const serving = streamServing[name];
      const parent = def.parent?.stream as StreamName | undefined;
      const parentIds = parent ? servedRecords(data, parent, config).map(({ record }) => record['id'] as number) : [];
      // A parent with something to serve (an organization with eligibility, a generated report).
      const parentId = parentIds.find((id) =>
        serving.shape === 'download'
          ? typeof serving.file(data, id, config) !== 'string'
          : servedRecords(data, name, config, [id]).length > 0,
      );
      if (parent) expect(parentId, `${name}: a parent with records`).toBeDefined();
      const path = def.path.replace('{parent}', String(parentId));
      const expected = servedRecords(data, name, config, parentId === undefined ? undefined : [parentId]);
      if (serving.shape === 'list') {
        const { records } = await walk(sim, `${path}?per_page=100`);
        const rows = expected.map(({ record }) => record);
        expect(records, name).toEqual(serving.desc ? rows.reverse() : rows);
        expect(records.length, name).toBeGreaterThan(0);
      } else {
        const res = await api(sim, path);
        expect(res.status, name).toBe(200);
        if (serving.shape === 'object') expect(obj(res.body), name).toEqual(expected[0]!.record);
        else expect(res.headers.get('content-type'), name).not.toMatch(/json/);
      }
      if (parent) {
        const missing = await api(sim, def.path.replace('{parent}', '999999999'));
        expect(missing.status, `${name} of a missing parent`).toBe(404);
      }
    }
  });

  it('serve an extra list, top-level or per parent, beside the streams; a path already served is refused', async () => {
    const grants: JsonObject[] = Array.from({ length: 12 }, (_, i) => ({ id: i + 1, title: `Grant ${i + 1}` }));
    sim.control.addList('/api/grants/', grants);
    const programId = sim.control.data.programs.rows[0]!['id'] as number;
    sim.control.addList('/api/programs/{parent}/grants/', (id) =>
      id === programId ? grants.filter((g) => (g['id'] as number) % 2 === 0) : undefined,
    );
    expect((await walk(sim, '/api/grants/?per_page=5')).records).toEqual(grants);
    grants.push({ id: 13, title: 'Added later' });
    expect((await walk(sim, '/api/grants/?per_page=5')).records).toEqual(grants);
    const perProgram = await walk(sim, `/api/programs/${programId}/grants/`);
    expect(perProgram.records.map((g) => g['id'])).toEqual([2, 4, 6, 8, 10, 12]);
    expect((await api(sim, `/api/programs/${programId + 1}/grants/`)).status).toBe(404);
    expect(sim.control.counts().byTemplate['GET /api/programs/{id}/grants/']).toBe(2);
    expect(() => sim.control.addList(streamByName('funds')!.path, [])).toThrow(/already served/);
    expect(arr(obj((await api(sim, '/api/funds/')).body)['results']).length).toBeGreaterThan(0);
  });
});
