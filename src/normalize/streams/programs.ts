import { arr, bool, int, json, long, money, obj, optId, reqId, text, ts } from '../coerce.ts';
import type { MappedRow, StreamMapping } from '../mapping.ts';
import { QuarantineError } from '../quarantine.ts';
import { customFieldValues, customFieldValuesScope, namedRef, userRef } from '../refs.ts';
import type { Row } from '../table-def.ts';

export const programsStream: StreamMapping = {
  owns: [
    { table: 'programs', idColumn: 'id' },
    { table: 'program_funding_sources', idColumn: 'program_id', from: { key: 'funding_sources', shape: 'array' } },
    customFieldValuesScope('program'),
  ],
  cascades: [],
  map(r, ctx) {
    const out: MappedRow[] = [];
    const z = ctx.siteTimeZone;
    const id = reqId(r.id, 'id');
    const row: Row = {
      id,
      name: text(r.name),
      identifier: text(r.identifier),
      summary: text(r.summary),
      description: text(r.description),
      categories: text(r.categories),
      active: bool(r.active),
      launched: bool(r.launched),
      access: bool(r.access),
      publicity: bool(r.publicity),
      open_datetime: ts(r.open_datetime, z),
      close_datetime: ts(r.close_datetime, z),
      no_application_dates: bool(r.no_application_dates),
      no_close_date: bool(r.no_close_date),
      grace_period: int(r.grace_period),
      applicant_type: int(r.applicant_type),
      application_prefix: text(r.application_prefix),
      application_title_help: text(r.application_title_help),
      require_application_title: bool(r.require_application_title),
      randomize_application_id: bool(r.randomize_application_id),
      allow_collaborators: bool(r.allow_collaborators),
      collaborator_domains: json(r.collaborator_domains),
      limit_collaborator_domains: bool(r.limit_collaborator_domains),
      collaborator_invite_instructions: text(r.collaborator_invite_instructions),
      edit_after_submit: bool(r.edit_after_submit),
      enable_application_limit: bool(r.enable_application_limit),
      max_applications: int(r.max_applications),
      include_deadline_in_reminders: bool(r.include_deadline_in_reminders),
      listing_url: text(r.listing_url),
      score_format: int(r.score_format),
      value_type: int(r.value_type),
      value: money(r.value),
      max_value: money(r.max_value),
      custom_value: text(r.custom_value),
      hide_value_from_applicants: bool(r.hide_value_from_applicants),
      number_of_awards: int(r.number_of_awards),
      awards_made: int(r.awards_made),
      total: money(r.total),
      allocated: money(r.allocated),
      paid: money(r.paid),
      balance: money(r.balance),
      _raw: JSON.stringify(r),
    };
    out.unshift({ table: 'programs', row, merge: 'replace' });
    for (const x of arr(r.funding_sources)) {
      const fs = obj(x);
      if (fs === null) continue;
      const budgetId = optId(fs.id, 'funding_sources[].id');
      if (budgetId === null) throw new QuarantineError('funding_sources[] entry without id');
      out.push({
        table: 'program_funding_sources',
        row: {
          program_id: id,
          budget_id: budgetId,
          fund_id: namedRef(out, 'funds', fs.fund, 'funding_sources[].fund'),
          balance: money(fs.balance),
          _raw: JSON.stringify(fs),
        },
        merge: 'replace',
      });
    }
    customFieldValues(out, 'program', id, r.custom_fields);
    return out;
  },
};

export const customFieldsStream: StreamMapping = {
  owns: [{ table: 'custom_fields', idColumn: 'id' }],
  cascades: [],
  map(r) {
    const row: Row = {
      id: reqId(r.id, 'id'),
      name: text(r.name),
      type: int(r.type),
      target: text(r.target),
      choices: json(r.choices),
      default_value: text(r.default),
      admin_only: bool(r.admin_only),
      readonly: bool(r.readonly),
      required: bool(r.required),
      show_in_registration: bool(r.show_in_registration),
      _raw: JSON.stringify(r),
    };
    return [{ table: 'custom_fields', row, merge: 'replace' }];
  },
};

export const reportsStream: StreamMapping = {
  owns: [{ table: 'reports', idColumn: 'id' }],
  // A report gone from the list takes its downloaded file's rows with it.
  cascades: ['report_columns', 'report_rows'].map((table) => ({
    table,
    column: 'report_id',
    parentTable: 'reports',
    parentColumn: 'id',
  })),
  map(r, ctx) {
    const out: MappedRow[] = [];
    const z = ctx.siteTimeZone;
    const row: Row = {
      id: reqId(r.id, 'id'),
      name: text(r.name),
      source: int(r.source),
      status: int(r.status),
      program_id: namedRef(out, 'programs', r.program, 'program'),
      created_by_id: userRef(out, r.created_by, 'created_by'),
      created_at: ts(r.created_at, z),
      last_generated_at: ts(r.last_generated_at, z),
      columns: json(r.columns),
      filter: json(r.filter),
      download_link: text(r.download_link),
      report_filename: text(r.report_filename),
      file_size: long(r.file_size),
      job_id: text(r.job_id),
      current_row: int(r.row),
      total_rows: int(r.total_rows),
      last_error_message: text(r.last_error_message),
      _raw: JSON.stringify(r),
    };
    out.unshift({ table: 'reports', row, merge: 'replace' });
    return out;
  },
};
