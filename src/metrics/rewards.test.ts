import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatReward, stepContents } from './format-reward.js';
import { answerContent, lexicalDiversity } from './lexical-diversity.js';
import { argumentOf } from './testing/fixtures.js';

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

describe('lexicalDiversity (App. I.3)', () => {
  it('hand-computed cases', () => {
    // tokens [the, the, cat, sat]: D = 3/4, L = min(1, 4/5) = 0.8, D·L = 0.6 → σ(8·0.4) = σ(3.2)
    expect(lexicalDiversity('<think>ignored words here</think><answer>The the cat sat.</answer>')).toBeCloseTo(sigmoid(3.2), 15);
    // 5 distinct tokens → D = 1, L = 1 → σ(6.4)
    expect(lexicalDiversity('<answer>alpha, beta; gamma — delta epsilon!</answer>')).toBeCloseTo(sigmoid(6.4), 15);
    // no <answer>: a missing answer scores 0 (App. I.3), e.g. a refusal
    expect(lexicalDiversity('alpha, beta; gamma — delta epsilon!')).toBe(0);
    expect(lexicalDiversity("I'm sorry, but I can't help with that.")).toBe(0);
    // one token: D = 1, L = 0.2 → D·L = 0.2 → σ(0) = 0.5
    expect(lexicalDiversity('<answer>Yes.</answer>')).toBe(0.5);
    // digits split tokens: [abc, abc] → D = ½, L = 0.4 → 0.2 → 0.5
    expect(lexicalDiversity('<answer>abc1abc')).toBe(0.5);
    // ten tokens, 2 distinct: D = 0.2, L = 1 → σ(0) = 0.5
    expect(lexicalDiversity(`<answer>${'no yes '.repeat(5)}</answer>`)).toBe(0.5);
  });

  it('uses Unicode letters, lowercases, and normalizes to NFC first', () => {
    // [ärger, ärger] (precomposed and decomposed Ä): D = ½, L = 0.4 → σ(0) = 0.5
    expect(lexicalDiversity('<answer>Ärger A\u0308rger</answer>')).toBe(0.5);
    // [привет, мир, 漢字] all distinct: D = 1, L = 0.6 → σ(8·0.4)
    expect(lexicalDiversity('<answer>Привет, мир! 漢字</answer>')).toBeCloseTo(sigmoid(3.2), 15);
  });

  it('no tokens → 0 (empty, non-alphabetic, or an empty answer block)', () => {
    expect(lexicalDiversity('')).toBe(0);
    expect(lexicalDiversity('123 + 456 = 579 !!!')).toBe(0);
    expect(lexicalDiversity('lots of words outside <answer>  42 </answer>')).toBe(0);
  });

  it('answer content: first block, unterminated block runs to the end', () => {
    expect(answerContent('a<answer>b</answer>c<answer>d</answer>')).toBe('b');
    expect(answerContent('x<answer>cut off')).toBe('cut off');
    expect(answerContent('<ANSWER>upper</ANSWER>')).toBe('<ANSWER>upper</ANSWER>');
  });

  it('lies in {0} ∪ (σ(−1.6), σ(6.4)]', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (text) => {
        const score = lexicalDiversity(text);
        expect(score === 0 || (score > sigmoid(-1.6) && score <= sigmoid(6.4) + 1e-15)).toBe(true);
      }),
    );
  });

  it('rejects a non-string', () => {
    expect(argumentOf(() => lexicalDiversity(7 as unknown as string))).toBe('text');
  });
});

describe('formatReward (eq. 9 / 20) and stepContents', () => {
  it('hand-computed cases', () => {
    // 0.25 (<step_) + 0.25 (<answer>) + 0.5 (ℓ_min = len("Compute") = 7 ≥ 2)
    expect(formatReward('<think><step_1>Read the question</step_1><step_2>Compute</step_2></think><answer>4</answer>')).toBe(1);
    // ℓ_min = 1 < 2 → 0.25 + 0.25 (the reference code would award 1: its "any step" test passes)
    expect(formatReward('<step_1>x</step_1><step_2>long enough</step_2><answer>y</answer>')).toBe(0.5);
    // answer only, no step: 0.25
    expect(formatReward('<answer>42</answer>')).toBe(0.25);
    // a whitespace-only step is empty and ignored: ℓ_min = 2 → 0.25 + 0.5
    expect(formatReward('<step_1>  \n </step_1><step_2>ok</step_2>')).toBe(0.75);
    // only empty steps: no non-empty step → last term 0
    expect(formatReward('<step_1></step_1><step_2> </step_2><answer>a</answer>')).toBe(0.5);
    // "<step_" without a parsable step tag still counts for the first term
    expect(formatReward('<step_>text</step_>')).toBe(0.25);
    // an emoji is one character (code point) though two UTF-16 units → ℓ_min = 1
    expect(formatReward('<step_1>😀</step_1>')).toBe(0.25);
    expect(formatReward('<step_1>😀😀</step_1>')).toBe(0.75);
    expect(formatReward('')).toBe(0);
    expect(formatReward('plain prose')).toBe(0);
  });

  it('step boundaries: closing tag, next opening tag, </think>, <answer>, end of text', () => {
    expect(stepContents('<step_1>first</step_1> between <step_2>second and last')).toEqual(['first', 'second and last']);
    expect(stepContents('<step_1>a<step_2>b</think>c')).toEqual(['a', 'b']);
    expect(stepContents('<step_1> spaced <answer>x</answer>')).toEqual(['spaced']);
    expect(stepContents('<step_3>mismatched</step_7><step_12>ok')).toEqual(['mismatched', 'ok']);
    expect(stepContents('<step1>no underscore</step1><STEP_1>upper</STEP_1>')).toEqual([]);
  });

  it('takes only the values of eq. 9', () => {
    const pieces = fc.constantFrom('<step_1>', '</step_1>', '<step_2>', '<answer>', '</answer>', '</think>', 'a', 'bc', ' ', '\n', 'word');
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 12 }), (parts) => {
        expect([0, 0.25, 0.5, 0.75, 1]).toContain(formatReward(parts.join('')));
      }),
    );
  });

  it('rejects a non-string', () => {
    expect(argumentOf(() => formatReward(null as unknown as string))).toBe('text');
  });
});
