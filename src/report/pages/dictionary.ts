import type { TableDef } from '../../normalize/table-def.ts';
import {
  columnKeyText,
  columnTypeText,
  dictionaryColumns,
  dictionarySections,
  enumText,
  personalDataText,
} from '../../docs/data-dictionary.ts';
import { loadModels, modelTableDefs } from '../../models/model-files.ts';
import { esc, page, section, table, type PageContext } from '../html.ts';
import { lineage } from '../../models/lineage.ts';

const anchor = (name: string): string => `t-${name}`;
const link = (name: string): string => `<a href="#${esc(anchor(name))}"><code>${esc(name)}</code></a>`;
const links = (names: readonly string[]): string => names.map(link).join(', ');

/**
 * Every table and model with its columns, from the same source as docs/data-dictionary.md (the catalog, the model
 * headers and the bookkeeping tables), and each model's lineage read from its SQL.
 */
export function dictionaryPage(ctx: PageContext): string {
  const models = loadModels();
  const { core, models: modelDefs, bookkeeping } = dictionarySections(undefined, modelTableDefs(models));
  const all = [...core, ...modelDefs, ...bookkeeping];
  const { reads, readBy } = lineage(models, new Set(all.map((t) => t.name)));
  const entry = (t: TableDef): string => {
    const facts = [`Kind: ${esc(t.kind)}.`];
    if (t.primaryKey.length > 0) facts.push(`Primary key: (${esc(t.primaryKey.join(', '))}).`);
    const lineageHtml =
      t.kind === 'model'
        ? `<dl class="lineage" data-lineage="${esc(t.name)}"><dt>Reads</dt><dd>${links(reads.get(t.name) ?? []) || 'nothing'}</dd>` +
          `<dt>Source</dt><dd><code>models/${esc(t.name)}.sql</code></dd>` +
          ((readBy.get(t.name) ?? []).length > 0 ? `<dt>Read by</dt><dd>${links(readBy.get(t.name) ?? [])}</dd>` : '') +
          '</dl>'
        : (readBy.get(t.name) ?? []).length > 0
          ? `<dl class="lineage"><dt>Read by models</dt><dd>${links(readBy.get(t.name) ?? [])}</dd></dl>`
          : '';
    const includes =
      t.includes && t.includes.length > 0
        ? `<dl class="includes" data-includes="${esc(t.name)}"><dt>Includes</dt>${t.includes.map((r) => `<dd>${esc(r)}</dd>`).join('')}</dl>`
        : '';
    return section(
      anchor(t.name),
      t.name,
      `${esc(t.description)} ${facts.join(' ')}`,
      includes +
        lineageHtml +
        table({
          id: `dictionary-${t.name}`,
          caption: `Columns of ${t.name}`,
          columns: [
            { label: 'Column' },
            { label: 'Type (DuckDB / Postgres)' },
            { label: 'Key' },
            { label: 'References' },
            { label: 'Personal data' },
            { label: 'Description' },
          ],
          rows: dictionaryColumns(t).map((c) => [
            { html: `<code>${esc(c.name)}</code>` },
            columnTypeText(c),
            columnKeyText(t, c),
            c.references ? `${c.references.table}.${c.references.column}` : '',
            personalDataText(c),
            `${c.description}${c.enum ? ` (${enumText(c.enum).replace(/`/g, '')})` : ''}`,
          ]),
        }),
    );
  };
  const toc = (title: string, list: readonly TableDef[]): string =>
    `<h2>${esc(title)}</h2><ul class="toc">${list.map((t) => `<li>${link(t.name)}</li>`).join('')}</ul>`;
  const body = [
    `<section class="block" aria-label="Contents">${toc('Core tables', core)}${toc('Models', modelDefs)}${toc('Bookkeeping', bookkeeping)}</section>`,
    '<h2>Models</h2>',
    ...modelDefs.map(entry),
    '<h2>Core tables</h2>',
    ...core.map(entry),
    '<h2>Bookkeeping</h2>',
    ...bookkeeping.map(entry),
  ];
  return page(
    'dictionary.html',
    'Dictionary',
    'Every table and model of the warehouse with its columns, as in <code>docs/data-dictionary.md</code>, and for ' +
      'each model the tables it reads (found in its SQL). Entity, dimension and bridge rows also carry the metadata ' +
      'columns; analysts usually filter <code>WHERE _deleted_at IS NULL</code>. Personal data: an identifier names a ' +
      'person, free text is what a person typed (<code>docs/privacy.md</code>).',
    body.join('\n'),
    ctx,
  );
}
