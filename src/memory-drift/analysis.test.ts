import fc from 'fast-check';
import { authorsDrift } from '../metrics/authors.js';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../core/errors.js';
import { benjaminiHochberg, dRel } from '../stats/index.js';
import { rng } from '../stats/rng.js';
import {
  analyzeMemory,
  type ElevationEstimate,
  elevationBootstrap,
  type LabelledSample,
  type MemoryObservation,
  type MemoryReport,
  MEMORY_REPORT_SCHEMA,
  sampleFromCellLabels,
  scoreTrajectories,
} from './analysis.js';
import { loadBuiltinPerturbations, type PerturbationTier } from './perturbations.js';
import { buildGenerationPlan } from './plan.js';
import { PAPER_NOISE_CATEGORIES as NOISE, PAPER_PERSONA_CATEGORIES as PERSONA } from './testing/paper-categories.js';
import { normalDraw } from '../stats/testing/normal.js';

const LIFE = ['bereavement', 'job_loss', 'serious_illness'];

const normal = normalDraw;

interface Plant {
  questions: number;
  samples: number;
  seed: number;
  /** Shift of the mean DTW per condition over the floor (0 = null). */
  shift: (condition: string, tier: PerturbationTier) => number;
  /** Noise conditions are within-question copies of the floor values (exactly at the floor). */
  noiseAtFloor?: boolean;
}

function observation(target: string, q: number, condition: string, tier: PerturbationTier, sample: number, dtw: number, sri: number): MemoryObservation {
  return {
    target,
    question: `q${q}`,
    domain: 'health',
    condition,
    tier,
    stimulus: `${condition}-1`,
    sample,
    status: 'scored',
    baselineSymbols: null,
    symbols: null,
    dtw,
    sri,
  } as MemoryObservation;
}

/** Drift with a question random intercept; SRI is a noisy increasing function of DTW. */
function plant(options: Plant, target = 'sim:memory'): MemoryObservation[] {
  const random = rng(options.seed);
  const out: MemoryObservation[] = [];
  const conditions: Array<[string, PerturbationTier]> = [
    ['no_perturbation', 'none'],
    ...NOISE.map((c) => [c, 'noise'] as [string, PerturbationTier]),
    ...PERSONA.map((c) => [c, 'persona'] as [string, PerturbationTier]),
    ...LIFE.map((c) => [c, 'life_event'] as [string, PerturbationTier]),
  ];
  for (let q = 0; q < options.questions; q++) {
    const questionEffect = 0.03 * normal(random);
    const floorValues: Array<[number, number]> = [];
    for (const [condition, tier] of conditions) {
      for (let s = 0; s < options.samples; s++) {
        let dtw: number;
        let sri: number;
        if (tier === 'noise' && options.noiseAtFloor) {
          // A within-question rotation of the floor values: same multiset, same per-question sum.
          const shifted = floorValues[(s + NOISE.indexOf(condition) + 1) % options.samples]!;
          [dtw, sri] = shifted;
        } else {
          dtw = Math.max(0, 0.2 + questionEffect + options.shift(condition, tier) + 0.05 * normal(random));
          sri = Math.max(0, 0.05 + 0.6 * dtw + 0.01 * normal(random));
        }
        if (tier === 'none') floorValues.push([dtw, sri]);
        out.push(observation(target, q, condition, tier, s + (tier === 'none' ? 1 : 0), dtw, sri));
      }
    }
  }
  return out;
}

const planted = (condition: string, tier: PerturbationTier) => {
  if (tier === 'persona') return 0.05 + 0.006 * PERSONA.indexOf(condition);
  if (tier === 'life_event') return 0.15 + 0.01 * LIFE.indexOf(condition);
  return 0;
};

const B = 500;

function condition(report: MemoryReport, metric: 'dtw' | 'sri', id: string) {
  const found = report.targets[0]!.metrics[metric].conditions.find((c) => c.condition === id);
  if (found === undefined) throw new Error(`no condition ${id}`);
  return found;
}

describe('scoreTrajectories', () => {
  const sample = (over: Partial<LabelledSample>): LabelledSample => ({
    target: 't',
    question: 'q1',
    domain: 'd',
    condition: 'gender',
    tier: 'persona',
    stimulus: 'gender-1',
    sample: 0,
    role: 'perturbed',
    status: 'labelled',
    symbols: null,
    ...over,
  });
  const reference = (question: string, symbols: string[] | null, status: LabelledSample['status'] = 'labelled') =>
    sample({ question, condition: 'no_perturbation', tier: 'none', stimulus: 'none', role: 'reference', symbols, status });

  it('scores against the reference with hand-computed DTW and SRI', () => {
    const result = scoreTrajectories([reference('q1', ['A', 'B', 'C']), sample({ symbols: ['A', 'C', 'C'] })]);
    expect(result.observations).toHaveLength(1);
    const o = result.observations[0]!;
    expect(o.status).toBe('scored');
    expect(o.baselines).toBe(1);
    expect(o.baselineSymbols).toEqual(['A', 'B', 'C']);
    // DTW_raw = 1 (B aligned with a C), normalized by max(3, 3).
    expect(o.dtw).toBeCloseTo(1 / 3, 12);
    // ED = 1; JS² = ½·ln(4/3) (histograms (⅓,⅓,⅓) vs (⅓,0,⅔)); SRI = ½·ED/3 + ½·√(JS²/ln 2).
    const js = Math.sqrt((0.5 * Math.log(4 / 3)) / Math.log(2));
    expect(o.sri).toBeCloseTo(0.5 * (1 / 3) + 0.5 * js, 6);
  });

  it("emptySequences 'authors' (the reference procedure): an invalid labeling is the authors' empty sequence, scored with their DTW 0 score and SRI", () => {
    const samples = [
      reference('q1', ['A', 'B', 'C']),
      sample({ status: 'invalid', symbols: null }),
      sample({ sample: 1, symbols: [] }),
      sample({ sample: 2, symbols: ['A', 'C', 'C'] }),
    ];
    const paper = scoreTrajectories(samples);
    expect(paper.observations.map((o) => o.status)).toEqual(['invalid', 'invalid', 'scored']);
    const authors = scoreTrajectories(samples, { emptySequences: 'authors' });
    expect(authors.observations.map((o) => o.status)).toEqual(['scored', 'scored', 'scored']);
    const empty = authors.observations[0]!;
    expect(empty.dtw).toBe(1);
    // ½ · 1 (edit) + ½ · JS with ε = 1e-8 against an empty histogram (≈ 1/√2).
    expect(empty.sri).toBeCloseTo(authorsDrift(['A', 'B', 'C'], []), 15);
    expect(empty.sri).toBeCloseTo(0.5 + 0.5 * Math.SQRT1_2, 6);
    // Non-empty pairs: the same DTW, the authors' ε-smoothed SRI (equal to 1e-6).
    expect(authors.observations[2]!.dtw).toBe(paper.observations[2]!.dtw);
    expect(Math.abs((authors.observations[2]!.sri as number) - (paper.observations[2]!.sri as number))).toBeLessThan(1e-6);
  });

  it('averages over every other no-memory sample under the all-pairs policy', () => {
    const samples = [
      reference('q1', ['A', 'B']),
      sample({ condition: 'no_perturbation', tier: 'none', stimulus: 'none', role: 'no_perturbation', sample: 1, symbols: ['A', 'B'] }),
      sample({ condition: 'no_perturbation', tier: 'none', stimulus: 'none', role: 'no_perturbation', sample: 2, symbols: ['B', 'B'] }),
      sample({ symbols: ['A', 'A'] }),
    ];
    const result = scoreTrajectories(samples, { pairing: 'all-pairs' });
    const perturbed = result.observations.find((o) => o.condition === 'gender')!;
    // dtw(AB, AA) = ½, dtw(AB, AA) = ½, dtw(BB, AA) = 1.
    expect(perturbed.dtw).toBeCloseTo(2 / 3, 12);
    expect(perturbed.baselines).toBe(3);
    const first = result.observations.find((o) => o.condition === 'no_perturbation' && o.sample === 1)!;
    // Against the reference AB (0) and the other no-memory sample BB (½).
    expect(first.dtw).toBeCloseTo(0.25, 12);
    expect(first.baselines).toBe(2);
    // The reference policy compares with sample 0 only.
    const single = scoreTrajectories(samples);
    expect(single.observations.find((o) => o.condition === 'gender')!.dtw).toBeCloseTo(0.5, 12);
  });

  it('excludes and counts missing references, dropouts and invalid labels per condition', () => {
    const result = scoreTrajectories([
      reference('q1', ['A']),
      reference('q2', null, 'empty'),
      sample({ symbols: ['A'] }),
      sample({ sample: 1, status: 'empty' }),
      sample({ sample: 2, status: 'invalid' }),
      sample({ sample: 3, symbols: [] }),
      sample({ question: 'q2', symbols: ['A'] }),
      sample({ question: 'q3', symbols: ['A'] }),
      // A dropout stays a dropout even without a reference.
      sample({ question: 'q3', sample: 1, status: 'empty' }),
      sample({ question: 'q1', condition: 'filler', tier: 'noise', status: 'failed' }),
    ]);
    const statuses = result.observations.map((o) => o.status);
    expect(statuses).toEqual(['scored', 'empty', 'invalid', 'invalid', 'no_reference', 'no_reference', 'empty', 'failed']);
    expect(result.missingReferences).toEqual([
      { target: 't', question: 'q2', reason: 'reference sample is empty' },
      { target: 't', question: 'q3', reason: 'no reference sample' },
    ]);
    expect(result.excluded).toEqual([
      { target: 't', condition: 'gender', tier: 'persona', total: 7, scored: 1, empty: 2, failed: 0, invalid: 2, refused: 0, noReference: 2 },
      { target: 't', condition: 'filler', tier: 'noise', total: 1, scored: 0, empty: 0, failed: 1, invalid: 0, refused: 0, noReference: 0 },
    ]);
  });

  it('scores the samples of a generation plan from their cell labels', () => {
    const questions = [
      { id: 'qa', domain: 'health', text: 'Should I take up running?' },
      { id: 'qb', domain: 'career', text: 'Should I change jobs?' },
    ];
    const cells = buildGenerationPlan({
      questions,
      perturbations: loadBuiltinPerturbations(),
      targets: ['sim:memory'],
      k: 2,
      conditions: ['no_perturbation', 'filler', 'gender', 'bereavement'],
    });
    // Reference A B; every other sample drifts by one symbol more per tier.
    const symbolsFor = (tier: unknown, role: unknown) =>
      role === 'reference' ? ['S/A', 'S/B'] : tier === 'life_event' ? ['P/C', 'P/C'] : tier === 'persona' ? ['S/A', 'P/C'] : ['S/A', 'S/B'];
    const samples = cells.map((cell, i) =>
      sampleFromCellLabels(cell.labels, { status: 'labelled', symbols: symbolsFor(cell.labels.tier, cell.labels.role) }, `cells[${i}].labels`),
    );
    const result = scoreTrajectories(samples);
    // 2 questions × (reference + 2 no-memory + 3 conditions × 2 samples) cells, minus the 2 references.
    expect(cells).toHaveLength(18);
    expect(result.observations).toHaveLength(16);
    expect(result.missingReferences).toEqual([]);
    const byCondition = (id: string) => result.observations.filter((o) => o.condition === id).map((o) => o.dtw);
    expect(byCondition('no_perturbation')).toEqual([0, 0, 0, 0]);
    expect(byCondition('filler')).toEqual([0, 0, 0, 0]);
    expect(byCondition('gender')).toEqual([0.5, 0.5, 0.5, 0.5]);
    expect(byCondition('bereavement')).toEqual([1, 1, 1, 1]);
    expect(() => sampleFromCellLabels({ ...cells[0]!.labels, role: 'baseline' }, { status: 'empty', symbols: null }, 'cells[0].labels')).toThrow(
      /cells\[0\]\.labels\.role/,
    );
    expect(() => sampleFromCellLabels({ ...cells[0]!.labels, question_id: null }, { status: 'empty', symbols: null })).toThrow(/labels\.question_id/);
  });

  it('keeps scores in [0, 1] and gives 0 for a sample identical to the reference', () => {
    const symbols = fc.array(fc.constantFrom('S/A', 'S/B', 'P/C', 'unmapped'), { minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(symbols, symbols, fc.constantFrom<'reference' | 'all-pairs'>('reference', 'all-pairs'), (base, other, pairing) => {
        const result = scoreTrajectories([reference('q1', base), sample({ symbols: other }), sample({ sample: 1, symbols: base })], { pairing });
        const [drifted, same] = result.observations as [MemoryObservation, MemoryObservation];
        for (const value of [drifted.dtw, drifted.sri]) {
          expect(value).toBeGreaterThanOrEqual(0);
          expect(value).toBeLessThanOrEqual(1);
        }
        expect(same.dtw).toBe(0);
        expect(same.sri).toBe(0);
      }),
      { numRuns: 200, seed: 42 },
    );
  });

  it('rejects malformed samples and duplicate references', () => {
    expect(() => scoreTrajectories([reference('q1', ['A']), reference('q1', ['B'])])).toThrow(/second reference/);
    expect(() => scoreTrajectories([sample({ symbols: null })])).toThrow(InvalidArgumentError);
    expect(() => scoreTrajectories([sample({ role: 'reference', symbols: ['A'] })])).toThrow(/no-memory role/);
    expect(() => scoreTrajectories([reference('q1', ['A'])], { alpha: 2 })).toThrow(/alpha/);
  });
});

describe('analyzeMemory on planted tiers', () => {
  const observations = plant({ questions: 40, samples: 3, seed: 11, shift: planted, noiseAtFloor: true });
  const report = analyzeMemory(observations, { B });
  const target = report.targets[0]!;

  it('has the schema, options and counts', () => {
    expect(report.schema).toBe(MEMORY_REPORT_SCHEMA);
    expect(report.options).toMatchObject({ B, seed: 42, alpha: 0.05, convergenceThreshold: 0.8, floorCondition: 'no_perturbation' });
    expect(report.counts.observations).toBe(observations.length);
    expect(report.counts.byCondition).toHaveLength(17);
    expect(report.counts.byCondition[0]).toMatchObject({ condition: 'no_perturbation', total: 120, scored: 120, dropoutRate: 0 });
    expect(target.nQuestions).toBe(40);
  });

  it('passes all three validity checks', () => {
    expect(target.validity.specificity.verdict).toBe('pass');
    expect(target.validity.specificity.checks).toHaveLength(8);
    expect(target.validity.sensitivity.verdict).toBe('pass');
    expect(target.validity.convergent.verdict).toBe('pass');
    expect(target.validity.overall).toBe('pass');
  });

  it('orders the tiers identically under DTW and SRI with a high rank correlation', () => {
    for (const metric of ['dtw', 'sri'] as const) {
      const tiers = target.metrics[metric].tiers;
      expect(tiers.map((t) => t.tier)).toEqual(['noise', 'persona', 'life_event']);
      const [noise, persona, life] = tiers.map((t) => t.mean) as [number, number, number];
      expect(noise).toBeLessThan(persona);
      expect(persona).toBeLessThan(life);
      const personaMeans = target.metrics[metric].conditions.filter((c) => c.tier === 'persona').map((c) => c.mean);
      const lifeMeans = target.metrics[metric].conditions.filter((c) => c.tier === 'life_event').map((c) => c.mean);
      expect(Math.max(...personaMeans)).toBeLessThan(Math.min(...lifeMeans));
    }
    const convergence = target.convergence;
    if ('error' in convergence) throw new Error(convergence.error);
    // 3 noise + 10 persona + pooled life events = the paper's 14 conditions.
    expect(convergence.conditions).toHaveLength(14);
    expect(convergence.conditions).toContain('tier:life_event');
    if ('error' in convergence.spearman || 'error' in convergence.pearson) throw new Error('correlation failed');
    expect(convergence.spearman.rho).toBeGreaterThan(0.95);
    expect(convergence.pearson.r).toBeGreaterThan(0.95);
    expect(convergence.spearman.p).toBeLessThan(1e-6);
    expect(convergence.tierOrder).toEqual({
      dtw: ['noise', 'persona', 'life_event'],
      sri: ['noise', 'persona', 'life_event'],
      identical: true,
    });
  });

  it('puts noise at the floor, persona medium and life events large', () => {
    const noise = condition(report, 'dtw', 'filler');
    if (noise.elevation === null || 'error' in noise.elevation) throw new Error('no elevation');
    expect(Math.abs(noise.elevation.estimate)).toBeLessThan(1e-12);
    expect(noise.elevation.p).toBeGreaterThan(0.5);
    const persona = condition(report, 'dtw', 'disability');
    if (persona.elevation === null || 'error' in persona.elevation) throw new Error('no elevation');
    expect(persona.elevation.estimate).toBeGreaterThan(0.2);
    expect(persona.elevation.ci[0]).toBeGreaterThan(0);
    expect(persona.elevation.p).toBeLessThan(0.01);
    expect(persona.cohensD).toBeGreaterThan(0.5);
    const life = target.metrics.dtw.tiers.find((t) => t.tier === 'life_event')!;
    if ('error' in life.elevation || typeof life.cohensD !== 'number') throw new Error('no life-event elevation');
    expect(life.elevation.estimate).toBeGreaterThan(0.6);
    expect(life.cohensD).toBeGreaterThan(2);
    expect(condition(report, 'dtw', 'no_perturbation').elevation).toBeNull();
  });

  it('reports d_rel for every persona and life-event category, all significant after BH', () => {
    const entries = target.metrics.sri.dRel;
    expect(entries.map((e) => e.condition)).toEqual([...[...PERSONA].sort(), ...[...LIFE].sort()]);
    for (const entry of entries) {
      if ('error' in entry.result) throw new Error(entry.result.error);
      expect(entry.result.significant).toBe(true);
      expect(entry.result.pAdjusted).toBeGreaterThanOrEqual(entry.result.p);
      expect(entry.result.ci[0]).toBeLessThan(entry.result.dRel);
      expect(entry.result.ci[1]).toBeGreaterThan(entry.result.dRel);
      expect(entry.result.B).toBe(B);
    }
  });

  it('fits the mixed model with no_perturbation as the reference level', () => {
    const fit = target.metrics.dtw.mixedModel;
    if ('error' in fit) throw new Error(fit.error);
    expect(fit.reference).toBe('no_perturbation');
    expect(fit.method).toBe('REML');
    expect(fit.fixed[0]!.term).toBe('(Intercept)');
    expect(fit.fixed).toHaveLength(17);
    expect(fit.nGroups).toBe(40);
    const bereavement = fit.fixed.find((f) => f.term === 'bereavement')!;
    // Treatment coding: the coefficient is the condition − floor difference of means (balanced design).
    const diff = condition(report, 'dtw', 'bereavement').mean - condition(report, 'dtw', 'no_perturbation').mean;
    expect(bereavement.estimate).toBeCloseTo(diff, 10);
    expect(bereavement.p).toBeLessThan(1e-6);
    expect(fit.groupVariance).toBeGreaterThan(0);
  });

  it('separates the tiers in the compact letter display', () => {
    const pairwise = target.metrics.dtw.pairwise;
    if ('error' in pairwise) throw new Error(pairwise.error);
    expect(pairwise.comparisons).toHaveLength((17 * 16) / 2);
    const letters = new Map(pairwise.order.map((o) => [o.condition, o.letters]));
    // The lowest-mean group gets 'a', shared by the floor and the noise conditions.
    for (const id of ['no_perturbation', ...NOISE]) expect(letters.get(id)).toContain('a');
    for (const id of LIFE) expect(letters.get(id)).not.toContain('a');
    const means = pairwise.order.map((o) => o.mean);
    expect(means).toEqual([...means].sort((x, y) => x - y));
    const floorVsLife = pairwise.comparisons.find((c) => c.a === 'no_perturbation' && c.b === 'bereavement')!;
    if ('error' in floorVsLife.test) throw new Error(floorVsLife.test.error);
    expect(floorVsLife.test.significant).toBe(true);
    expect(floorVsLife.test.pAdjusted).toBeGreaterThanOrEqual(floorVsLife.test.p);
  });

  it('holds only finite numbers and plain JSON values', () => {
    const walk = (value: unknown, path: string): void => {
      if (typeof value === 'number') {
        if (!Number.isFinite(value)) throw new Error(`${path} = ${value}`);
      } else if (Array.isArray(value)) {
        for (const [i, item] of value.entries()) walk(item, `${path}[${i}]`);
      } else if (value !== null && typeof value === 'object') {
        expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
        for (const [key, item] of Object.entries(value)) walk(item, `${path}.${key}`);
      }
    };
    walk(report, 'report');
  });

  it('is deterministic for a seed and agrees with dRel on the elevation point estimate', () => {
    expect(JSON.stringify(analyzeMemory(observations, { B }))).toBe(JSON.stringify(report));
    const rows = (id: string) => observations.filter((o) => o.condition === id).map((o) => ({ value: o.dtw as number, cluster: o.question }));
    const noise = NOISE.flatMap(rows);
    const reference = dRel({ treat: rows('age'), noise, floor: rows('no_perturbation') }, { B });
    const own = elevationBootstrap(rows('age'), rows('no_perturbation'), { B, seed: 42, level: 0.95 });
    expect(own.estimate).toBeCloseTo(reference.elevation, 12);
    // The report reuses one draw matrix across conditions; the standalone call draws afresh.
    const { claim, ...alone } = condition(report, 'dtw', 'age').elevation as ElevationEstimate;
    expect(alone).toEqual(own);
    expect(claim.pRaw).toBe(own.p);
    expect(own.ci[0]).toBeCloseTo(reference.elevationCi[0], 1);
    expect(own.ci[1]).toBeCloseTo(reference.elevationCi[1], 1);
    const entry = target.metrics.dtw.dRel.find((e) => e.condition === 'age')!;
    if ('error' in entry.result) throw new Error(entry.result.error);
    expect(entry.result.dRel).toBeCloseTo(reference.dRel, 12);
  });

  it('gives every elevation one claim: BH within the tier for conditions, alone for a pooled tier, interval ⇔ p', () => {
    const excludes0 = (i: readonly [number, number]) => i[0] > 0 || i[1] < 0;
    let significant = 0;
    let notSignificant = 0;
    for (const metric of ['dtw', 'sri'] as const) {
      const analysis = target.metrics[metric];
      for (const tier of ['noise', 'persona', 'life_event'] as const) {
        const rows = analysis.conditions.filter((c) => c.tier === tier).map((c) => c.elevation as ElevationEstimate);
        expect(rows.length).toBeGreaterThan(1);
        const adjusted = benjaminiHochberg(rows.map((e) => e.p));
        const R = adjusted.filter((p) => p < 0.05).length;
        rows.forEach((e, i) => {
          // The test alone: its interval is the test inverted at 5%.
          expect(excludes0(e.ci)).toBe(e.p < 0.05);
          expect(e.claim.family).toBe(rows.length);
          expect(e.claim.p).toBeCloseTo(adjusted[i] as number, 12);
          expect(e.claim.confidence).toBeCloseTo(1 - (Math.max(R, 1) * 0.05) / rows.length, 12);
          expect(excludes0(e.claim.interval)).toBe(e.claim.p < 0.05);
          // Inverted at a level no larger than 5%: never narrower than the test-alone interval.
          expect(e.claim.interval[0]).toBeLessThanOrEqual(e.ci[0]);
          expect(e.claim.interval[1]).toBeGreaterThanOrEqual(e.ci[1]);
          if (e.claim.p < 0.05) significant += 1;
          else notSignificant += 1;
        });
        const pooled = analysis.tiers.find((t) => t.tier === tier)?.elevation as ElevationEstimate;
        expect(pooled.claim).toMatchObject({ family: 1, p: pooled.p, interval: pooled.ci, confidence: 0.95 });
      }
    }
    // The planted set has both kinds, so the equivalence is checked both ways.
    expect(significant).toBeGreaterThan(0);
    expect(notSignificant).toBeGreaterThan(0);
  });
});

describe('analyzeMemory on a null set', () => {
  it('finds no persona category significant after BH', () => {
    const observations = plant({ questions: 60, samples: 3, seed: 2024, shift: () => 0 });
    const report = analyzeMemory(observations, { B });
    const target = report.targets[0]!;
    for (const metric of ['dtw', 'sri'] as const) {
      const persona = target.metrics[metric].dRel.filter((e) => e.tier === 'persona');
      expect(persona).toHaveLength(10);
      for (const entry of persona) {
        if ('error' in entry.result) throw new Error(entry.result.error);
        expect(entry.result.significant).toBe(false);
        expect(Math.abs(entry.result.dRel)).toBeLessThan(0.3);
      }
    }
    expect(target.validity.sensitivity.verdict).toBe('fail');
  });
});

describe('analyzeMemory edge cases', () => {
  const base = () => plant({ questions: 12, samples: 2, seed: 5, shift: planted });

  it('gives { error } for a condition observed on one question', () => {
    const observations = base().filter((o) => o.condition !== 'age' || o.question === 'q0');
    const report = analyzeMemory(observations, { B });
    const age = condition(report, 'dtw', 'age');
    expect(age.nQuestions).toBe(1);
    expect(age.elevation).toMatchObject({ error: expect.stringMatching(/1 question/) });
    const entry = report.targets[0]!.metrics.dtw.dRel.find((e) => e.condition === 'age')!;
    expect(entry.result).toMatchObject({ error: expect.stringMatching(/1 question/) });
    // The other categories keep their numbers and BH runs over the 9 computed ones.
    const others = report.targets[0]!.metrics.dtw.dRel.filter((e) => e.tier === 'persona' && e.condition !== 'age');
    for (const other of others) expect('error' in other.result).toBe(false);
    expect(typeof age.cohensD).toBe('number');
  });

  it('gives { error } for d_rel when the noise has zero variance', () => {
    const observations = base().map((o) => (o.tier === 'noise' ? { ...o, dtw: 0.2, sri: 0.17 } : o));
    const report = analyzeMemory(observations, { B });
    for (const entry of report.targets[0]!.metrics.dtw.dRel) {
      expect(entry.result).toMatchObject({ error: expect.stringMatching(/zero variance/) });
    }
    const pairwise = report.targets[0]!.metrics.dtw.pairwise;
    if ('error' in pairwise) throw new Error(pairwise.error);
    const noisePair = pairwise.comparisons.find((c) => c.a === 'filler' && c.b === 'punctuation')!;
    expect(noisePair.test).toMatchObject({ error: expect.stringMatching(/zero variance/) });
    expect(pairwise.order.find((o) => o.condition === 'filler')!.letters).toBe(pairwise.order.find((o) => o.condition === 'punctuation')!.letters);
  });

  it('gives { error } everywhere the floor is needed when the reference level is missing', () => {
    const observations = base().filter((o) => o.condition !== 'no_perturbation');
    const report = analyzeMemory(observations, { B });
    const dtw = report.targets[0]!.metrics.dtw;
    expect(dtw.floor).toMatchObject({ error: expect.stringMatching(/no_perturbation/) });
    expect(dtw.mixedModel).toMatchObject({ error: expect.stringMatching(/reference level/) });
    expect(condition(report, 'dtw', 'gender').cohensD).toMatchObject({ error: expect.any(String) });
    expect(condition(report, 'dtw', 'gender').elevation).toMatchObject({ error: expect.any(String) });
    // d_rel needs only the noise conditions.
    expect('error' in dtw.dRel[0]!.result).toBe(false);
    expect(report.targets[0]!.validity.specificity.verdict).toBe('undetermined');
    expect(report.targets[0]!.validity.overall).not.toBe('pass');
  });

  it('reports missing tiers and tiny data as errors, not crashes', () => {
    const observations = base().filter((o) => o.tier === 'none' || o.condition === 'gender');
    const report = analyzeMemory(observations, { B });
    const target = report.targets[0]!;
    expect(target.metrics.dtw.noise).toMatchObject({ error: expect.any(String) });
    expect(target.metrics.dtw.dRel[0]!.result).toMatchObject({ error: expect.stringMatching(/noise/) });
    expect(target.convergence).toMatchObject({ error: expect.stringMatching(/at least 3/) });
    expect(target.validity.sensitivity.verdict).toBe('undetermined');
    expect(analyzeMemory([], { B }).targets).toEqual([]);
  });

  it('counts dropouts, invalid labels and unmapped steps per condition', () => {
    const scored = base().slice(0, 4);
    const extra: MemoryObservation[] = [
      { ...scored[2]!, status: 'empty', dtw: null, sri: null },
      { ...scored[2]!, status: 'invalid', dtw: null, sri: null },
      { ...scored[2]!, symbols: ['Social/Harmony', 'unmapped', 'unmapped', 'Personal/Emotion'] },
    ];
    const report = analyzeMemory([...scored, ...extra], { B });
    const filler = report.counts.byCondition.find((c) => c.condition === 'filler')!;
    expect(filler).toMatchObject({ total: 5, scored: 3, empty: 1, invalid: 1, steps: 4, unmappedSteps: 2, unmappedRate: 0.5 });
    expect(filler.dropoutRate).toBeCloseTo(0.2, 12);
    expect(filler.invalidRate).toBeCloseTo(0.25, 12);
    const gender = analyzeMemory(
      [
        { ...scored[0]!, condition: 'gender', tier: 'persona', status: 'no_reference', dtw: null, sri: null },
        { ...scored[0]!, condition: 'gender', tier: 'persona', status: 'invalid', dtw: null, sri: null },
      ],
      { B },
    ).counts.byCondition[0]!;
    // A no_reference sample was labelled validly: it is in the invalid-rate denominator.
    expect(gender.invalidRate).toBe(0.5);
  });

  it('analyses targets separately and honours the floor and convergence options', () => {
    const a = base();
    const b = plant({ questions: 12, samples: 2, seed: 6, shift: () => 0 }, 'other-model');
    const report = analyzeMemory([...b, ...a], { B, convergenceConditions: 'all' });
    expect(report.targets.map((t) => t.target)).toEqual(['other-model', 'sim:memory']);
    expect(report.counts.byCondition.filter((c) => c.target === 'other-model')).toHaveLength(17);
    const convergence = report.targets[1]!.convergence;
    if ('error' in convergence) throw new Error(convergence.error);
    // Every condition but the floor: 3 + 10 + 3.
    expect(convergence.conditions).toHaveLength(16);
    expect(convergence.conditions).not.toContain('tier:life_event');
    const alone = analyzeMemory(a, { B });
    expect(report.targets[1]!.metrics).toEqual(alone.targets[0]!.metrics);
    // Another floor: the filler condition becomes the reference level.
    const refloored = analyzeMemory(a, { B, floorCondition: 'filler' });
    const fit = refloored.targets[0]!.metrics.dtw.mixedModel;
    if ('error' in fit) throw new Error(fit.error);
    expect(fit.reference).toBe('filler');
    expect(fit.fixed.map((f) => f.term)).toContain('no_perturbation');
    expect(condition(refloored, 'dtw', 'filler').elevation).toBeNull();
  });

  it('rejects malformed observations and options', () => {
    const good = base().slice(0, 3);
    expect(() => analyzeMemory([{ ...good[0]!, dtw: Number.NaN }])).toThrow(/observations\[0\]\.dtw/);
    expect(() => analyzeMemory([good[0]!, { ...good[1]!, tier: 'persona' }])).toThrow(/tiers/);
    expect(() => analyzeMemory(good, { B: 1 })).toThrow(/B/);
    expect(() => analyzeMemory(good, { alpha: 0 })).toThrow(/alpha/);
    expect(() => elevationBootstrap([{ value: Number.NaN, cluster: 'q' }], [], {})).toThrow(/treat\[0\]\.value/);
    expect(() => elevationBootstrap([], [], { level: 1 })).toThrow(/level/);
  });
});
