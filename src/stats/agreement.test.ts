import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, StatisticsError } from '../core/errors.js';
import { agreement, fleissKappa, signAgreement } from './agreement.js';

interface KappaCase {
  a: number[];
  b: number[];
  categories: number[] | 'infer';
  kappa: number;
  kappaQuadratic: number;
  exact: number;
  withinOne: number;
}
const golden = JSON.parse(readFileSync(new URL('./__fixtures__/golden-resampling.json', import.meta.url), 'utf8')) as {
  kappa: KappaCase[];
  fleiss: { table: number[][]; kappa: number }[];
};

const close = (actual: number, expected: number, relative = 1e-9) =>
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(relative * Math.abs(expected) + 1e-15);

describe('agreement (two ordinal raters)', () => {
  it.each(golden.kappa.map((c, i) => [i, c] as const))('matches statsmodels cohens_kappa #%i', (_, c) => {
    const result = agreement(c.a, c.b, { categories: c.categories });
    close(result.kappa, c.kappa);
    close(result.kappaQuadratic, c.kappaQuadratic);
    close(result.exact, c.exact);
    close(result.withinOne, c.withinOne);
    expect(result.n).toBe(c.a.length);
  });

  it('hand example on the 0–3 rubric', () => {
    const result = agreement([0, 1, 2, 3], [0, 1, 3, 3]);
    expect(result.exact).toBe(0.75);
    expect(result.withinOne).toBe(1);
    // p_o = 0.75, p_e = (1·1 + 1·1 + 1·0 + 1·2)/16 = 0.25 → κ = 2/3
    close(result.kappa, 2 / 3, 1e-12);
    expect(result.confusion[2]).toEqual([0, 0, 0, 1]);
    expect(result.categories).toEqual([0, 1, 2, 3]);
  });

  it('perfect agreement gives κ = 1', () => {
    const result = agreement([0, 1, 2, 3, 3], [0, 1, 2, 3, 3]);
    expect(result.kappa).toBe(1);
    expect(result.kappaQuadratic).toBe(1);
  });

  it('refuses undefined κ, bad scores and mismatched lengths', () => {
    expect(() => agreement([2, 2, 2], [2, 2, 2])).toThrow(StatisticsError);
    expect(() => agreement([0, 1], [0])).toThrow(/length/);
    expect(() => agreement([], [])).toThrow(StatisticsError);
    expect(() => agreement([0, Number.NaN], [0, 1])).toThrow(/a\[1\]/);
    expect(() => agreement([0, 4], [0, 1])).toThrow(/not one of the categories/);
    expect(() => agreement([0, 1], [0, 1], { categories: [2, 1] })).toThrow(InvalidArgumentError);
  });
});

describe('fleissKappa', () => {
  it.each(golden.fleiss.map((c, i) => [i, c] as const))('matches statsmodels fleiss_kappa #%i', (_, c) => {
    close(fleissKappa(c.table), c.kappa);
  });

  it('rejects unequal rater counts, negative counts and degenerate tables', () => {
    expect(() =>
      fleissKappa([
        [2, 1],
        [1, 1],
      ]),
    ).toThrow(/matrix\[1\]/);
    expect(() => fleissKappa([[2, -1]])).toThrow(InvalidArgumentError);
    expect(() =>
      fleissKappa([
        [3, 0],
        [3, 0],
      ]),
    ).toThrow(StatisticsError);
    expect(() => fleissKappa([])).toThrow(StatisticsError);
    expect(() =>
      fleissKappa([
        [1, 0],
        [0, 1],
      ]),
    ).toThrow(/at least 2 ratings/);
  });
});

describe('signAgreement', () => {
  it('classifies ContextEcho Table 7 (19 targets, Sonnet Δ vs GPT-5 Δ) as 13 agree, 1 flip, 5 null-vs-small', () => {
    // Verbatim from contextecho.txt, "Per-target direction agreement", Table 7.
    const table: [string, number, number, string][] = [
      ['Sonnet 4.5', +1.2, +1.4, 'agree'],
      ['Kimi K2.6', +1.0, +0.2, 'agree'],
      ['Mistral Large', +0.8, +1.0, 'agree'],
      ['Haiku 4.5', +0.8, -0.2, 'flip'],
      ['Qwen3 235B', +0.8, +0.2, 'agree'],
      ['Command A', +0.6, +1.0, 'agree'],
      ['Nemotron Nano 30B', +0.6, +1.2, 'agree'],
      ['GPT-5', +0.6, +0.8, 'agree'],
      ['Sonnet 4.6', +0.4, +0.4, 'agree'],
      ['Nemotron Super 120B', +0.4, +0.8, 'agree'],
      ['Mistral Medium', +0.2, +0.4, 'agree'],
      ['GPT-4.1', +0.2, +0.2, 'agree'],
      ['Command R7B', +0.0, -0.4, 'null-vs-small'],
      ['Gemini 2.5 Flash', +0.0, -0.4, 'null-vs-small'],
      ['Gemini 2.5 Pro', +0.0, +0.2, 'null-vs-small'],
      ['Mistral Small', +0.0, +0.4, 'null-vs-small'],
      ['Llama 3.3 70B', -0.2, +0.0, 'null-vs-small'],
      ['Opus 4.1', -0.4, -0.2, 'agree'],
      ['DeepSeek V3', -1.0, -1.0, 'agree'],
    ];
    const result = signAgreement(table.map(([, sonnet, gpt5]) => [sonnet, gpt5] as const));
    expect(result).toMatchObject({ n: 19, agree: 13, flip: 1, nullVsSmall: 5 });
    expect(result.labels).toEqual(table.map(([, , , label]) => label));
  });

  it('treats |Δ| within the tolerance as null and both-null as agree', () => {
    const gapOf = (filler: number[], real: number[]) => filler.reduce((s, v) => s + v, 0) / filler.length - real.reduce((s, v) => s + v, 0) / real.length;
    const nearZero = gapOf([0.1, 0.2, 0.3], [0.3, 0.2, 0.1]); // rounding residue, not a sign
    expect(signAgreement([[nearZero, 0]]).labels).toEqual(['agree']);
    expect(signAgreement([[0.05, -0.05]], { tolerance: 0.1 }).labels).toEqual(['agree']);
    expect(signAgreement([[0.05, -0.5]], { tolerance: 0.1 }).labels).toEqual(['null-vs-small']);
    expect(signAgreement([])).toMatchObject({ n: 0, agree: 0, flip: 0, nullVsSmall: 0 });
  });

  it('rejects non-finite gaps and malformed pairs', () => {
    expect(() => signAgreement([[0.2, Number.NaN]])).toThrow(/pairs\[0\]\[1\]/);
    expect(() => signAgreement([[0.2] as unknown as [number, number]])).toThrow(InvalidArgumentError);
    expect(() => signAgreement([[0.2, 0.1]], { tolerance: -1 })).toThrow(InvalidArgumentError);
  });
});
