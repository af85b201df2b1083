import { describe, expect, it } from 'vitest';
import type { MemoryReport } from '../memory-drift/analysis.js';
import { memoryHeadlines } from './headline.js';

describe('memoryHeadlines', () => {
  it('gives each tier its elevation with the 95% CI, and marks simulated runs', () => {
    const elevation = (estimate: number, lo: number, hi: number) => ({ estimate, ci: [lo, hi], p: 0.01, se: 0.1, B: 200, invalidReplicates: 0, nQuestions: 5 });
    const report = {
      targets: [
        {
          target: 'openai:gpt-4.1-mini',
          validity: { overall: 'pass' },
          metrics: {
            dtw: {
              tiers: [
                { tier: 'noise', elevation: elevation(-0.05, -0.2, 0.1) },
                { tier: 'persona', elevation: elevation(0.42, 0.2, 0.65) },
                { tier: 'life_event', elevation: { error: 'the condition has no scored observations' } },
              ],
            },
          },
        },
      ],
    } as unknown as MemoryReport;
    expect(memoryHeadlines(report, false)).toEqual([
      'memory drift: openai:gpt-4.1-mini: DTW elevation over the no-memory floor (95% CI) — noise -5% [-20%, +10%], persona +42% [+20%, +65%], life events n/a; validity pass',
    ]);
    expect(memoryHeadlines(report, true)[1]).toMatch(/SIMULATED/);
  });
});
