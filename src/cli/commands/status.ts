import type { Command } from 'commander';
import { loadSettings } from '../../config/load-settings.ts';
import type { SettingKey } from '../../config/settings.ts';
import { tables } from '../../normalize/index.ts';
import { openWarehouse } from '../../warehouse/index.ts';
import { createLogger } from '../../util/logger.ts';
import { runAction } from '../run-action.ts';
import { addSettingOptions, flagsFrom } from '../settings-options.ts';

const keys: readonly SettingKey[] = ['warehouse', 'schema', 'logLevel'];

export function registerStatus(program: Command): void {
  const command = program
    .command('status')
    .description('last runs, per-stream state and row counts of a warehouse (read only)')
    .option('--runs <n>', 'how many runs to list', '10')
    .option('--pipeline <file>', 'pipeline JSON file [env GRANTFLOW_PIPELINE]');
  addSettingOptions(command, keys);
  command.action(
    runAction(async (options: Record<string, unknown>) => {
      const settings = await loadSettings(flagsFrom(options, keys), {
        pipeline: options.pipeline as string | undefined,
      });
      const warehouse = await openWarehouse(settings.warehouse, {
        schema: settings.schema,
        logger: createLogger({ level: settings.logLevel }),
      });
      const out: string[] = [];
      try {
        await warehouse.migrate(tables);
        out.push(`warehouse ${warehouse.description}`, '', 'last runs:');
        for (const r of await warehouse.listRuns(Number(options.runs) || 10)) {
          out.push(
            `  ${r.runId}  ${r.status.padEnd(10)} started ${r.startedAt}${r.finishedAt ? `  finished ${r.finishedAt}` : ''}`,
          );
        }
        out.push('', 'streams:');
        const states = await warehouse.query(
          'SELECT stream, state, updated_at, run_id FROM _grantflow_streams ORDER BY stream',
        );
        for (const s of states)
          out.push(`  ${String(s.stream).padEnd(24)} last complete ${String(s.updated_at)}  run ${String(s.run_id)}`);
        out.push('', 'tables (live rows / soft-deleted):');
        for (const t of tables) {
          const soft = t.kind === 'entity' || t.kind === 'dimension' || t.kind === 'bridge';
          const sql = soft
            ? `SELECT count(*) FILTER (WHERE _deleted_at IS NULL) AS live, count(*) FILTER (WHERE _deleted_at IS NOT NULL) AS gone FROM ${t.name}`
            : `SELECT count(*) AS live, 0 AS gone FROM ${t.name}`;
          const [row] = await warehouse.query(sql);
          out.push(
            `  ${t.name.padEnd(28)} ${String(row?.live ?? 0).padStart(9)} ${String(row?.gone ?? 0).padStart(7)}`,
          );
        }
      } finally {
        await warehouse.close();
      }
      process.stdout.write(out.join('\n') + '\n');
    }),
  );
}
