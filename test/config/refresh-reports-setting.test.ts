import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/load-settings.ts';
import { reportRefreshOption } from '../../src/extract/report-refresh.ts';
import { ConfigError } from '../../src/util/errors.ts';

describe('refreshReports', () => {
  it('is off by default: no report job is asked for', async () => {
    const s = await loadSettings({}, { env: {} });
    expect(s.refreshReports).toEqual([]);
    expect(reportRefreshOption(s)).toEqual({});
  });

  it('takes report ids or all, with a time limit, from the environment', async () => {
    const s = await loadSettings(
      {},
      { env: { GRANTFLOW_REFRESH_REPORTS: '12, 15,all', GRANTFLOW_REFRESH_REPORTS_TIMEOUT: '90' } },
    );
    expect(reportRefreshOption(s)).toEqual({
      refreshReports: { reports: ['12', '15', 'all'], timeoutSeconds: 90 },
    });
  });

  it('refuses what is not a report id, naming the variable', async () => {
    for (const bad of ['twelve', '0', '-3', '1.5']) {
      const error = await loadSettings({}, { env: { GRANTFLOW_REFRESH_REPORTS: bad } }).catch((e: unknown) => e);
      expect(error, bad).toBeInstanceOf(ConfigError);
      expect((error as Error).message, bad).toMatch(
        /GRANTFLOW_REFRESH_REPORTS.*must list report ids \(whole numbers\) or "all"/,
      );
    }
  });
});
