import { contentMarker } from '../extract/stream-def.ts';
import { sourceFields } from '../normalize/source-fields.ts';
import { eligibilityStream } from '../normalize/streams/organizations.ts';
import * as tables from '../normalize/tables/organizations.ts';
import { defineStream } from './stream-definition.ts';

export const eligibility = defineStream({
  name: 'eligibility',
  path: '/api/organizations/{parent}/eligibility/',
  description: 'Eligibility of each organization (spec 4.10.1); 404 when not enabled or not started.',
  keyOf: () => 'eligibility',
  parent: { stream: 'organizations', marker: contentMarker },
  shape: 'object',
  skipOn: { 403: 'needs an organization administrator or `Assume role`' },
  notFoundMeansEmpty: true,
  table: tables.eligibility,
  otherTables: [tables.eligibilityResponses],
  mapping: eligibilityStream,
  fields: sourceFields.eligibility,
});
