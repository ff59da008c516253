import { reportFileMarker, sameGeneration } from '../extract/report-file.ts';
import { sourceFields } from '../normalize/source-fields.ts';
import { reportDownloadsStream } from '../normalize/streams/report-downloads.ts';
import * as tables from '../normalize/tables/report-files.ts';
import { defineStream } from './stream-definition.ts';

export const reportDownloads = defineStream({
  name: 'report_downloads',
  path: '/api/reports/{parent}/download/',
  description: 'The file of each generated report (spec 4.12.6), read again only when its last_generated_at moves.',
  keyOf: () => 'file',
  parent: { stream: 'reports', marker: reportFileMarker, unchanged: sameGeneration, idleWithoutMarker: true },
  shape: 'download',
  refreshOnlyWhenAsked: true,
  skipOn: { 403: 'needs the `Reports` permission' },
  table: tables.reportColumns,
  otherTables: [tables.reportRows],
  mapping: reportDownloadsStream,
  fields: sourceFields.report_downloads,
});
