import { describe, expect, it } from 'vitest';
import type { MemoryReport } from '../memory-drift/analysis.js';
import type { PersonaReport } from '../persona-drift/analysis.js';
import { memoryHeadlines, personaHeadlines } from './headline.js';

describe('personaHeadlines', () => {
  it('leads with the verdict and calls a gap strong drift only when the drift is detected', () => {
    // The line prints the claim (the interval that agrees with the deciding p), not the test-alone `ci`.
    const gap = (estimate: number, lo: number, hi: number, p: number, family = 1, confidence = 0.95) => ({
      estimate,
      ci: [lo + 0.01, hi - 0.01],
      claim: { interval: [lo, hi], p, family, confidence },
    });
    const report = {
      drift: [
        { target: 'sim:a', judge: 'j1', gap: gap(1.05, -0.86, 2.96, 0.25), strongDrift: true },
        { target: 'sim:a', judge: 'j2', gap: gap(0.75, 0.11, 1.39, 0.012, 2, 0.975), strongDrift: true },
        { target: 'sim:a', judge: 'j3', gap: { error: 'no filler arm' }, strongDrift: false },
      ],
      verdicts: [
        { target: 'sim:a', judge: 'j1', kind: 'underpowered for this design' },
        { target: 'sim:a', judge: 'j2', kind: 'drift' },
        { target: 'sim:a', judge: 'j3', kind: 'not computable' },
      ],
    } as unknown as PersonaReport;
    expect(personaHeadlines(report, false)).toEqual([
      'persona drift: sim:a judged by j1: underpowered for this design — Δ = +1.05 [95% CI -0.86, +2.96], p = 0.250',
      'persona drift: sim:a judged by j2: drift — Δ = +0.75 [97.5% CI +0.11, +1.39], Holm p = 0.012, strong drift',
      'persona drift: sim:a judged by j3: gap not computable (no filler arm)',
    ]);
  });
});

describe('memoryHeadlines', () => {
  it('gives each tier its elevation with the 95% CI, and marks simulated runs', () => {
    // The line prints the claim's interval (the test inverted at α), not the test-alone `ci`.
    const elevation = (estimate: number, lo: number, hi: number) => ({
      estimate,
      ci: [lo - 0.5, hi + 0.5],
      p: 0.01,
      se: 0.1,
      B: 200,
      invalidReplicates: 0,
      nQuestions: 5,
      claim: { p: 0.01, pRaw: 0.01, interval: [lo, hi], confidence: 0.95, family: 1, alpha: 0.05, significant: true },
    });
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
