/** The simulator's extra lists: an endpoint the spec does not list, served like the site's own lists. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import type { JsonObject } from '../../src/util/json.ts';
import { startSite } from '../support/harness.ts';
import { api, walk } from '../support/simulator-api.ts';

const records = (n: number, from = 1): JsonObject[] =>
  Array.from({ length: n }, (_, i) => ({ id: from + i, name: `cycle ${from + i}` }));

const cycles = records(30);
let sim: SimulatorHandle;
beforeAll(async () => {
  sim = await startSite({ extraLists: { '/api/grant-cycles/': cycles } });
});
afterAll(async () => {
  await sim.close();
});

describe('extra lists', () => {
  it('serve the rows given, paginated like every list, and read them again at each request', async () => {
    const { records: served, pages } = await walk(sim, '/api/grant-cycles/');
    expect(served).toEqual(records(30));
    expect(pages).toBe(Math.ceil(30 / sim.control.config.perPageDefault));
    cycles.splice(3, 1);
    expect((await walk(sim, '/api/grant-cycles/')).records).toEqual(records(30).filter((r) => r.id !== 4));
  });

  it('are added while the site runs, and counted by their path', async () => {
    sim.control.addList('/api/rounds/', records(2, 7));
    expect((await walk(sim, '/api/rounds/')).records).toEqual(records(2, 7));
    expect(sim.control.counts().byTemplate['GET /api/rounds/']).toBe(1);
  });

  it('need a token, and refuse a path already served or one with parameters', async () => {
    expect((await api(sim, '/api/grant-cycles/', { token: 'nope' })).status).toBe(401);
    expect(() => sim.control.addList('/api/programs/', [])).toThrow(/already served/);
    expect(() => sim.control.addList('/api/rounds/', [])).toThrow(/already served/);
    expect(() => sim.control.addList('/api/cycles/{id}/', [])).toThrow(/without parameters/);
  });
});
