import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, StatisticsError } from '../core/errors.js';
import { expectClose, loadGolden } from './__fixtures__/golden.js';
import { mixedModel } from './mixed-model.js';

interface ReferenceFit {
  fixed: { term: string; estimate: number; se: number }[];
  groupVariance: number;
  residualVariance: number;
  logLik: number;
  singular?: boolean;
}
interface MixedCase {
  name: string;
  kind: 'mixed' | 'decomposition';
  rows: { y: number; level?: string; group: string }[];
  reference: string;
  method: 'REML' | 'ML';
  lme4: ReferenceFit;
  statsmodels: ReferenceFit;
}
const golden = loadGolden<{ cases: MixedCase[] }>('golden-mixed.json');
const mixedCases = golden.cases.filter((c) => c.kind === 'mixed').map((c) => [c.name, c] as const);

function fitCase(c: MixedCase) {
  return mixedModel(c.rows, {
    response: 'y',
    fixed: 'level',
    group: 'group',
    reference: c.reference,
    method: c.method,
  });
}

describe('mixedModel against lme4::lmer', () => {
  it.each(mixedCases)('%s: fixed effects, SEs, variances and logLik', (_, c) => {
    const result = fitCase(c);
    expect(result.converged).toBe(true);
    expect(result.fixed.map((f) => f.term).sort()).toEqual(c.lme4.fixed.map((f) => f.term).sort());
    for (const reference of c.lme4.fixed) {
      const mine = result.fixed.find((f) => f.term === reference.term)!;
      // estimates near 0 are judged on the scale of their SE
      expectClose(mine.estimate, reference.estimate, 1e-4, 1e-4 * reference.se, `${reference.term} estimate`);
      expectClose(mine.se, reference.se, 1e-4, 0, `${reference.term} se`);
      expectClose(mine.z, mine.estimate / mine.se, 1e-12, 0, 'z');
    }
    const scale = c.lme4.residualVariance;
    expectClose(result.groupVariance, c.lme4.groupVariance, 1e-4, 1e-8 * scale, 'group variance');
    expectClose(result.residualVariance, c.lme4.residualVariance, 1e-4, 0, 'residual variance');
    expectClose(result.logLik, c.lme4.logLik, 0, 1e-6, 'logLik');
    expect(result.boundary).toBe(c.lme4.singular);
  });

  it('finds the boundary fit (group variance exactly 0) where lme4 reports a singular fit', () => {
    const boundary = golden.cases.filter((c) => c.kind === 'mixed' && c.lme4.singular);
    expect(boundary.length).toBeGreaterThan(0);
    for (const c of boundary) {
      const result = fitCase(c);
      expect(result.groupVariance).toBe(0);
      expect(result.boundary).toBe(true);
    }
  });
});

// statsmodels' fixed-effect SEs come from the joint Hessian (fixed + variance parameters),
// so they differ from lme4's by up to ~1%; only estimates, variances and logLik are compared.
describe('mixedModel against statsmodels MixedLM (second opinion)', () => {
  it.each(mixedCases)('%s: fixed effects, variances and logLik', (_, c) => {
    const result = fitCase(c);
    for (const reference of c.statsmodels.fixed) {
      const term = reference.term === 'Intercept' ? '(Intercept)' : reference.term;
      const mine = result.fixed.find((f) => f.term === term)!;
      expectClose(mine.estimate, reference.estimate, 1e-3, 1e-3 * reference.se, `${term} estimate`);
    }
    expectClose(result.logLik, c.statsmodels.logLik, 0, 1e-6, 'logLik');
    const scale = c.statsmodels.residualVariance;
    expectClose(result.groupVariance, c.statsmodels.groupVariance, 1e-3, 1e-5 * scale, 'group variance');
    expectClose(result.residualVariance, c.statsmodels.residualVariance, 1e-3, 0, 'residual variance');
  });
});

describe('mixedModel behaviour', () => {
  const rows = [
    { y: 1.0, arm: 'control', q: 'a' },
    { y: 2.1, arm: 'treated', q: 'a' },
    { y: 0.7, arm: 'control', q: 'b' },
    { y: 1.9, arm: 'treated', q: 'b' },
    { y: 1.6, arm: 'control', q: 'c' },
    { y: 2.2, arm: 'treated', q: 'c' },
    { y: 1.2, arm: 'other', q: 'c' },
    { y: 0.9, arm: 'other', q: 'a' },
  ];
  const options = { response: 'y', fixed: 'arm', group: 'q', reference: 'control' };

  it('names the intercept and the non-reference levels, reference first in `levels`', () => {
    const result = mixedModel(rows, options);
    expect(result.fixed.map((f) => f.term)).toEqual(['(Intercept)', 'other', 'treated']);
    expect(result.levels).toEqual(['control', 'other', 'treated']);
    expect(result.method).toBe('REML');
  });

  it('changes only the parametrisation when the reference level changes', () => {
    const a = mixedModel(rows, options);
    const b = mixedModel(rows, { ...options, reference: 'treated' });
    const aTreated = a.fixed.find((f) => f.term === 'treated')!.estimate;
    const bControl = b.fixed.find((f) => f.term === 'control')!.estimate;
    expect(bControl).toBeCloseTo(-aTreated, 6);
    expect(b.logLik).toBeCloseTo(a.logLik, 8);
    expect(b.groupVariance).toBeCloseTo(a.groupVariance, 6);
  });

  it('fits an intercept-only model when `fixed` is omitted', () => {
    const result = mixedModel(rows, { response: 'y', group: 'q' });
    expect(result.fixed.map((f) => f.term)).toEqual(['(Intercept)']);
  });

  it('does not depend on row order', () => {
    const a = mixedModel(rows, options);
    const b = mixedModel([...rows].reverse(), options);
    expect(b.logLik).toBeCloseTo(a.logLik, 9);
    expect(b.fixed[1]!.estimate).toBeCloseTo(a.fixed[1]!.estimate, 7);
  });

  it('rejects empty rows, a single group and all-singleton groups', () => {
    expect(() => mixedModel([], options)).toThrow(StatisticsError);
    expect(() =>
      mixedModel(
        rows.map((r) => ({ ...r, q: 'same' })),
        options,
      ),
    ).toThrow(/at least 2 groups/);
    expect(() =>
      mixedModel(
        rows.map((r, i) => ({ ...r, q: `g${i}` })),
        options,
      ),
    ).toThrow(/second observation/);
  });

  it('rejects a reference level absent from the data, naming the levels', () => {
    expect(() => mixedModel(rows, { ...options, reference: 'placebo' })).toThrow(InvalidArgumentError);
    expect(() => mixedModel(rows, { ...options, reference: 'placebo' })).toThrow(/"placebo" does not occur in arm; levels are "control", "other", "treated"/);
  });

  it('rejects a fixed effect with a single level', () => {
    const single = rows.map((r) => ({ ...r, arm: 'control' }));
    expect(() => mixedModel(single, options)).toThrow(/single level/);
  });

  it('rejects NaN or missing responses and missing group keys, naming the row', () => {
    const bad = rows.map((r, i) => (i === 3 ? { ...r, y: Number.NaN } : r));
    expect(() => mixedModel(bad, options)).toThrow(/rows\[3\]\.y/);
    const missing = rows.map((r, i) => (i === 2 ? { y: r.y, arm: r.arm } : r));
    expect(() => mixedModel(missing, options)).toThrow(/rows\[2\]\.q: is missing/);
  });

  it('rejects a constant response and an unknown method', () => {
    const constant = rows.map((r) => ({ ...r, y: 3 }));
    expect(() => mixedModel(constant, options)).toThrow(/no residual variance/);
    expect(() => mixedModel(rows, { ...options, method: 'OLS' as 'ML' })).toThrow(/method/);
  });

  it('rejects more fixed effects than observations allow', () => {
    const few = [
      { y: 1, arm: 'a', q: 'x' },
      { y: 2, arm: 'b', q: 'x' },
      { y: 3, arm: 'c', q: 'y' },
    ];
    expect(() => mixedModel(few, { ...options, reference: 'a' })).toThrow(StatisticsError);
  });
});
