import { createHash } from 'node:crypto';

/**
 * Self-contained HTML pages. Model output is untrusted text: every string that
 * reaches the page goes through `escapeHtml`, and the page carries a strict
 * Content-Security-Policy (no scripts at all, styles only by hash, images only
 * as data: URLs), so even a missed escape could not run code or fetch anything.
 */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/&/gu, '&amp;').replace(/</gu, '&lt;').replace(/>/gu, '&gt;').replace(/"/gu, '&quot;').replace(/'/gu, '&#39;');
}

/** Tagged template that escapes every interpolated value unless it is `raw(...)`. */
export class RawHtml {
  constructor(readonly html: string) {}
  toString(): string {
    return this.html;
  }
}

export const raw = (html: string): RawHtml => new RawHtml(html);

export function html(strings: TemplateStringsArray, ...values: unknown[]): RawHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += renderValue(value) + (strings[i + 1] ?? '');
  });
  return new RawHtml(out);
}

function renderValue(value: unknown): string {
  if (value instanceof RawHtml) return value.html;
  if (Array.isArray(value)) return value.map(renderValue).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(value);
}

export const REPORT_STYLE = `
:root { color-scheme: light; --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --accent: #0a58ca; --bad: #b42318; --good: #1a7f37; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); margin: 0; background: #fff; }
header.top { padding: 24px 32px 12px; border-bottom: 1px solid var(--line); }
main { padding: 8px 32px 48px; max-width: 1200px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 21px; margin: 36px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 17px; margin: 24px 0 6px; }
p.note, .muted { color: var(--muted); }
.banner { background: #fff8c5; border: 1px solid #d4a72c; padding: 8px 12px; border-radius: 6px; margin: 12px 0; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13.5px; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
figure { margin: 12px 0 20px; }
figcaption { color: var(--muted); font-size: 13px; max-width: 900px; }
.chart svg { max-width: 100%; height: auto; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; margin: 8px 0 16px; }
.pair .response { border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; }
.response pre { white-space: pre-wrap; word-break: break-word; font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; margin: 4px 0 0; }
.tag { display: inline-block; font-size: 12px; border-radius: 10px; padding: 0 8px; background: #eef2f7; margin-right: 4px; }
.yes { color: var(--bad); font-weight: 600; } .no { color: var(--good); }
nav.toc a { margin-right: 14px; color: var(--accent); text-decoration: none; }
dl.manifest { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; font-size: 13.5px; }
dl.manifest dt { color: var(--muted); }
dl.manifest dd { margin: 0; word-break: break-word; }
`;

/**
 * What only the report page adds to REPORT_STYLE (the viewer keeps its own
 * layout): the first-screen cards, charts at the column's width, tables that
 * scroll inside themselves on narrow screens, and a print layout.
 */
export const REPORT_PAGE_STYLE = `
main { max-width: 1200px; }
.chart svg { display: block; width: 100%; height: auto; max-width: 1000px; }
main table { display: block; max-width: 100%; overflow-x: auto; }
.pair > * { min-width: 0; }
.glance h2 { margin-top: 20px; }
.card .audit { font-weight: 600; font-size: 14px; }
.card .audit a { color: var(--accent); text-decoration: none; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 12px; }
.card { border: 1px solid var(--line); border-left-width: 5px; border-radius: 8px; padding: 10px 14px; background: #fbfcfd; min-width: 0; }
.card.tone-alert { border-left-color: var(--bad); }
.card.tone-ok { border-left-color: var(--good); }
.card.tone-neutral { border-left-color: #8c959f; }
.card .target { font-size: 13px; color: var(--muted); overflow-wrap: anywhere; }
.card .verdict { font-size: 17px; font-weight: 700; margin: 2px 0 6px; }
.card.tone-alert .verdict { color: var(--bad); }
.card.tone-ok .verdict { color: var(--good); }
.card dl { margin: 0; }
.card dt { color: var(--muted); font-size: 12.5px; }
.card dd { margin: 0 0 6px; font-weight: 600; font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
.card dd small { display: block; font-weight: 400; color: var(--muted); font-size: 12px; }
table.meta { font-size: 13px; }
table.meta th, table.meta td { padding: 2px 8px; }
table.meta tbody th { width: 11em; }
.examples { display: grid; grid-template-columns: repeat(auto-fill, minmax(360px, 1fr)); gap: 4px 16px; }
.examples > * { min-width: 0; }
table.meta td { overflow-wrap: anywhere; }
details pre { white-space: pre-wrap; overflow-wrap: anywhere; font: 12.5px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; }
@media (max-width: 900px) {
  header.top, main { padding-left: 14px; padding-right: 14px; }
  .pair { grid-template-columns: 1fr; }
  h1 { font-size: 22px; }
}
@media print {
  body { font-size: 10.5pt; }
  header.top, main { padding: 0; max-width: none; }
  nav.toc { display: none; }
  a { color: inherit; text-decoration: none; }
  section.run + section.run > h2, section.metadata > h2 { break-before: page; }
  figure, .card, tr, .pair { break-inside: avoid; }
  main table { display: table; overflow: visible; font-size: 8pt; max-width: 100%; }
  main th, main td { padding: 2px 4px; }
  td.num { white-space: normal; }
  table.meta td { font-size: 8pt; }
  .banner { border: 2px solid #000; }
  .chart svg { max-width: 100%; }
}
`;

export function contentSecurityPolicy(style: string): string {
  const hash = createHash('sha256').update(style).digest('base64');
  return ["default-src 'none'", "script-src 'none'", `style-src 'sha256-${hash}'`, 'img-src data:', "base-uri 'none'", "form-action 'none'"].join('; ');
}

export function page(title: string, body: RawHtml, style = REPORT_STYLE): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(contentSecurityPolicy(style))}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>${style}</style>
</head>
<body>
${body.html}
</body>
</html>
`;
}

export interface TableColumn<T> {
  header: string;
  value: (row: T) => unknown;
  numeric?: boolean;
}

export function table<T>(rows: readonly T[], columns: readonly TableColumn<T>[], emptyText = 'No data.'): RawHtml {
  if (rows.length === 0) return html`<p class="muted">${emptyText}</p>`;
  return html`<table><thead><tr>${columns.map((c) => html`<th>${c.header}</th>`)}</tr></thead><tbody>${rows.map(
    (row) => html`<tr>${columns.map((c) => (c.numeric ? html`<td class="num">${c.value(row)}</td>` : html`<td>${c.value(row)}</td>`))}</tr>`,
  )}</tbody></table>`;
}

export function figure(svg: string, caption: string): RawHtml {
  return html`<figure class="chart">${raw(svg)}<figcaption>${caption}</figcaption></figure>`;
}
