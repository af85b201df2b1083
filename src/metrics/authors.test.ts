import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REWARD_PRESETS, scoreLabelledResponse } from '../memory-drift/mitigation/reward.js';
import {
  authorsDrift,
  authorsFormatReward,
  authorsJensenShannon,
  authorsLexicalDiversity,
  authorsPerturbationDrift,
  pythonSplit,
  pythonStrip,
} from './authors.js';
import { formatReward } from './format-reward.js';
import { jensenShannon } from './jensen-shannon.js';
import { lexicalDiversity } from './lexical-diversity.js';
import { sri, sriDrift } from './sri.js';

/**
 * The DriftLens authors' reward and metric definitions against their own functions on 500
 * generated responses (empty, whitespace-only, untagged, `Step N:` forms, upper-case tags,
 * Unicode digits and spaces, unterminated answers; 79 with an empty label sequence, as their
 * pipeline gives for an invalid labeler output). Golden values: tools/golden/PARITY.md.
 */
interface Case {
  text: string;
  reference: string[];
  symbols: string[];
  compute_score: number;
  format_reward: number;
  lexical_diversity: number;
  dtw_reward: number;
  sri_reward: number;
}
const golden = JSON.parse(readFileSync(new URL('./__fixtures__/golden-authors-rewards.json', import.meta.url), 'utf8')) as {
  embeddings: Record<string, number[]>;
  cases: Case[];
  edge: Array<{ a: string[]; b: string[]; js: number; drift: number; sri: number; sriMany: number }>;
};
const embed = (symbol: string) => golden.embeddings[symbol] as number[];

describe("the DriftLens authors' definitions (rules: authors)", () => {
  it('the authors preset equals their compute_score on all 500 responses to 1e-9 (and authors-sri their 0.4·DTW + 0.4·SRI + 0.2·format)', () => {
    expect(golden.cases).toHaveLength(500);
    let worst = 0;
    for (const c of golden.cases) {
      const got = scoreLabelledResponse(c.text, c.reference, c.symbols, REWARD_PRESETS.authors, { embed });
      worst = Math.max(worst, Math.abs(got.reward - c.compute_score));
      expect(Math.abs(got.reward - c.compute_score), JSON.stringify(c.text)).toBeLessThan(1e-9);
      const withSri = scoreLabelledResponse(c.text, c.reference, c.symbols, REWARD_PRESETS['authors-sri'], { embed });
      expect(Math.abs(withSri.reward - (0.4 * c.dtw_reward + 0.4 * c.sri_reward + 0.2 * c.format_reward))).toBeLessThan(1e-9);
    }
    expect(worst).toBeLessThan(1e-9);
    expect(golden.cases.filter((c) => c.symbols.length === 0).length).toBeGreaterThan(50);
  });

  it('format reward and lexical diversity equal theirs exactly on every response, and the paper presets keep the paper definitions', () => {
    let formatDiffers = 0;
    let diversityDiffers = 0;
    for (const c of golden.cases) {
      expect(authorsFormatReward(c.text), JSON.stringify(c.text)).toBe(c.format_reward);
      expect(Math.abs(authorsLexicalDiversity(c.text) - c.lexical_diversity), JSON.stringify(c.text)).toBeLessThan(1e-12);
      if (formatReward(c.text) !== c.format_reward) formatDiffers++;
      if (Math.abs(lexicalDiversity(c.text) - c.lexical_diversity) > 1e-12) diversityDiffers++;
    }
    // The paper's definitions are different functions: the generated texts tell them apart.
    expect(formatDiffers).toBeGreaterThan(50);
    expect(diversityDiffers).toBeGreaterThan(50);
    const paper = scoreLabelledResponse('<step_1>a</step_1><answer>x</answer>', ['D/P'], ['D/P'], REWARD_PRESETS.paper);
    expect(paper.format).toBe(formatReward('<step_1>a</step_1><answer>x</answer>'));
  });

  it("JS, drift and SRI with the authors flag equal theirs on empty and non-empty sequences; without it they stay the paper's", () => {
    for (const e of golden.edge) {
      expect(Math.abs(authorsJensenShannon(e.a, e.b) - e.js)).toBeLessThan(1e-12);
      expect(Math.abs(jensenShannon(e.a, e.b, { authors: true }) - e.js)).toBeLessThan(1e-12);
      expect(Math.abs(authorsDrift(e.a, e.b) - e.drift)).toBeLessThan(1e-12);
      expect(Math.abs(sriDrift(e.a, e.b, 0.5, { authors: true }) - e.drift)).toBeLessThan(1e-12);
      expect(Math.abs(1 - authorsPerturbationDrift(e.a, [e.b]) - e.sri)).toBeLessThan(1e-12);
      expect(Math.abs(1 - sri(e.a, [e.b, e.a, ['B']], 0.5, { authors: true }) - e.sriMany)).toBeLessThan(1e-12);
    }
    // One empty side: theirs ≈ 0.7071 (JS) and 0.8536 (drift); the paper's metric says 1.
    expect(authorsJensenShannon(['A'], [])).toBeCloseTo(Math.SQRT1_2, 6);
    expect(jensenShannon(['A'], [])).toBe(1);
    expect(sriDrift(['A'], [])).toBe(1);
  });

  it("Python's strip and split: \\x1c–\\x1f and \\x85 are spaces, the BOM is not", () => {
    expect(pythonStrip('\x1c a \x85')).toBe('a');
    expect(pythonStrip('\ufeffa')).toBe('\ufeffa');
    expect(pythonSplit('a\x1fb\u3000c  d')).toEqual(['a', 'b', 'c', 'd']);
  });
});
