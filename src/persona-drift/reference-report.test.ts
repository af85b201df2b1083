import { describe, expect, it } from 'vitest';
import { analyzePersona, type PersonaObservation } from './analysis.js';
import { renderPersonaMarkdown } from './document.js';
import { personaObservation } from './testing/observation.js';
import { meanOfPositionMeans, sessionWilcoxon } from './reference-estimators.js';
import { holm } from '../stats/multiple-testing.js';

/** `procedure: reference` in the report: the reference block and the judge-free tables it must keep. */

const obs = (partial: Partial<PersonaObservation>): PersonaObservation => personaObservation({ session: 'S1', systemPrompt: 'probe-reference', ...partial });

/**
 * Three sessions × three positions; probes at the probe prompt, stressors at the reference's own
 * stressor prompt (format-strict), contracts with and without the anchor.
 */
function referenceRun(): PersonaObservation[] {
  const out: PersonaObservation[] = [];
  let k = 0;
  for (const session of ['S1', 'S2', 'S3']) {
    for (let p = 0; p < 3; p++) {
      const at = { session, position: `P0${p}`, positionValue: 100 * p };
      for (const item of ['C01', 'C02', 'C03', 'I01']) {
        const category = item.startsWith('C') ? 'coding_self' : 'identity';
        out.push(obs({ ...at, item, category, arm: 'real', scores: { 'sim:judge': k++ % 4 } }));
        out.push(obs({ ...at, item, category, arm: 'filler', scores: { 'sim:judge': 3 - (k % 2) } }));
      }
      for (let paraphrase = 0; paraphrase < 2; paraphrase++) {
        const stressor = { ...at, surface: 'stressor' as const, item: 'S2', category: 'S2', paraphrase, systemPrompt: 'format-strict', scores: {} };
        out.push(
          obs({
            ...stressor,
            arm: 'real',
            text: 'x'.repeat(200 + 40 * p + 17 * paraphrase + (session === 'S2' ? 300 : 0)),
            check: { pass: paraphrase === 0, reason: 'r' },
          }),
        );
        out.push(obs({ ...stressor, arm: 'filler', text: 'x'.repeat(60 + paraphrase), check: { pass: true, reason: 'ok' } }));
      }
      for (const mitigation of ['none', 'a-anchor']) {
        for (let sample = 0; sample < 4; sample++) {
          const pass =
            mitigation === 'a-anchor'
              ? sample < 3 + (session === 'S3' ? 1 : 0)
              : sample < 1 + (session === 'S2' ? 1 : 0) - (p === 2 && session === 'S1' ? 1 : 0);
          out.push(
            obs({
              ...at,
              surface: 'contract',
              item: 'C1_csv',
              category: 'C1_csv',
              mitigation,
              sample,
              scores: {},
              check: { pass, reason: pass ? 'ok' : 'bad' },
            }),
          );
        }
      }
    }
  }
  return out;
}

const options = { B: 2000, seed: 42, systemPrompts: ['probe-reference'], primaryCategory: 'coding_self' } as const;

describe('procedure: reference in the persona report', () => {
  it('keeps the verbosity / compliance table and its variance decomposition when stressors have their own system prompt', () => {
    const report = analyzePersona(referenceRun(), { ...options, procedure: 'reference' });
    expect(report.design.primarySystemPrompt).toBe('probe-reference');
    expect(report.verbosity).toHaveLength(1);
    const row = report.verbosity[0];
    expect(row?.pairs).toBe(18);
    // real complies on paraphrase 0 only, filler always: gap = 100 − 50 pp.
    expect(row?.complianceGapPp).toBeCloseTo(50, 12);
    expect(row?.cell).toContain('prompt=format-strict');
    expect(row?.heterogeneity).not.toBeNull();
    expect(row?.heterogeneity && 'error' in row.heterogeneity).toBe(false);
    // Per session (paper Table 1): S2's real answers are 300 characters longer.
    expect(row?.bySession.map((b) => b.session)).toEqual(['S1', 'S2', 'S3']);
    for (const b of row?.bySession ?? []) expect(b.pairs).toBe(6);
    const s2 = row?.bySession.find((b) => b.session === 'S2');
    const s1 = row?.bySession.find((b) => b.session === 'S1');
    expect((s2?.medianRatio as number) > (s1?.medianRatio as number)).toBe(true);
    // Both comply on paraphrase 0 only: real lengths 200, 240, 280 (+300 in S2) over filler 60.
    expect(s1?.conditionalPairs).toBe(3);
    expect(s1?.conditionalRatio).toBeCloseTo(240 / 60, 12);
    expect(s2?.conditionalRatio).toBeCloseTo(540 / 60, 12);
    // The calibrated procedure on the same cells keeps them too.
    expect(analyzePersona(referenceRun(), options).verbosity).toHaveLength(1);
  });

  it('has a reference block only in reference mode; its arm means are means of position means over the coding-self probes', () => {
    const observations = referenceRun();
    expect(analyzePersona(observations, options).reference).toBeUndefined();
    const reference = analyzePersona(observations, { ...options, procedure: 'reference' }).reference;
    expect(reference?.B).toBe(10_000);
    for (const arm of ['real', 'filler']) {
      const groups = new Map<string, number[]>();
      for (const o of observations) {
        if (o.surface !== 'probe' || o.arm !== arm || o.category !== 'coding_self') continue;
        const key = `${o.session}/${o.position}`;
        groups.set(key, [...(groups.get(key) ?? []), o.scores['sim:judge'] as number]);
      }
      const row = reference?.arms.find((a) => a.arm === arm);
      expect(row?.mean).toBeCloseTo(meanOfPositionMeans([...groups.values()]), 12);
      expect(row?.positions).toBe(9);
      expect(row?.n).toBe(27);
      expect(row?.ci[0]).toBeLessThanOrEqual(row?.mean as number);
      expect(row?.ci[1]).toBeGreaterThanOrEqual(row?.mean as number);
    }
    const gap = reference?.gap[0];
    const real = reference?.arms.find((a) => a.arm === 'real')?.mean as number;
    const filler = reference?.arms.find((a) => a.arm === 'filler')?.mean as number;
    expect(gap?.estimate).toBeCloseTo(filler - real, 12);
    // The permutation pairs every probe (all categories): 9 positions × 4 probes.
    const perm = reference?.permutation.find((p) => p.contrast === 'filler - real');
    const deltas = observations
      .filter((o) => o.surface === 'probe' && o.arm === 'filler')
      .map(
        (f) =>
          (f.scores['sim:judge'] as number) -
          (observations.find((r) => r.surface === 'probe' && r.arm === 'real' && r.session === f.session && r.position === f.position && r.item === f.item)
            ?.scores['sim:judge'] as number),
      );
    expect(deltas).toHaveLength(36);
    expect(perm?.mean).toBeCloseTo(deltas.reduce((a, b) => a + b, 0) / deltas.length, 12);
    expect(perm?.pHolm).toBe(perm?.p);
  });

  it('contracts: Wilcoxon over per-session pass-rate differences with a session bootstrap', () => {
    const observations = referenceRun();
    const reference = analyzePersona(observations, { ...options, procedure: 'reference' }).reference;
    const row = reference?.contracts.find((c) => c.contrast === 'a-anchor - none');
    const perSession = ['S1', 'S2', 'S3'].map((s) => {
      const rate = (m: string) => {
        const cells = observations.filter((o) => o.surface === 'contract' && o.session === s && o.mitigation === m);
        return cells.filter((o) => o.check?.pass).length / cells.length;
      };
      return rate('a-anchor') - rate('none');
    });
    const expected = sessionWilcoxon(perSession, { B: 10_000, seed: 42 });
    expect(row?.sessions).toBe(3);
    expect(row?.mean).toBeCloseTo(expected.mean, 12);
    expect(row?.p).toBe(expected.p);
    expect(row?.ci).toEqual(expected.ci);
    expect(row?.pHolm).toBe(holm([expected.p])[0]);
  });

  it("Markdown puts the paper's numbers beside the calibrated ones and says the verdict is the calibrated one", () => {
    const report = analyzePersona(referenceRun(), { ...options, procedure: 'reference' });
    const md = renderPersonaMarkdown(report);
    expect(md).toContain("## The paper's procedure beside the calibrated one");
    expect(md).toContain("The verdict uses echolens's calibrated procedure");
    expect(md).toMatch(/\| sim:a \| drift gap Δ = filler − real \| .*t interval over .* \| .*two-stage position bootstrap, B = 10000/u);
    expect(md).toMatch(/contract C1_csv: a-anchor - none .*Wilcoxon p/u);
    expect(renderPersonaMarkdown(analyzePersona(referenceRun(), options))).not.toContain("paper's procedure beside");
  });
});
