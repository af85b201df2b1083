import { describe, expect, it } from 'vitest';
import { analyzePersona, type PersonaObservation } from './analysis.js';

/** Onset (App. N) is always reported: the position when the rule finds one, else why it is undefined. */

function observations(positions: number, items: number, drift: (position: number, item: number) => number): PersonaObservation[] {
  const out: PersonaObservation[] = [];
  for (let p = 0; p < positions; p++) {
    for (let i = 0; i < items; i++) {
      for (const arm of ['real', 'filler'] as const) {
        const score = arm === 'filler' ? 3 : 3 - drift(p, i);
        out.push({
          target: 't',
          session: 'S1',
          position: `P${p + 1}`,
          positionValue: 100 * (p + 1),
          arm,
          mitigation: 'none',
          distance: 'd0',
          surface: 'probe',
          item: `I${i}`,
          category: 'coding_self',
          paraphrase: 0,
          sample: 0,
          status: 'done',
          text: 'x',
          scores: { j: score },
        });
      }
    }
  }
  return out;
}

const options = { B: 1000, primaryCategory: 'coding_self' } as const;

describe('onset rows', () => {
  it('defined: the first position whose probe-level test survives Holm with |Δ| ≥ the threshold', () => {
    // P1 does not drift; P2…P8 drift by 2 or 3 points on each of 10 probes.
    const report = analyzePersona(
      observations(8, 10, (p, i) => (p === 0 ? 0 : 2 + (i % 2))),
      options,
    );
    const row = report.onset[0]!;
    expect(row.rule).toMatch(/first position in counter order.*Holm.*\|Δ\| ≥ 0.3/);
    expect(row.onset).toMatchObject({ session: 'S1', position: 'P2', positionValue: 200, estimate: 2.5 });
    expect(row.onset!.pHolm).toBeCloseTo(8 * (2 / 1024), 12);
    expect(row.reason).toBeNull();
    expect(report.drift[0]!.onset?.position).toBe('P2');
  });

  it('undefined because no per-position test can reach the level with five probes', () => {
    const report = analyzePersona(
      observations(8, 5, () => 2),
      options,
    );
    expect(report.verdicts[0]!.kind).toBe('drift');
    const row = report.onset[0]!;
    expect(row.onset).toBeNull();
    expect(row.minAttainableP).toBeCloseTo(2 / 32, 12);
    expect(row.reason).toMatch(/cannot reach p < 0.05 \(smallest possible p = 0.0625\)/);
  });

  it('undefined because the headline is not significant, or not computable', () => {
    const none = analyzePersona(
      observations(8, 10, () => 0),
      options,
    ).onset[0]!;
    expect(none.onset).toBeNull();
    expect(none.reason).toMatch(/not significant/);
    const single = analyzePersona(
      observations(1, 10, () => 2),
      options,
    ).onset[0]!;
    expect(single.reason).toMatch(/not computable.*at least 2 positions/);
  });

  it('undefined because no position crosses: significant headline, small per-position effects', () => {
    // Δ = 0.2 everywhere: the headline is significant, but |Δ| stays below the 0.3 threshold at every position.
    const report = analyzePersona(
      observations(8, 10, (_, i) => (i < 2 ? 1 : 0)),
      options,
    );
    expect(report.verdicts[0]!.kind).toBe('drift');
    const row = report.onset[0]!;
    expect(row.onset).toBeNull();
    expect(row.reason).toMatch(/^no crossing: no position's probe-level test survives Holm across 8 positions/);
  });
});
