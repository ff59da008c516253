import type { Settings } from '../config/settings.ts';
import type { SyncResult } from '../pipeline/sync-run.ts';
import type { Warehouse } from '../warehouse/types.ts';
import { ExitCode, firstLine } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { readPseudonymKey } from '../privacy/pseudonym-key.ts';
import { PersonalColumns } from '../privacy/personal-columns.ts';

/**
 * The `report` setting, run by the CLI as a sync's AfterSync: after a sync that succeeded (and was recorded, so Data health shows it), the report is
 * written from the same warehouse. One that cannot be written is said in the summary and makes the exit code 1, so a
 * scheduler notices; the run itself stays recorded as succeeded, since its data is loaded and tested, and
 * `grantflow report` writes the report again.
 */
export async function reportAfterSync(
  result: SyncResult,
  warehouse: Warehouse,
  settings: Pick<Settings, 'report' | 'personalData' | 'modelsDir'>,
  logger: Logger,
): Promise<SyncResult> {
  if (!settings.report || result.status !== 'succeeded') return result;
  let line: string;
  let exitCode = result.exitCode;
  try {
    // Loaded only here: the charting libraries are large, and a sync without a report needs none of them.
    const { writeReport } = await import('./write-report.ts');
    const report = await writeReport(warehouse, settings.report, {
      holdsRunLock: true,
      // The sync checked the key at its start (keyForMode): read again here, as it is never kept.
      personalData: {
        mode: settings.personalData,
        key: readPseudonymKey(),
        columns: PersonalColumns.of(undefined, settings.modelsDir),
      },
    });
    line = `report: written to ${report.index} in ${(report.durationMs / 1000).toFixed(1)} s`;
  } catch (e) {
    logger.error({ err: e }, 'the report could not be written');
    line = `report: FAILED: ${firstLine(e)} (the run succeeded; \`grantflow report\` writes it)`;
    exitCode = ExitCode.runFailed;
  }
  const after = result.after
    ? { ...result.after, lines: [...result.after.lines, line] }
    : { failed: false, stopped: false, lines: [line], summary: {} };
  return { ...result, after, exitCode };
}
