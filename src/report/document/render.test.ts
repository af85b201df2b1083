import { describe, expect, it } from 'vitest';
import { estimatesSection, estimateRowOf } from './build.js';
import { cellText, int, intervalCell, num, pCell, text } from './cells.js';
import { sectionsHtml } from './render-html.js';
import { documentMarkdown, sectionsMarkdown } from './render-markdown.js';
import { resultDocumentSchema } from './schema.js';
import type { DocumentSection } from './types.js';

const attack = '<script>alert(1)</script> | `x` ``` &amp;';

const sections: DocumentSection[] = [
  {
    id: 's1',
    title: 'Section <one>',
    blocks: [
      { kind: 'text', text: ['p < 0.05 for ', { code: 'a|b' }, ' and ', { strong: '<b>bold</b>' }] },
      { kind: 'list', items: ['warning: one', 'warning: two'] },
      { kind: 'heading', text: 'Table' },
      {
        kind: 'table',
        columns: [{ header: 'name' }, { header: 'Δ [CI]', numeric: true }, { header: 'p', numeric: true }],
        rows: [
          [text(attack), intervalCell(0.25, [-0.1, 0.6], 'signed', 2), pCell(0.0004)],
          [text('tool', { code: true }), intervalCell(null, null, 'fixed'), pCell(null, ' (unadjusted)')],
        ],
      },
      {
        kind: 'examples',
        text: 'Model output, shown as text.',
        items: [{ tags: ['sim:x', attack], panes: [{ label: 'real', detail: 'score 3', text: attack }] }],
      },
    ],
  },
];

describe('the shared renderers of document sections', () => {
  it('write every cell kind the same way in both formats', () => {
    expect(cellText(intervalCell(0.25, [-0.1, 0.6], 'signed', 2))).toBe('+0.25 [-0.10, +0.60]');
    expect(cellText(intervalCell(null, [-0.1, 0.6], 'fixed', 1))).toBe('[-0.1, 0.6]');
    expect(cellText(intervalCell(null, null, 'fixed'))).toBe('—');
    expect(cellText(pCell(0.0004))).toBe('<0.001');
    expect(cellText(pCell(0.0312, ' (fragile)'))).toBe('0.031 (fragile)');
    expect(cellText(num(0.337, 'percent'))).toBe('+33.7%');
    expect(cellText(num(0.337, 'share', 0))).toBe('34%');
    expect(cellText(num(null, 'signed'))).toBe('—');
    expect(cellText(int(1944))).toBe('1944');
  });

  it('Markdown: headings, tables with escaped cells, model output fenced', () => {
    const md = documentMarkdown('Title', sections);
    expect(md.startsWith('# Title\n\n## Section \\<one\\>\n\n')).toBe(true);
    expect(md).toContain('p < 0.05 for `a|b` and **\\<b>bold\\</b>**');
    expect(md).toContain('- warning: one\n- warning: two\n');
    expect(md).toContain('| name | Δ [CI] | p |\n| --- | --- | --- |\n');
    // A pipe, a tag and an entity in a cell cannot break the row or open HTML.
    expect(md).toContain('| \\<script\\>alert(1)\\</script\\> \\| `x` ``` \\&amp; | +0.25 [-0.10, +0.60] | \\<0.001 |');
    expect(md).toContain('| `tool` | — | — (unadjusted) |');
    // The fence is longer than the longest run of backticks in the answer.
    expect(md).toContain(`\`\`\`\`\n${attack}\n\`\`\`\``);
  });

  it('HTML: every string escaped, numbers right-aligned, model output in <pre>', async () => {
    const out = String(await sectionsHtml(sections));
    expect(out).not.toContain('<script>');
    expect(out).not.toContain('<b>bold');
    expect(out).toContain('<h3 id="s1">Section &lt;one&gt;</h3>');
    expect(out).toContain('<code>a|b</code>');
    expect(out).toContain('<td class="num">+0.25 [-0.10, +0.60]</td><td class="num">&lt;0.001</td>');
    expect(out).toContain('<pre>&lt;script&gt;alert(1)&lt;/script&gt; | `x` ``` &amp;amp;</pre>');
    expect(out).toContain('<span class="tag">&lt;script&gt;');
  });

  it('an audit without sections gets its estimate rows as one table', () => {
    const section = estimatesSection('Toy', [estimateRowOf(['toy', 'sim:echo', '', '', 'mean length', 10, 9, 11, 3, 0.02, null])]);
    expect(sectionsMarkdown([section])).toContain('| toy | sim:echo |  |  | mean length | 10.000 [9.000, 11.000] | 3 | 0.020 | — |');
  });

  it('the schema accepts the sections', () => {
    const block = resultDocumentSchema.shape.sections.element;
    expect(() => block.parse(sections[0])).not.toThrow();
    expect(() => block.parse({ title: 'x', blocks: [{ kind: 'table', columns: [], rows: [[{ kind: 'number', value: 1 }]] }] })).toThrow();
  });
});
