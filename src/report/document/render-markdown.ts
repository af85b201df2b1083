import type { AnalyzedRun, AnyAudit } from '../../experiment/audit.js';
import { markdownText } from '../markdown-text.js';
import { auditSections } from './build.js';
import { cellText } from './cells.js';
import type { DocumentBlock, DocumentCell, DocumentColumn, DocumentSection, RichText } from './types.js';

/**
 * The one Markdown renderer of report sections: any audit's document renders here. Text from data
 * is escaped (markdown-text.ts); model output goes in fenced code blocks, which Markdown shows as
 * written. Charts are drawn in HTML only: Markdown carries the tables beside them.
 */

/** Prose: only what could open an HTML tag or entity is escaped (table cells escape more: markdown-text.ts). */
const prose = (t: string) =>
  t
    .replace(/<(?=[A-Za-z/!?])/gu, '\\<')
    .replace(/&(?=#?[A-Za-z0-9]+;)/gu, '\\&')
    .replace(/\r\n|\r|\n/gu, ' ');

/** A code span shows its content as written; a longer fence where the text holds backticks. */
function codeSpan(t: string): string {
  const flat = t.replace(/\r\n|\r|\n/gu, ' ');
  const fence = flat.includes('`') ? '``' : '`';
  return fence.length > 1 ? `${fence} ${flat} ${fence}` : `${fence}${flat}${fence}`;
}

function rich(t: RichText): string {
  if (typeof t === 'string') return prose(t);
  return t.map((s) => (typeof s === 'string' ? prose(s) : 'code' in s ? codeSpan(s.code) : `**${prose(s.strong)}**`)).join('');
}

function cellMarkdown(cell: DocumentCell): string {
  const t = markdownText(cellText(cell));
  if (cell.kind !== 'text') return t;
  if (cell.code) return codeSpan(cellText(cell)).replaceAll('|', '\\|');
  return cell.mark ? `**${t}**` : t;
}

function tableMarkdown(columns: readonly DocumentColumn[], rows: readonly DocumentCell[][], empty = 'No data.'): string[] {
  if (rows.length === 0) return [markdownText(empty), ''];
  return [
    `| ${columns.map((c) => markdownText(c.header)).join(' | ')} |`,
    `| ${columns.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.map(cellMarkdown).join(' | ')} |`),
    '',
  ];
}

/** A fence longer than any run of backticks in the text, so model output cannot close it. */
function fenced(text: string, language = ''): string[] {
  const longest = Math.max(0, ...[...text.matchAll(/`+/gu)].map((m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return [`${fence}${language}`, text, fence];
}

function blockMarkdown(block: DocumentBlock): string[] {
  switch (block.kind) {
    case 'heading':
      return [`${block.minor ? '####' : '###'} ${markdownText(block.text)}`, ''];
    case 'text':
      return [block.quote ? `> ${rich(block.text)}` : rich(block.text), ''];
    case 'list':
      return [...block.items.map((i) => `- ${rich(i)}`), ''];
    case 'code':
      return [...fenced(block.text, block.language), ''];
    case 'table':
      return tableMarkdown(block.columns, block.rows, block.empty);
    case 'chart':
      return [];
    case 'examples': {
      const out = [markdownText(block.text), ''];
      if (block.items.length === 0) return [...out, 'No examples in this run.', ''];
      for (const ex of block.items) {
        out.push(`**${ex.tags.map(markdownText).join(' · ')}**${ex.title ? ` ${markdownText(ex.title)}` : ''}`, '');
        for (const pane of ex.panes ?? []) out.push(`*${markdownText(pane.label)}* · ${markdownText(pane.detail)}`, '', ...fenced(pane.text), '');
        if (ex.table) out.push(...tableMarkdown(ex.table.columns, ex.table.rows));
      }
      return out;
    }
  }
}

/** Sections as Markdown: `## title`, then each block. */
export function sectionsMarkdown(sections: readonly DocumentSection[]): string {
  const out: string[] = [];
  for (const s of sections) {
    if (s.title) out.push(`## ${markdownText(s.title)}`, '');
    for (const b of s.blocks) out.push(...blockMarkdown(b));
  }
  return out.join('\n');
}

/** A whole Markdown report of one run's sections under a `# title`. */
export function documentMarkdown(title: string, sections: readonly DocumentSection[]): string {
  return `# ${markdownText(title)}\n\n${sectionsMarkdown(sections)}`;
}

/** An audit's Markdown report of one run: its document's sections under `# title`. */
export function auditMarkdown(audit: AnyAudit, analyzed: AnalyzedRun<unknown, unknown>, title: string): string {
  return documentMarkdown(title, auditSections(audit, analyzed));
}
