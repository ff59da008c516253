import type { JsonObject } from '../util/json.ts';
import type { Dataset, SimUser } from './dataset.ts';
import { DAY_MS, EPOCH_MS, timestamp } from './format.ts';
import type { Rng } from './random.ts';
import { cities, countries, orgWords, titleWords } from './vocab.ts';

export function memberRecord(user: SimUser, isAdmin: boolean, status = 1): JsonObject {
  return {
    first_name: user.first_name,
    last_name: user.last_name,
    email: user.email,
    id: user.id,
    is_admin: isAdmin,
    status,
  };
}

/** Organizations with members (primary admin included), teams and (for most) eligibility responses. */
export function generateOrganizations(ds: Dataset, rng: Rng, count: number): void {
  for (let id = 1; id <= count; id++) {
    const members = rng.sample(ds.applicants, rng.int(2, 5));
    const primary = members[0] ?? rng.pick(ds.applicants);
    const usa = rng.chance(0.5);
    const name =
      id === 3
        ? 'Children\'s "Future" Fund; DROP TABLE organizations; --'
        : `${rng.pick(titleWords)} ${rng.pick(orgWords)} ${id}`;
    ds.organizations.insert({
      id,
      name,
      allow_collaborators: rng.chance(0.5),
      city: rng.pick(cities),
      country: rng.pick(countries),
      address: `${rng.int(1, 999)} Main St., Unit ${rng.int(1, 40)}`,
      email: `contact${id}@org.example.org`,
      website: `https://org${id}.example.org`,
      phone: `+1-555-${String(rng.int(0, 9999)).padStart(4, '0')}`,
      tax_country: usa ? 0 : 1,
      tax_number: usa
        ? `${rng.int(10, 99)}-${rng.int(1_000_000, 9_999_999)}`
        : `${rng.int(100_000_000, 999_999_999)} RT 0001`,
      primary_admin: primary.ref,
      custom_fields: [],
      logo_url: `https://cdn.example.org/logos/${id}.png`,
      status: rng.pick([0, 1, 1, 1, 2]),
    });
    ds.members.set(
      id,
      members.map((u) => memberRecord(u, u.id === primary.id, u.id === primary.id ? 1 : rng.pick([0, 1, 1]))),
    );
    const teams: JsonObject[] = [];
    for (let t = 0; t < rng.int(0, 2); t++)
      teams.push({ name: `${rng.pick(['Review', 'Finance', 'Équipe'])} team ${t + 1}`, id: ds.nextTeamId() });
    ds.teams.set(id, teams);
    if (rng.chance(0.7)) {
      const started = EPOCH_MS - rng.int(1, 100) * DAY_MS;
      ds.eligibility.set(id, {
        created_at: timestamp(rng, started),
        updated_at: timestamp(rng, started + DAY_MS),
        is_completed: rng.chance(0.6),
        responses: [
          { id: 'q1', name: 'Are you a registered charity?', response: rng.pick(['Yes', 'No']) },
          { id: 'q2', name: "What's your annual budget?", response: String(rng.int(1, 900) * 1000) },
          // Question ids repeat across tasks (spec 2.16).
          { id: 'q1', name: 'Do you operate in more than one country?', response: rng.pick(['Yes', 'No', '']) },
        ],
      });
    }
  }
}
