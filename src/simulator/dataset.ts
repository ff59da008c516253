import type { JsonObject } from '../util/json.ts';
import { Collection } from './collection.ts';
import type { ScaleName } from './scales.ts';

export type UserRole = 'applicant' | 'reviewer' | 'admin';

export interface SimUser {
  readonly id: number;
  readonly first_name: string;
  /** Changes only by a rename (`applyChanges({renamed})`). */
  last_name: string;
  readonly email: string;
  readonly role: UserRole;
  /** The UserRef every record embeds: the same id always carries the same name and email. */
  readonly ref: JsonObject;
}

export interface StageDef {
  readonly id: number;
  readonly title: string;
  readonly programId: number;
  readonly order: number;
}

export interface TaskDef {
  readonly id: number;
  readonly name: string;
  readonly type: number;
  readonly stageId: number;
}

/** Per-application records, generated on first use (so `large` generates fast) and then kept and edited. */
export interface AppChildren {
  readonly stages: JsonObject[];
  readonly tasks: JsonObject[];
  readonly notes: JsonObject[];
}

export interface AppMeta {
  readonly createdMs: number;
  readonly programId: number;
  readonly stageIndex: number;
}

/** Makes an application's children when first asked for (generate-children.ts; handed in by generate.ts). */
export type ChildGenerator = (ds: Dataset, appId: number, meta: AppMeta) => AppChildren;

/** What the download endpoint sends for a report (report-files.ts). */
export interface ReportFile {
  readonly contentType: string;
  readonly body: Buffer;
}

/** The whole site's data. Collections are live: the server reads them and writes change them. */
export class Dataset {
  readonly users = new Map<number, SimUser>();
  readonly applicants: SimUser[] = [];
  readonly reviewers: SimUser[] = [];
  readonly admins: SimUser[] = [];
  readonly stageDefs = new Map<number, StageDef>();
  readonly stagesByProgram = new Map<number, StageDef[]>();
  readonly taskDefsByStage = new Map<number, TaskDef[]>();
  readonly statuses: JsonObject[] = [];
  readonly paymentStatuses: JsonObject[] = [];

  readonly programs = new Collection();
  readonly applications = new Collection();
  readonly organizations = new Collection();
  readonly customFields = new Collection();
  readonly funds = new Collection();
  readonly budgets = new Collection();
  readonly transactions = new Collection();
  readonly awards = new Collection();
  readonly payments = new Collection();
  /** Listed newest first (id descending) by the API. */
  readonly activity = new Collection();
  /** Listed newest first (id descending) by the API. */
  readonly log = new Collection();
  readonly reports = new Collection();
  /** Files a test set for reports' downloads instead of their CSV (another format, say); see report-files.ts. */
  readonly reportFileOverrides = new Map<number, ReportFile>();
  /** No id in the spec: keyed by (application, stage, reviewer) / (application, stage, team). */
  readonly assignments: JsonObject[] = [];
  readonly teamAssignments: JsonObject[] = [];
  /** Per organization id. */
  readonly members = new Map<number, JsonObject[]>();
  readonly teams = new Map<number, JsonObject[]>();
  readonly eligibility = new Map<number, JsonObject>();
  readonly appMeta = new Map<number, AppMeta>();

  /** Bumped by every write, so cached filter results know when they are stale. */
  version = 0;
  private readonly childCache = new Map<number, AppChildren>();
  private noteCounter = 1_000_000_000;
  private teamCounter = 0;

  constructor(
    readonly seed: number,
    readonly scale: ScaleName,
    private readonly generateChildren: ChildGenerator,
  ) {}

  /** Stage records, tasks and notes of an application; undefined when the application does not exist. */
  children(appId: number): AppChildren | undefined {
    const cached = this.childCache.get(appId);
    if (cached) return cached;
    const app = this.applications.get(appId);
    const meta = this.appMeta.get(appId);
    if (!app || !meta) return undefined;
    const made = this.generateChildren(this, appId, meta);
    this.childCache.set(appId, made);
    return made;
  }

  /** Drops an application's children (they are gone with it and never regenerated). */
  forgetChildren(appId: number): void {
    this.childCache.delete(appId);
    this.appMeta.delete(appId);
  }

  /** How many applications have materialised children (for tests and memory checks). */
  get materializedChildren(): number {
    return this.childCache.size;
  }

  nextNoteId(): number {
    return ++this.noteCounter;
  }

  nextTeamId(): number {
    return ++this.teamCounter;
  }

  setTeamCounter(n: number): void {
    this.teamCounter = n;
  }

  adminUser(): SimUser {
    const admin = this.admins[0];
    if (!admin) throw new Error('dataset has no admin');
    return admin;
  }
}

export function ref(row: JsonObject, nameKey: 'name' | 'title' = 'name'): JsonObject {
  return nameKey === 'title'
    ? { title: row['title'] ?? '', id: row['id'] ?? 0 }
    : { id: row['id'] ?? 0, name: row['name'] ?? '' };
}
