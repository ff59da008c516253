import type { ColumnDef, TableDef } from '../normalize/table-def.ts';

/**
 * The bookkeeping tables that `sql/*.sql` creates, described for the data dictionary (operators query them, and
 * must know one of them holds secrets). Not part of the catalog: migrations create them, not `createTableSql`.
 * A test checks these columns against the SQL files.
 */
const text = (name: string, description: string, notNull = true): ColumnDef => ({
  name,
  type: 'text',
  notNull,
  description,
});
const at = (name: string, description: string, notNull = true): ColumnDef => ({
  name,
  type: 'timestamptz',
  notNull,
  description,
});
const json = (name: string, description: string, notNull = false): ColumnDef => ({
  name,
  type: 'json',
  notNull,
  description,
});

export const bookkeepingTables: readonly TableDef[] = [
  {
    name: '_grantflow_runs',
    kind: 'bookkeeping',
    description:
      'One row per sync. The next sync resumes, under the same run id, a run that did not finish: still `running` (killed), `interrupted` (stopped by a signal), `paused` (its time budget ran out), or `failed` with `resumable` in its summary (credentials rejected mid-run).',
    primaryKey: ['run_id'],
    columns: [
      text('run_id', 'Run id (UTC start time and a random suffix); also the `_run_id` of the rows it wrote.'),
      at('started_at', 'When the run started (UTC).'),
      at('finished_at', 'When it finished (UTC); NULL while running or when it was killed.', false),
      text(
        'status',
        '`running`, `succeeded`, `partial` (a stream, an error-level data test, a model or the snapshots failed; the reason in `summary`), `interrupted`, `paused` (`--max-duration` ran out; the next sync continues it) or `failed`.',
      ),
      json(
        'summary',
        "The site it syncs (from the start: a sync of another site into this warehouse is refused), and when the run ends: per-stream status and counts (pages, records, rows, quarantined, untyped values, timestamps without a zone, duplicates, deleted and deleted with them, parents), the site time zone those timestamps were read in, the client's requests by status, retries and token refreshes, the models and data tests, and the duration.",
      ),
    ],
  },
  {
    name: '_grantflow_streams',
    kind: 'bookkeeping',
    description: "Each stream's state, committed in the same transaction as the stream's rows.",
    primaryKey: ['stream'],
    columns: [
      text('stream', 'Stream name.'),
      json('state', 'Last complete run and time, last full refresh (fan-out streams), highest id (append-only logs).'),
      at('updated_at', 'When the state was last written (UTC).'),
      text('run_id', 'Run that wrote it.', false),
    ],
  },
  {
    name: '_grantflow_parents',
    kind: 'bookkeeping',
    description:
      'Per fan-out stream, the parents (applications, organizations) whose children were read, with the marker (an application’s `updated_at` and a hash of its record; an organization’s record) they were read at: an unchanged marker skips the parent next run.',
    primaryKey: ['stream', 'parent_id'],
    columns: [
      text('stream', 'Fan-out stream name.'),
      text('parent_id', 'Parent id, as text.'),
      text('marker', 'The parent’s change marker when its children were read.', false),
      at('synced_at', 'When they were read (UTC).'),
      text('run_id', 'Run that read them.', false),
    ],
  },
  {
    name: '_grantflow_credentials',
    kind: 'bookkeeping',
    description:
      'SECRETS: the rotated credential pair per site when credentials come from GRANTFLOW_* variables (read-only CI secrets). With GRANTFLOW_STATE_KEY set the client secret and both tokens are stored encrypted (`sealed:v1:...`, AES-256-GCM; docs/credentials.md); without it in plain text: restrict access to this table.',
    primaryKey: ['site'],
    columns: [
      text('site', 'Site root URL.'),
      text('client_id', 'Client id.'),
      text('client_secret', 'Client secret.'),
      text('access_token', 'Current access token.'),
      text('refresh_token', 'Current refresh token (each refresh rotates it; the previous one stops working).'),
      at('updated_at', 'When the pair was saved (UTC).'),
      text(
        'seeded_from',
        'SHA-256 (hex) of the GRANTFLOW_REFRESH_TOKEN this pair was rotated from: variables holding another refresh token are a new set and win. NULL for pairs stored before 003.',
        false,
      ),
    ],
  },
  {
    name: '_grantflow_catalog',
    kind: 'bookkeeping',
    description: 'Every table catalog a version of grantflow applied, so schema changes are visible.',
    primaryKey: ['fingerprint'],
    columns: [
      text('fingerprint', 'Hash of the catalog (tables, columns, types, keys).'),
      at('applied_at', 'When it was first applied (UTC).'),
      json('tables', 'The catalog: every table with its columns.', true),
    ],
  },
  {
    name: '_grantflow_unknown_fields',
    kind: 'bookkeeping',
    description:
      'The drift catalog: every source field path records of a stream held that its definition does not map (`unmapped`; promotable with the `promote` setting), and every mapped path seen holding another JSON type (`retyped`). Written at the end of each sync; `grantflow status` lists it newest first.',
    primaryKey: ['stream', 'path'],
    columns: [
      text('stream', 'Stream whose records held the path.'),
      text(
        'path',
        'Dotted member path from the record root; `[]` marks the items of an array (`collaborators[].nickname`).',
      ),
      text('kind', '`unmapped` (outside the definition) or `retyped` (a mapped path holding another JSON type).'),
      text('json_types', 'JSON types seen at the path, sorted and comma-separated (`null,number`).'),
      {
        name: 'records_seen',
        type: 'bigint',
        notNull: true,
        description: 'Records that held the path, over every run.',
      },
      {
        ...text('example', 'One value seen (the first), as JSON text cut at 200 characters, secrets redacted.', false),
        // An unknown field counts as free text until it is promoted to a declared column.
        personal: 'free_text',
      },
      text('first_run_id', 'Run that first saw the path.'),
      text('last_run_id', 'Run that last saw the path.'),
      at('first_seen_at', 'When the path was first seen (UTC).'),
      at('last_seen_at', 'When the path was last seen (UTC).'),
    ],
  },
  {
    name: '_grantflow_pseudonyms',
    kind: 'bookkeeping',
    description:
      'The keyed token (HMAC-SHA256 with GRANTFLOW_PSEUDONYM_KEY, which is never stored) of each personal identifier the tables hold, as snapshots under personalData pseudonymize and the deidentified views show it (docs/privacy.md). Refreshed by each sync run with the key; values no table holds any longer are removed. It holds the identifiers themselves: grant it to no reader.',
    primaryKey: ['value'],
    columns: [
      {
        ...text(
          'value',
          'The identifier: `user:<id>` for a user id, `text:<value>` for a name, email, phone, address or tax number; `check:` for the row that tells whether the key changed.',
        ),
        personal: 'identifier',
      },
      text('token', 'Its token: `pz_` and 32 hex digits of the HMAC.'),
    ],
  },
];
