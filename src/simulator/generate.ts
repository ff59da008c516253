import type { JsonObject } from '../util/json.ts';
import { Dataset, type SimUser, type UserRole } from './dataset.ts';
import { DAY_MS, EPOCH_MS, timestamp } from './format.ts';
import { generateChildren } from './generate-children.ts';
import { generateFinance } from './generate-finance.ts';
import { generateActivity, generateAssignments, generateLog, generateReports } from './generate-misc.ts';
import { generateOrganizations } from './generate-orgs.ts';
import { deriveSeed, Rng } from './random.ts';
import { scales, type ScaleName } from './scales.ts';
import { awkwardStrings, firstNames, lastNames, slug, titleWords } from './vocab.ts';

export interface GenerateOptions {
  readonly scale?: ScaleName;
  readonly seed?: number;
}

const TASK_TYPES = [1, 2, 5, 7, 10, 20] as const;
const STAGE_TITLES = ['Eligibility', 'Full Application', 'Review', 'Final Decision'] as const;

/** A whole site, deterministic in (scale, seed). Children of applications are generated lazily. */
export function generateDataset(options: GenerateOptions = {}): Dataset {
  const scaleName = options.scale ?? 'tiny';
  const scale = scales[scaleName];
  const seed = options.seed ?? 1;
  const rng = new Rng(seed);
  const ds = new Dataset(seed, scaleName, generateChildren);

  const addUser = (role: UserRole): SimUser => {
    const id = ds.users.size + 1;
    const first = rng.pick(firstNames);
    const last = rng.pick(lastNames);
    const email = `${slug(first)}.${slug(last)}.${id}@example.org`;
    const user: SimUser = {
      id,
      first_name: first,
      last_name: last,
      email,
      role,
      ref: { first_name: first, last_name: last, email, id },
    };
    ds.users.set(id, user);
    ({ admin: ds.admins, reviewer: ds.reviewers, applicant: ds.applicants })[role].push(user);
    return user;
  };
  for (let i = 0; i < scale.admins; i++) addUser('admin');
  for (let i = 0; i < scale.reviewers; i++) addUser('reviewer');
  for (let i = 0; i < Math.max(10, Math.round(scale.applications * 0.7)); i++) addUser('applicant');

  ['In Review', 'Shortlisted', 'Approved', 'Declined', 'Needs Info', "Applicant's Choice"].forEach((name, i) =>
    ds.statuses.push({ id: i + 1, name }),
  );
  ['Paid', 'Scheduled', 'Pending approval'].forEach((name, i) => ds.paymentStatuses.push({ id: i + 1, name }));

  addCustomFields(ds);
  addPrograms(ds, rng, scale.programs);
  generateOrganizations(ds, rng, scale.organizations);
  addApplications(ds, rng, scale.applications);
  generateFinance(ds, rng, scale.funds);
  generateAssignments(ds, rng);
  generateActivity(ds, rng, scale.applications);
  generateLog(ds, rng, Math.max(20, Math.round(scale.applications / 2)));
  generateReports(ds, rng, scale.reports);
  return ds;
}

function addCustomFields(ds: Dataset): void {
  const defs: [string, string, number, string[]][] = [
    ['Budget justification', 'application', 7, []],
    ['Region', 'application', 1, ['North', 'South', 'East', 'West', "Côte d'Ivoire"]],
    ['Project website', 'application', 6, []],
    ['Date of birth', 'applicant', 8, []],
    ['Expertise', 'reviewer', 0, []],
    ['Program code', 'program', 0, []],
    ['Decision rationale', 'decision', 7, []],
    ['Contact email', 'applicant', 2, []],
    ['Headcount', 'application', 4, []],
  ];
  defs.forEach(([name, target, type, choices], i) =>
    ds.customFields.insert({
      id: i + 1,
      admin_only: i % 3 === 0,
      choices,
      default: type === 1 ? (choices[0] ?? '') : '',
      name,
      readonly: false,
      required: i % 2 === 0,
      show_in_registration: target === 'applicant',
      target,
      type,
    }),
  );
}

function addPrograms(ds: Dataset, rng: Rng, count: number): void {
  let stageId = 0;
  let taskId = 0;
  for (let p = 1; p <= count; p++) {
    const name =
      p === 2 ? 'Founders\' "Impact" Grant 🌍' : `${rng.pick(titleWords)} ${rng.pick(titleWords)} Program ${p}`;
    const stages = [];
    for (let s = 0; s < rng.int(3, 4); s++) {
      const def = { id: ++stageId, title: STAGE_TITLES[s] ?? `Stage ${s + 1}`, programId: p, order: s };
      ds.stageDefs.set(def.id, def);
      stages.push(def);
      const tasks = [];
      for (let t = 0; t < rng.int(1, 2); t++) {
        const type = rng.pick(TASK_TYPES);
        tasks.push({ id: ++taskId, name: `${def.title} task ${t + 1}`, type, stageId: def.id });
      }
      ds.taskDefsByStage.set(def.id, tasks);
    }
    ds.stagesByProgram.set(p, stages);
    const openMs = EPOCH_MS - rng.int(10, 90) * DAY_MS;
    const applicantType = rng.pick([0, 1, 2, 2]);
    ds.programs.insert({
      id: p,
      allow_collaborators: rng.chance(0.5),
      close_datetime: timestamp(rng, openMs + 365 * DAY_MS),
      open_datetime: timestamp(rng, openMs),
      categories: rng.pick(['Education', 'Health', 'Arts & Culture', 'Environment']),
      custom_fields: [{ id: 6, name: 'Program code', value: `PRG-${String(p).padStart(3, '0')}` }],
      access: true,
      active: p % 7 !== 0,
      applicant_type: applicantType,
      application_prefix: `P${p}`,
      application_title_help: 'Give your project a short title',
      collaborator_domains: p % 2 ? ['example.org'] : [],
      collaborator_invite_instructions: '',
      custom_value: '',
      description: `<p>Funding for ${name}</p>`,
      edit_after_submit: rng.chance(0.3),
      enable_application_limit: false,
      grace_period: rng.int(0, 30),
      hide_value_from_applicants: false,
      identifier: `prog-${p}`,
      include_deadline_in_reminders: true,
      limit_collaborator_domains: p % 2 === 1,
      listing_url: `https://grants.example.org/prog/${p}/`,
      max_applications: 0,
      max_value: rng.int(10, 100) * 1000,
      name,
      no_application_dates: false,
      no_close_date: p % 5 === 0,
      number_of_awards: rng.int(5, 50),
      publicity: true,
      randomize_application_id: false,
      require_application_title: true,
      score_format: rng.pick([0, 1, 2]),
      launched: true,
      summary: 'A program summary with “smart quotes”.',
      value: rng.int(1, 10) * 1000,
      value_type: rng.pick([0, 2, 3, 4]),
      // Money fields are filled by generateFinance.
      total: 0,
      allocated: 0,
      paid: 0,
      balance: 0,
      funding_sources: [],
      awards_made: 0,
    });
  }
}

const STATES = [0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 3, 4] as const;
/** Application labels (names, as the service sends them), awkward ones included. */
const APPLICATION_LABELS = ['Priority', 'Follow up', 'Board review', "Côte d'Ivoire partner", 'Late "but" ok\tnoted'];

export function addApplications(ds: Dataset, rng: Rng, count: number): void {
  const programs = ds.programs.rows;
  const orgs = ds.organizations.rows;
  const appFields = ds.customFields.rows.filter((f) => f['target'] === 'application');
  for (let i = 0; i < count; i++) {
    const id = ds.applications.maxId() + 1;
    const program = rng.pick(programs);
    const pid = program['id'] as number;
    const stages = ds.stagesByProgram.get(pid) ?? [];
    const stageIndex = rng.int(0, stages.length - 1);
    const stage = stages[stageIndex];
    const createdMs = EPOCH_MS + rng.int(0, 300) * DAY_MS + rng.int(0, 86_399) * 1000;
    const updatedMs = createdMs + rng.int(0, 60) * DAY_MS + rng.int(0, 86_399) * 1000;
    const withOrg = program['applicant_type'] !== 0 && orgs.length > 0 && rng.chance(0.6);
    const org = withOrg ? rng.pick(orgs) : null;
    const title = rng.chance(0.05)
      ? rng.pick(awkwardStrings)
      : `${rng.pick(titleWords)} ${rng.pick(titleWords)} #${id}`;
    const collaborators = program['allow_collaborators']
      ? rng.sample(ds.applicants, rng.int(0, 2)).map((u) => u.ref)
      : [];
    const scored = rng.chance(0.7);
    // Fields the service sends and spec 2.3 omits, drawn apart so the rest of the site stays as it was.
    const extra = new Rng(deriveSeed(ds.seed, id, 11));
    const status = extra.pick(ds.statuses);
    ds.applications.insert({
      applicant: rng.pick(ds.applicants).ref,
      average_score: scored ? rng.int(0, 1000) / 10 : 0,
      collaborators,
      created_at: timestamp(rng, createdMs),
      current_stage: { title: stage?.title ?? '', id: stage?.id ?? 0 },
      custom_fields: appFields.map((f) => ({ id: f['id'] ?? 0, name: f['name'] ?? '', value: customValue(rng, f) })),
      last_submitted_at: rng.chance(0.8) ? timestamp(rng, updatedMs - 3_600_000) : '',
      decision: null,
      organization: org ? { id: org['id'] ?? 0, name: org['name'] ?? '' } : null,
      overall_score: scored ? rng.int(0, 100) : 0,
      program: { id: pid, name: program['name'] ?? '' },
      reference_id: `${String(program['application_prefix'])}-${String(id).padStart(6, '0')}`,
      state: rng.pick(STATES),
      title,
      updated_at: timestamp(rng, updatedMs),
      weighted_score: scored ? rng.int(0, 10_000) / 100 : 0,
      labels: extra.sample(APPLICATION_LABELS, extra.int(0, 2)),
      status: { id: status['id'] ?? 0, name: status['name'] ?? '' },
      id,
    });
    ds.appMeta.set(id, { createdMs, programId: pid, stageIndex });
  }
}

function customValue(rng: Rng, field: JsonObject): string {
  switch (field['type']) {
    case 1:
      return rng.pick((field['choices'] as string[] | undefined) ?? ['']);
    case 4:
      return String(rng.int(1, 500));
    case 6:
      return `https://project-${rng.int(1, 999)}.example.org`;
    default:
      return rng.chance(0.2) ? rng.pick(awkwardStrings) : `Value ${rng.int(1, 99)}`;
  }
}
