import { ANY } from '../normalize/field-kinds.ts';
import { col, enumCol, id } from './columns.ts';
import { defineStream } from './stream-definition.ts';

export const customFields = defineStream({
  name: 'custom_fields',
  path: '/api/customfields/',
  description: 'Custom field definitions (spec 4.4.1; needs `Custom fields`).',
  skipOn: { 403: 'needs the `Custom fields` permission' },
  table: {
    name: 'custom_fields',
    kind: 'entity',
    description:
      'Custom field definitions (GET /api/customfields/), plus fields known only from values (ref-only rows).',
    primaryKey: ['id'],
    columns: [
      id('Custom field id.'),
      col('name', 'text', 'Display name.'),
      enumCol('type', 'custom_field_type', 'Field type (enum custom_field_type).'),
      enumCol('target', 'custom_field_target', 'What the field is attached to (enum custom_field_target).', 'text'),
      col('choices', 'json', 'Options of dropdown fields (JSON array).'),
      col('default_value', 'text', 'Default value (API field `default`).', { source: 'default' }),
      col('admin_only', 'boolean', 'Visible only to administrators.'),
      col('readonly', 'boolean', 'Value cannot be changed.'),
      col('required', 'boolean', 'Value must be filled in.'),
      col('show_in_registration', 'boolean', 'Displayed during registration.'),
    ],
  },
  // Text in the spec, but a default of any kind is kept (as JSON text) and was never reported as retyped.
  reads: { default: ANY },
});
