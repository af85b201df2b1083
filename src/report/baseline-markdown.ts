import { changeText } from './baseline.js';
import type { BaselineComparison } from './history.js';
import { markdownText } from './markdown-text.js';

/** `echolens compare --baseline` as Markdown: per design, the two measurements and each statistic's change. Pure. */

const modelsText = (models: Record<string, string[]>) =>
  Object.entries(models)
    .map(([m, v]) => `${m} → ${v.length === 0 ? '(not reported)' : v.join(', ')}`)
    .join('; ') || '—';

export function renderBaselineMarkdown(comparisons: readonly BaselineComparison[], notes: readonly string[] = []): string {
  const lines = ['# echolens compare --baseline', ''];
  lines.push(
    'Change = latest − baseline over the design units both measurements share, with a 95% interval and a p from one procedure (a sign-flip test over the sampled units, and the interval that inverts it): p < 0.05 exactly when 0 lies outside the interval.',
    '',
  );
  for (const c of comparisons) {
    const side = (s: BaselineComparison['baseline']) =>
      `${s.run}${s.tag ? ` [${markdownText(s.tag)}]` : ''}, measured ${s.measuredAt}; models ${markdownText(modelsText(s.models))}`;
    lines.push(`## ${c.audit} · design ${c.design}`, '', `- baseline: ${side(c.baseline)}`, `- latest: ${side(c.latest)}`, '');
    lines.push('| statistic | subject | baseline | latest | change [95% CI], p |', '| --- | --- | --- | --- | --- |');
    for (const row of c.rows) {
      const v = (x: number | null) => (x === null ? '—' : row.scale === 'percent' ? `${(100 * x).toFixed(0)}%` : x.toFixed(2));
      lines.push(
        `| ${markdownText(row.statistic)} | ${markdownText(row.subject)} | ${v(row.baseline)} | ${v(row.latest)} | ${markdownText(changeText(row))} |`,
      );
    }
    if (c.rows.length === 0) lines.push('| — | — | — | — | no statistic to compare |');
    lines.push('');
  }
  for (const note of notes) lines.push(`> ${markdownText(note)}`);
  return `${lines.join('\n')}\n`;
}
