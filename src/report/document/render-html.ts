import type { AnalyzedRun, AnyAudit } from '../../experiment/audit.js';
import { figure, html, type RawHtml } from '../html.js';
import { auditSections } from './build.js';
import { chartToSvg } from '../svg.js';
import { cellText } from './cells.js';
import type { DocumentBlock, DocumentCell, DocumentColumn, DocumentSection, RichText } from './types.js';

/**
 * The one HTML renderer of report sections (the report page and the viewer's pages): any audit's
 * document renders here. Every string is escaped by `html`; model output is shown as text in `<pre>`.
 */

function rich(t: RichText): RawHtml {
  if (typeof t === 'string') return html`${t}`;
  return html`${t.map((s) => (typeof s === 'string' ? html`${s}` : 'code' in s ? html`<code>${s.code}</code>` : html`<strong>${s.strong}</strong>`))}`;
}

function cellHtml(cell: DocumentCell, column: DocumentColumn | undefined): RawHtml {
  const content = cell.kind === 'text' && cell.code ? html`<code>${cell.text}</code>` : cellText(cell);
  const inner = cell.kind === 'text' && cell.mark ? html`<span class="yes">${content}</span>` : html`${content}`;
  return column?.numeric ? html`<td class="num">${inner}</td>` : html`<td>${inner}</td>`;
}

function tableHtml(columns: readonly DocumentColumn[], rows: readonly DocumentCell[][], empty = 'No data.'): RawHtml {
  if (rows.length === 0) return html`<p class="muted">${empty}</p>`;
  return html`<table><thead><tr>${columns.map((c) => html`<th>${c.header}</th>`)}</tr></thead><tbody>${rows.map(
    (row) => html`<tr>${row.map((cell, i) => cellHtml(cell, columns[i]))}</tr>`,
  )}</tbody></table>`;
}

async function blockHtml(block: DocumentBlock): Promise<RawHtml> {
  switch (block.kind) {
    case 'heading':
      if (block.minor) return block.id ? html`<h5 id="${block.id}">${block.text}</h5>` : html`<h5>${block.text}</h5>`;
      return block.id ? html`<h4 id="${block.id}">${block.text}</h4>` : html`<h4>${block.text}</h4>`;
    case 'text':
      return html`<p class="note">${rich(block.text)}</p>`;
    case 'list':
      return html`<ul>${block.items.map((i) => html`<li>${rich(i)}</li>`)}</ul>`;
    case 'code':
      return html`<pre>${block.text}</pre>`;
    case 'table':
      return tableHtml(block.columns, block.rows, block.empty);
    case 'chart':
      return html`${block.title ? (block.id ? html`<h4 id="${block.id}">${block.title}</h4>` : html`<h4>${block.title}</h4>`) : ''}${figure(chartToSvg(block.spec), block.caption)}`;
    case 'examples': {
      const items = block.items.map(
        (ex) =>
          html`<div>${ex.tags.map((t) => html`<span class="tag">${t}</span>`)}${ex.title ? html` ${ex.title}` : ''}${
            ex.panes
              ? html`<div class="pair">${ex.panes.map((p) => html`<div class="response"><strong>${p.label}</strong> · ${p.detail}<pre>${p.text}</pre></div>`)}</div>`
              : ''
          }${ex.table ? tableHtml(ex.table.columns, ex.table.rows) : ''}</div>`,
      );
      return html`<p class="note">${block.text}</p>${items.length === 0 ? html`<p class="muted">No examples in this run.</p>` : html`<div class="examples">${items}</div>`}`;
    }
  }
}

/** Sections as HTML: an `<h3>` per section, then its blocks (charts drawn as SVG). */
export async function sectionsHtml(sections: readonly DocumentSection[]): Promise<RawHtml> {
  const out: RawHtml[] = [];
  for (const s of sections) {
    if (s.title) out.push(s.id ? html`<h3 id="${s.id}">${s.title}</h3>` : html`<h3>${s.title}</h3>`);
    for (const b of s.blocks) out.push(await blockHtml(b));
  }
  return html`${out}`;
}

/** An audit's HTML section of one run (the report page, the viewer): its document's sections. */
export async function auditSectionHtml(audit: AnyAudit, analyzed: AnalyzedRun<unknown, unknown>): Promise<RawHtml> {
  return sectionsHtml(auditSections(audit, analyzed));
}
