import { join } from 'node:path';
import { PersonalColumns } from '../privacy/personal-columns.ts';
import { portfolioSchema, siteCredentialVariable, siteSchema, type PortfolioSite } from '../config/portfolio.ts';
import { urlPattern, type Settings } from '../config/settings.ts';
import { envKeys } from '../credentials/index.ts';
import { openConfiguredWarehouse } from '../warehouse/index.ts';
import type { LockWait, Warehouse } from '../warehouse/types.ts';
import { ConfigError, ExitCode, firstLine, GrantflowError, LockedError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { redact } from '../util/redact.ts';
import { rebuildPortfolioViews, type PortfolioViews } from './portfolio-views.ts';
import { newRunId } from './run-id.ts';
import { runSync, SyncStoppedError, type AfterSync, type SyncResult } from './sync.ts';

export interface PortfolioRequest {
  readonly settings: Settings;
  /** Every site the pipeline file lists: the views cover them all, also when `run` is some of them. */
  readonly sites: readonly PortfolioSite[];
  /** The sites to sync now (`--sites`). */
  readonly run: readonly PortfolioSite[];
  readonly logger: Logger;
  readonly env?: NodeJS.ProcessEnv;
  readonly signal?: AbortSignal;
  readonly loadLockWait?: LockWait;
  /** Runs after each site's sync (see SyncRequest.afterSync), with that site's settings. */
  readonly afterSync?: AfterSync;
}

/** How one site's sync ended: its result when it ran (also when it stopped), and why it failed when it did. */
export interface SiteOutcome {
  readonly site: PortfolioSite;
  readonly result: SyncResult | null;
  /** One line, never a secret; null when the sync ran to its end (succeeded or partial). */
  readonly error: string | null;
  readonly exitCode: number;
}

export interface PortfolioResult {
  readonly sites: readonly SiteOutcome[];
  /** The portfolio's views, and its snapshot, as summary lines. */
  readonly lines: readonly string[];
  /** The worst of the sites' exit codes, or 1 when the views could not be rebuilt. */
  readonly exitCode: number;
  readonly durationMs: number;
}

/**
 * A portfolio's sync: every site synced at once, each by the one-site sync into its own schema, with its own client
 * (rate limiter, token rotation), snapshot folder and raw pages; a site that fails (credentials rejected, site down)
 * fails alone. Then the `portfolio` views are rebuilt over every listed site and, when every site of this run
 * succeeded, snapshotted. One DuckDB file allows one writer process: the sites share this process's instance of it,
 * which the portfolio's own warehouse, opened first and held throughout, keeps open for writing.
 */
export async function runPortfolio(request: PortfolioRequest): Promise<PortfolioResult> {
  const { settings, logger } = request;
  const started = Date.now();
  const env = request.env ?? process.env;
  // Every site's credentials are read before anything is written: a missing variable is the operator's to fix.
  const environments = new Map(request.run.map((s) => [s.name, siteEnvironment(env, s)]));
  if (settings.snapshot) {
    const { checkSnapshotTarget } = await import('../snapshot/index.ts');
    await checkSnapshotTarget(siteFolder(settings.snapshots, portfolioSchema), settings);
  }
  const portfolio = await openConfiguredWarehouse({ ...settings, siteSchema: portfolioSchema }, logger, {
    ...(request.signal ? { stop: request.signal } : {}),
  });
  const owner = `grantflow sync --pipeline (portfolio, pid ${process.pid})`;
  // DuckDB: one writer process per file, so the portfolio holds the file for the whole run. Postgres: each site's
  // schema has its own lock, and the views' lock is taken only to rebuild them, waiting for another run's rebuild,
  // so one CI job per site can sync into the same database at once (examples/github-actions-portfolio.yml).
  const holdsWholeRun = portfolio.lockCoversDatabase;
  try {
    if (holdsWholeRun) await portfolio.acquireLock(owner);
    const outcomes = await Promise.all(
      request.run.map((site) => syncSite(request, site, environments.get(site.name) ?? env)),
    );
    const lines: string[] = [];
    let exitCode = Math.max(ExitCode.ok, ...outcomes.map((o) => o.exitCode));
    if (request.signal?.aborted) {
      lines.push('portfolio views: not rebuilt (stopped)');
    } else {
      try {
        if (!holdsWholeRun) await lockWaiting(portfolio, owner, request.signal);
        const views = await rebuildPortfolioViews(portfolio, request.sites);
        lines.push(
          `portfolio views: ${views.views.length} in schema ${portfolioSchema} over ${request.sites.length} sites`,
        );
        if (settings.snapshot) lines.push(await snapshotViews(portfolio, views, outcomes, settings, request));
      } catch (e) {
        lines.push(`portfolio views: FAILED: ${redact(firstLine(e))}`);
        exitCode = Math.max(exitCode, e instanceof GrantflowError ? e.exitCode : ExitCode.runFailed);
      }
    }
    return { sites: outcomes, lines, exitCode, durationMs: Date.now() - started };
  } finally {
    await portfolio.close();
  }
}

/** How long a run waits for another's rebuild of the portfolio views (a rebuild takes seconds). */
const viewsLockWaitMs = 10 * 60_000;

/** The portfolio's lock, waiting while another run holds it (it rebuilds the views), up to viewsLockWaitMs. */
async function lockWaiting(portfolio: Warehouse, owner: string, signal: AbortSignal | undefined): Promise<void> {
  const until = Date.now() + viewsLockWaitMs;
  for (;;) {
    try {
      await portfolio.acquireLock(owner);
      return;
    } catch (e) {
      if (!(e instanceof LockedError) || Date.now() > until || signal?.aborted) throw e;
      await new Promise((done) => setTimeout(done, 1_000));
    }
  }
}

/** One site's sync, its failure caught: the other sites go on. */
async function syncSite(
  request: PortfolioRequest,
  site: PortfolioSite,
  env: NodeJS.ProcessEnv | ConfigError,
): Promise<SiteOutcome> {
  const logger = request.logger.child({ site: site.name });
  try {
    if (env instanceof ConfigError) throw env;
    const result = await runSync({
      settings: siteSettings(request.settings, site),
      logger,
      env,
      tty: false,
      ...(request.signal ? { signal: request.signal } : {}),
      ...(request.loadLockWait ? { loadLockWait: request.loadLockWait } : {}),
      ...(request.afterSync ? { afterSync: request.afterSync } : {}),
    });
    return { site, result, error: null, exitCode: result.exitCode };
  } catch (e) {
    const error = redact(firstLine(e));
    const exitCode = e instanceof GrantflowError ? e.exitCode : ExitCode.runFailed;
    if (!(e instanceof GrantflowError)) logger.error({ err: e }, 'site sync failed unexpectedly');
    else logger.error({ exitCode }, error);
    return { site, result: e instanceof SyncStoppedError ? e.result : null, error, exitCode };
  }
}

/**
 * A site's settings: its address and credentials, its schema (both engines), and a folder of its own under the
 * snapshot, raw page and report locations.
 */
export function siteSettings(settings: Settings, site: PortfolioSite): Settings & { readonly siteSchema: string } {
  return {
    ...settings,
    site: site.site,
    credentials: site.credentials,
    schema: siteSchema(site.name),
    siteSchema: siteSchema(site.name),
    snapshots: siteFolder(settings.snapshots, site.name),
    rawDir: join(settings.rawDir, site.name),
    ...(settings.report ? { report: join(settings.report, site.name) } : {}),
  };
}

/** `<location>/<name>`, for a folder or an s3:// prefix alike. */
export function siteFolder(location: string, name: string): string {
  return urlPattern.test(location) ? `${location.replace(/\/+$/, '')}/${name}` : join(location, name);
}

/**
 * The environment a site's sync reads its credentials from: its file's (no credential variable), or the site's own
 * variables (GRANTFLOW_NORTH_CLIENT_ID...) under the names the one-site sync reads. Returned as a ConfigError when
 * they are missing or incomplete, for that site alone to fail with.
 */
export function siteEnvironment(env: NodeJS.ProcessEnv, site: PortfolioSite): NodeJS.ProcessEnv | ConfigError {
  const out = { ...env };
  for (const variable of Object.values(envKeys)) delete out[variable];
  if (site.credentials) return out;
  const own = Object.keys(envKeys).map((field) => siteCredentialVariable(site.name, field));
  const missing = own.filter((v) => !env[v]);
  if (missing.length === own.length)
    return new ConfigError(
      `no credentials for site ${site.name}: give "credentials" in its entry of the pipeline file or set ${own.join(', ')}`,
    );
  if (missing.length > 0)
    return new ConfigError(
      `credentials of site ${site.name} from the environment need all four variables; missing: ${missing.join(', ')}`,
    );
  for (const [field, variable] of Object.entries(envKeys))
    out[variable] = env[siteCredentialVariable(site.name, field)];
  return out;
}

/** The views' snapshot, written only when every site of the run succeeded: readers never get a partial portfolio. */
async function snapshotViews(
  portfolio: Warehouse,
  views: PortfolioViews,
  outcomes: readonly SiteOutcome[],
  settings: Settings,
  request: PortfolioRequest,
): Promise<string> {
  const failed = outcomes.filter((o) => o.exitCode !== ExitCode.ok).map((o) => o.site.name);
  if (failed.length > 0)
    return `portfolio snapshot: not written (${failed.join(', ')} did not succeed; the last good one stays current)`;
  const dir = siteFolder(settings.snapshots, portfolioSchema);
  const { writeSnapshots } = await import('../snapshot/index.ts');
  const runId = newRunId();
  const snap = await writeSnapshots(portfolio, {
    dir,
    runId,
    retain: settings.retainSnapshots,
    tables: views.views,
    viewKeys: views.keys,
    logger: request.logger,
    ...(request.signal ? { signal: request.signal } : {}),
    command: `grantflow sync --pipeline (portfolio, run ${runId})`,
    s3ForcePathStyle: settings.s3ForcePathStyle,
    raw: settings.snapshotRaw,
    // Each site keeps its own tokens, none the views over them all: their identifiers are left out instead.
    ...(settings.personalData === 'keep'
      ? {}
      : { personalData: { mode: 'drop' as const, columns: PersonalColumns.ofPortfolio(settings.modelsDir) } }),
  });
  return `portfolio snapshot: ${snap.tables.length} views written to ${dir} in ${(snap.durationMs / 1000).toFixed(1)} s`;
}
