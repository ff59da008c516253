import { formatTime } from './format.ts';

/**
 * The report's HTML: one layout for every page, accessible tables, and figures pairing a chart with its numbers.
 * Every value from the warehouse goes through `esc` (a program may be named `<script>`); the pages carry no script,
 * and their Content-Security-Policy forbids loading anything, so a page opened from a file makes no request.
 */

export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export interface PageLink {
  readonly file: string;
  readonly title: string;
}

/** The pages, in the navigation's order. */
export const pages: readonly PageLink[] = [
  { file: 'index.html', title: 'Overview' },
  { file: 'funding.html', title: 'Funding' },
  { file: 'awards.html', title: 'Awards' },
  { file: 'reviews.html', title: 'Reviews' },
  { file: 'pipeline.html', title: 'Pipeline' },
  { file: 'data-health.html', title: 'Data health' },
  { file: 'dictionary.html', title: 'Dictionary' },
];

export interface PageContext {
  readonly site: string | null;
  /** ISO UTC. */
  readonly builtAt: string;
  readonly warehouse: string;
  /** Said at the top of every page: the last run did not succeed, so the figures may be behind. */
  readonly warning: string | null;
}

const style = `
:root{--fg:#111827;--muted:#4b5563;--line:#e5e7eb;--accent:#1d4ed8;--bg:#f9fafb;--warn-bg:#fef3c7;--warn:#92400e;--bad:#b91c1c;--good:#047857}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{background:#fff;border-bottom:1px solid var(--line);padding:12px 24px 0}
.brand{margin:0;font-weight:700;font-size:17px}
.meta{margin:2px 0 8px;color:var(--muted);font-size:13px}
nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:4px}
nav a{display:block;padding:8px 12px;color:var(--accent);text-decoration:none;border-bottom:3px solid transparent}
nav a:hover,nav a:focus{border-bottom-color:#93c5fd}
nav a[aria-current=page]{color:var(--fg);font-weight:600;border-bottom-color:var(--accent)}
main{max-width:1280px;margin:0 auto;padding:8px 24px 48px}
h1{font-size:26px;margin:20px 0 4px}
h2{font-size:19px;margin:0 0 4px}
.lede{color:var(--muted);margin:0 0 16px;max-width:80ch}
section.block{background:#fff;border:1px solid var(--line);border-radius:8px;padding:18px 20px;margin:18px 0}
details{margin-top:12px}
summary{cursor:pointer;color:var(--accent)}
.chart svg{display:block;max-width:100%;height:auto}
.chart svg[data-size=narrow]{display:none}
.numbers{margin-top:16px}
.table-box{overflow-x:auto;max-width:100%}
table{border-collapse:separate;border-spacing:0;font-size:13px}
caption{text-align:left;font-weight:600;padding:0 0 6px;color:var(--muted)}
th,td{padding:4px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
thead th{background:#f3f4f6;font-weight:600}
.table-box tr>:first-child{position:sticky;left:0;background:#fff;box-shadow:inset -1px 0 0 var(--line)}
.table-box thead tr>:first-child{background:#f3f4f6}
th:not(.num),td:not(.num){min-width:8em}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tfoot th,tfoot td{font-weight:700;border-top:2px solid #9ca3af}
@media (max-width:720px){
header{padding:10px 12px 0}
main{padding:4px 12px 32px}
section.block{padding:14px 12px}
.chart svg[data-size=wide]{display:none}
.chart svg[data-size=narrow]{display:block;width:100%;max-width:30rem}
caption>span{display:inline-block;position:sticky;left:0;max-width:calc(100vw - 48px)}
}
.empty{border:1px dashed #9ca3af;border-radius:8px;padding:14px 18px;background:#fff;color:var(--fg)}
.empty strong{display:block;margin-bottom:2px}
.warning{background:var(--warn-bg);color:var(--warn);border:1px solid #fcd34d;border-radius:8px;padding:12px 16px;margin:16px 0}
.tiles{display:grid;grid-template-columns:repeat(auto-fill,minmax(210px,1fr));gap:12px;margin:16px 0}
.tile{background:#fff;border:1px solid var(--line);border-radius:8px;padding:12px 14px}
.tile .label{color:var(--muted);font-size:13px;margin:0}
.tile .value{font-size:22px;font-weight:700;margin:2px 0 0;font-variant-numeric:tabular-nums}
.tile .note{color:var(--muted);font-size:12px;margin:2px 0 0}
.status-succeeded{color:var(--good);font-weight:600}
.status-failed,.status-partial,.status-interrupted,.status-fail,.status-error{color:var(--bad);font-weight:600}
.status-warn{color:var(--warn);font-weight:600}
code{font-size:12px;background:#f3f4f6;padding:1px 4px;border-radius:4px}
dl.lineage{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:8px 0}
dl.lineage dt{font-weight:600}
dl.lineage dd{margin:0}
.toc{columns:3 220px;margin:8px 0 0;padding-left:18px}
footer{color:var(--muted);font-size:12px;text-align:center;padding:16px}
`;

/** A whole page: `body` is the page's HTML below its heading. */
export function page(file: string, title: string, lede: string, body: string, ctx: PageContext): string {
  const nav = pages
    .map((p) => `<li><a href="${p.file}"${p.file === file ? ' aria-current="page"' : ''}>${esc(p.title)}</a></li>`)
    .join('');
  // The build's exact time in the <time> element: freshness ages on Data health count from it.
  const meta = [
    ctx.site ? esc(`site ${ctx.site}`) : null,
    `built <time datetime="${esc(ctx.builtAt)}">${esc(formatTime(ctx.builtAt))}</time>`,
    esc(`from ${ctx.warehouse}`),
  ]
    .filter((x): x is string => x !== null)
    .join(' · ');
  const warning = ctx.warning
    ? `<div class="warning" role="alert" data-warning="last-run">${esc(ctx.warning)} <a href="data-health.html">Data health</a> has the details.</div>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${esc(title)} · grantflow report</title>
<style>${style}</style>
</head>
<body>
<header>
<p class="brand">grantflow report</p>
<p class="meta">${meta}</p>
<nav aria-label="Report pages"><ul>${nav}</ul></nav>
</header>
<main>
<h1>${esc(title)}</h1>
<p class="lede">${lede}</p>
${warning}
${body}
</main>
<footer>Written by grantflow from the warehouse; every chart's numbers are in the table below it.</footer>
</body>
</html>
`;
}

export interface Column {
  readonly label: string;
  readonly numeric?: boolean;
}

/** A cell: text (escaped here), or `{ html }` already escaped by the caller. */
export type Cell = string | { readonly html: string; readonly className?: string };

const cellHtml = (c: Cell): string => (typeof c === 'string' ? esc(c) : c.html);

/**
 * An accessible table: a caption, column headers, the first cell of each row as its row header, and optionally a
 * totals row in `<tfoot>`. `id` names it for the tests (`data-table`). A table wider than the screen scrolls inside
 * its own box (focusable, so a keyboard can scroll it too) with the row headers kept in view, instead of widening the
 * page.
 */
export function table(o: {
  id: string;
  caption: string;
  columns: readonly Column[];
  rows: readonly (readonly Cell[])[];
  foot?: readonly Cell[];
}): string {
  const cls = (i: number): string => (o.columns[i]?.numeric ? ' class="num"' : '');
  const extra = (c: Cell): string => (typeof c !== 'string' && c.className ? ` ${c.className}` : '');
  const td = (c: Cell, i: number): string => {
    const numeric = o.columns[i]?.numeric ? 'num' : '';
    const classes = `${numeric}${extra(c)}`.trim();
    const attr = classes ? ` class="${classes}"` : '';
    return i === 0 ? `<th scope="row"${attr}>${cellHtml(c)}</th>` : `<td${attr}>${cellHtml(c)}</td>`;
  };
  const head = o.columns.map((c, i) => `<th scope="col"${cls(i)}>${esc(c.label)}</th>`).join('');
  const body = o.rows.map((r) => `<tr>${r.map(td).join('')}</tr>`).join('\n');
  const foot = o.foot ? `<tfoot><tr>${o.foot.map(td).join('')}</tr></tfoot>` : '';
  return `<div class="table-box" role="region" tabindex="0" aria-label="${esc(o.caption)}"><table data-table="${esc(o.id)}"><caption><span>${esc(o.caption)}</span></caption><thead><tr>${head}</tr></thead><tbody>
${body}
</tbody>${foot}</table></div>`;
}

/** A section with a heading, an explanation and content. */
export function section(id: string, title: string, lede: string, content: string): string {
  return `<section class="block" id="${esc(id)}" aria-labelledby="${esc(id)}-title">
<h2 id="${esc(id)}-title">${esc(title)}</h2>
${lede ? `<p class="lede">${lede}</p>` : ''}
${content}
</section>`;
}

/**
 * A chart and, below it, the table of its numbers: beside the chart a table of many columns would be cut off, and
 * below it every table gets the page's width.
 */
export function figure(id: string, title: string, lede: string, svg: string, numbers: string): string {
  return section(
    id,
    title,
    lede,
    `<div class="chart" data-chart="${esc(id)}">${svg}</div><div class="numbers">${numbers}</div>`,
  );
}

/** What is missing and why, where a chart or table would be. */
export function empty(id: string, what: string, why: string): string {
  return `<div class="empty" role="status" data-empty="${esc(id)}"><strong>${esc(what)}</strong>${esc(why)}</div>`;
}

/** A row of headline figures. */
export function tiles(items: readonly { label: string; value: string; note?: string }[]): string {
  return `<div class="tiles">${items
    .map(
      (t) =>
        `<div class="tile"><p class="label">${esc(t.label)}</p><p class="value">${esc(t.value)}</p>${t.note ? `<p class="note">${esc(t.note)}</p>` : ''}</div>`,
    )
    .join('')}</div>`;
}
