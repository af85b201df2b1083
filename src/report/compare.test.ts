import { describe, expect, it } from 'vitest';
import type { MemoryReport } from '../memory-drift/analysis.js';
import type { PersonaReport } from '../persona-drift/analysis.js';
import { compareRows, renderCompareMarkdown } from './compare.js';

const gap = (estimate: number) => ({ estimate, ci: [estimate - 0.2, estimate + 0.2] as const, p: 0.01, nPositions: 3, real: { estimate: 0, ci: [0, 0] as const }, filler: { estimate: 0, ci: [0, 0] as const }, nReal: 5, nFiller: 5 });
const persona = (target: string, estimate: number) => ({ drift: [{ target, judge: 'j', gap: gap(estimate), strongDrift: false }] }) as unknown as PersonaReport;
const memory = (estimate: number) =>
  ({ targets: [{ target: 'm', metrics: { dtw: { tiers: [{ tier: 'persona', elevation: { estimate, ci: [estimate - 0.1, estimate + 0.1], p: 0.01 } }] } } }] }) as unknown as MemoryReport;

describe('compare', () => {
  it('pairs rows by subject and differences the estimates', () => {
    const rows = compareRows(
      { label: 'a.db', persona: persona('t1', 0.5), memory: memory(0.2), verdicts: [] },
      { label: 'b.db', persona: persona('t1', 0.2), memory: memory(0.5), verdicts: [] },
    );
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ table: 'persona drift', subject: 't1 (judge j)', a: '+0.50 [+0.30, +0.70]' });
    expect(rows[0]!.difference).toBeCloseTo(-0.3, 12);
    expect(rows[1]).toMatchObject({ table: 'memory elevation', subject: 'm · persona DTW elevation', a: '+20% [+10%, +30%]' });
    expect(rows[1]!.difference).toBeCloseTo(0.3, 12);
  });

  it('shows a subject only one side has, without a difference', () => {
    const md = renderCompareMarkdown({ label: 'a.db', persona: persona('t1', 0.5), verdicts: [] }, { label: 'b.db', persona: persona('t2', 0.1), verdicts: [] });
    expect(md).toContain('| persona drift | t1 (judge j) | +0.50 [+0.30, +0.70] | — | — |');
    expect(md).toContain('| persona drift | t2 (judge j) | — | +0.10 [-0.10, +0.30] | — |');
  });
});
