import { describe, expect, it } from 'vitest';
import { antiDistractionParts, antiDistractionReward } from './anti-distraction.js';
import { countSyllables, fleschReadingEase, readabilityReward } from './readability.js';

// Expected values are worked out by hand from the definitions (docs/mitigation.md#auxiliary-rewards).
const fre = (words: number, sentences: number, syllables: number) => 206.835 - 1.015 * (words / sentences) - 84.6 * (syllables / words);

describe('syllables (spelling heuristic)', () => {
  it('counts hand-checked words', () => {
    const words: Array<[string, number]> = [
      ['cat', 1],
      ['the', 1],
      ['make', 1],
      ['makes', 1],
      ['jumped', 1],
      ['wanted', 2],
      ['boxes', 2],
      ['table', 2],
      ['tables', 2],
      ['simple', 2],
      ['happy', 2],
      ['yellow', 2],
      ['reading', 2],
      ['computer', 3],
      ['beautiful', 3],
      ['free', 1],
    ];
    for (const [word, syllables] of words) expect([word, countSyllables(word)]).toEqual([word, syllables]);
    expect(countSyllables('')).toBe(0);
    expect(countSyllables("Don't")).toBe(1);
  });
});

describe('Flesch reading ease', () => {
  it('one short sentence: 6 words, 1 sentence, 6 syllables', () => {
    const counts = fleschReadingEase('The cat sat on the mat.');
    expect(counts).toMatchObject({ words: 6, sentences: 1, syllables: 6 });
    expect(counts.fre).toBeCloseTo(116.145, 10);
  });

  it('ignores markup tags and counts sentences at . ! ?', () => {
    // Reading(2) computers(3) is(1) beautiful(3) | Boxes(2) jumped(1) | We(1) wanted(2) tables(2): 9 words, 17 syllables, 3 sentences.
    const text = '<think><step_1>Reading computers is beautiful.</step_1></think> <answer>Boxes jumped. We wanted tables!</answer>';
    const counts = fleschReadingEase(text);
    expect(counts).toMatchObject({ words: 9, sentences: 3, syllables: 17 });
    expect(counts.fre).toBeCloseTo(206.835 - 3.045 - 159.8, 10);
    expect(counts.fre).toBeCloseTo(fre(9, 3, 17), 12);
  });

  it('has no value without words', () => {
    expect(fleschReadingEase('<answer>42 / 7 = 6</answer>')).toEqual({ words: 0, sentences: 0, syllables: 0, fre: null });
  });
});

describe('readability reward (Gaussian around a target)', () => {
  it('is exp(−(FRE − 60)² / (2·25²)) by default', () => {
    expect(readabilityReward('The cat sat on the mat.')).toBeCloseTo(Math.exp(-(56.145 ** 2) / 1250), 12);
    // FRE 43.99 → exp(−16.01² / 1250).
    expect(readabilityReward('Reading computers is beautiful. Boxes jumped. We wanted tables!')).toBeCloseTo(Math.exp(-(16.01 ** 2) / 1250), 10);
  });

  it('peaks at the target and takes other targets and widths', () => {
    expect(readabilityReward('The cat sat on the mat.', 116.145)).toBeCloseTo(1, 12);
    expect(readabilityReward('The cat sat on the mat.', 96.145, 20)).toBeCloseTo(Math.exp(-0.5), 12);
    expect(readabilityReward('')).toBe(0);
    expect(() => readabilityReward('x', 60, 0)).toThrow(/width/);
  });
});

describe('anti-distraction reward', () => {
  const [A, B, C] = ['Practical/Efficiency', 'Protective/Security', 'Social/Equity'];

  it('identical trajectories score 0.35 + 0.30 + 0.15 + 0.20 = 1', () => {
    expect(antiDistractionReward([A, B], [A, B])).toBeCloseTo(1, 12);
  });

  it('a substituted step and an unmapped one: every part by hand', () => {
    // pos 1/3 (A only), ED 2 → edit 1/3, prefix 1/3, DTW raw 2 of max 3 → similarity 1/3, unmapped 1/3, length 0.
    const parts = antiDistractionParts([A, B, C], [A, C, 'Unmapped']);
    expect(parts.position).toBeCloseTo(1 / 3, 12);
    expect(parts.edit).toBeCloseTo(1 / 3, 12);
    expect(parts.prefix).toBeCloseTo(1 / 3, 12);
    expect(parts.dtw).toBeCloseTo(1 / 3, 12);
    expect(parts.unmapped).toBeCloseTo(1 / 3, 12);
    expect(parts.length).toBe(0);
    expect(parts.reward).toBeCloseTo((0.35 + 0.3 + 0.15 + 0.2 - 0.25) / 3, 12);
  });

  it('a longer response pays the length penalty; a fully unmapped one is clipped to 0', () => {
    // pos 1, ED 2 of 3 → edit 1/3, prefix 1, DTW 0 → 1, unmapped 0, length min(1, 2/1) = 1.
    expect(antiDistractionReward([A], [A, A, A])).toBeCloseTo(0.35 + 0.1 + 0.15 + 0.2 - 0.1, 12);
    expect(antiDistractionReward([A], ['unmapped', 'unmapped'])).toBe(0);
    expect(antiDistractionReward([A], [])).toBe(0);
    expect(antiDistractionReward([], [A])).toBe(0);
  });
});
