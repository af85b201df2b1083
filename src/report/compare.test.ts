import { describe, expect, it } from 'vitest';
import type { ReportVerdict } from '../gate/verdict.js';
import { type ComparedPair, compareRows, renderCompareMarkdown } from './compare.js';

const verdict = (simulated: boolean) => ({ verdict: 'pass', simulated }) as unknown as ReportVerdict;

const pair: ComparedPair = {
  audit: 'persona',
  title: 'Persona drift (ContextEcho)',
  a: { store: 'a.db', run: 'r1', name: 'old', verdict: verdict(false) },
  b: { store: 'b.db', run: 'r2', name: 'new', verdict: verdict(true) },
  comparison: {
    audit: 'persona',
    a: 'r1',
    b: 'r2',
    B: 2000,
    seed: 42,
    rows: [
      {
        statistic: 'drift gap Δ (filler − real)',
        subject: 't1 · judge j',
        unit: 'position',
        scale: 'number',
        result: { a: 0.5, b: 0.2, difference: -0.3, ci: [-0.5, -0.1], se: 0.1, level: 0.95, units: 6, clusters: 6, B: 2000, invalidReplicates: 0, seed: 42 },
        // B's own report covers more positions than A's: its own estimate differs from the shared-units one.
        own: { a: 0.5, b: 0.27 },
      },
      {
        statistic: 'DTW elevation over the no-memory floor · persona',
        subject: 'm',
        unit: 'question',
        scale: 'percent',
        result: { error: 'the runs share 1 design unit' },
        own: { a: 0.31, b: null },
      },
    ],
  },
};

describe('compare rendering', () => {
  it('shows each side on the shared units and as its own estimate, labelled, the difference with its interval and the shared units', () => {
    const rows = compareRows([pair]);
    expect(rows[0]).toEqual({
      audit: 'persona',
      statistic: 'drift gap Δ (filler − real)',
      subject: 't1 · judge j',
      unit: 'position',
      a: '+0.50',
      b: '+0.20',
      difference: '-0.30 [-0.50, -0.10]',
      ownA: '+0.50',
      ownB: '+0.27',
      units: 6,
    });
    expect(rows[1]).toMatchObject({ difference: 'n/a (the runs share 1 design unit)', units: null, ownA: '+31%', ownB: '—' });
    const md = renderCompareMarkdown([pair]);
    expect(md).toContain('| statistic | subject | A, shared units | B, shared units | B − A [95% CI] | shared units | A, own estimate | B, own estimate |');
    expect(md).toContain('| drift gap Δ (filler − real) | t1 · judge j | +0.50 | +0.20 | -0.30 [-0.50, -0.10] | 6 positions | +0.50 | +0.27 |');
    expect(md).toContain('"own estimate" = each run\'s estimate over all its units, as its own report shows it');
    expect(md).not.toContain("A and B are each run's own estimate");
    expect(md).toContain('Simulated models');
    expect(md).toContain('- B: new (run r2 in b.db); verdict PASS (SIMULATED models)');
  });
});
