import { reportFileMarker, sameGeneration } from '../report-file.ts';
import type { StreamDef } from '../stream-def.ts';

export const reportDownloads: StreamDef = {
  name: 'report_downloads',
  path: '/api/reports/{parent}/download/',
  description: 'The file of each generated report (spec 4.12.6), read again only when its last_generated_at moves.',
  keyOf: () => 'file',
  parent: { stream: 'reports', marker: reportFileMarker, unchanged: sameGeneration, idleWithoutMarker: true },
  shape: 'download',
  mode: 'scan',
  refreshOnlyWhenAsked: true,
  skipOn: { 403: 'needs the `Reports` permission' },
};
