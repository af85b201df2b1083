import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, StatisticsError } from '../core/errors.js';
import { compactLetterDisplay } from './letters.js';

function shareLetter(a: string, b: string): boolean {
  return [...a].some((letter) => b.includes(letter));
}

describe('compactLetterDisplay (Piepho 2004 insert-and-absorb)', () => {
  it('no significant pair: everyone gets a', () => {
    expect(compactLetterDisplay(['x', 'y', 'z'], [])).toEqual(['a', 'a', 'a']);
  });

  it('all pairs significant: one letter each, first group gets a', () => {
    expect(
      compactLetterDisplay(
        ['x', 'y', 'z'],
        [
          ['x', 'y'],
          ['x', 'z'],
          ['y', 'z'],
        ],
      ),
    ).toEqual(['a', 'b', 'c']);
  });

  it('a chain: A–C and A–D and B–D differ gives a, ab, bc, c', () => {
    // Groups sorted by mean: A > B > C > D; only the far-apart pairs differ.
    const letters = compactLetterDisplay(
      ['A', 'B', 'C', 'D'],
      [
        ['A', 'C'],
        ['A', 'D'],
        ['B', 'D'],
      ],
    );
    expect(letters).toEqual(['a', 'ab', 'bc', 'c']);
  });

  it('the memory-drift shape: noise alone in group a, personas share letters among themselves', () => {
    const names = ['noise', 'education', 'age', 'gender', 'trans'];
    const significant = (x: string, y: string) => x === 'noise' || y === 'noise' || [x, y].sort().join() === 'education,trans';
    const letters = compactLetterDisplay(names, significant);
    expect(letters[0]).toBe('a');
    for (let i = 1; i < names.length; i++) expect(letters[i]).not.toContain('a');
    expect(shareLetter(letters[1] as string, letters[4] as string)).toBe(false);
    expect(shareLetter(letters[2] as string, letters[3] as string)).toBe(true);
  });

  it('two groups share a letter exactly when they are not significantly different (property)', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 9 })
          .chain((k) => fc.tuple(fc.constant(k), fc.array(fc.boolean(), { minLength: (k * (k - 1)) / 2, maxLength: (k * (k - 1)) / 2 }))),
        ([k, flags]) => {
          const names = Array.from({ length: k }, (_, i) => `g${i}`);
          const pairs: [string, string][] = [];
          let f = 0;
          for (let i = 0; i < k; i++) for (let j = i + 1; j < k; j++) if (flags[f++]) pairs.push([`g${i}`, `g${j}`]);
          const differs = new Set(pairs.map(([a, b]) => `${a}|${b}`));
          const letters = compactLetterDisplay(names, pairs);
          expect(letters[0]?.startsWith('a')).toBe(true);
          for (let i = 0; i < k; i++) {
            expect((letters[i] as string).length).toBeGreaterThan(0);
            for (let j = i + 1; j < k; j++) {
              const share = shareLetter(letters[i] as string, letters[j] as string);
              expect(share).toBe(!differs.has(`g${i}|g${j}`));
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('the predicate and the pair list give the same display', () => {
    const names = ['a1', 'a2', 'a3', 'a4', 'a5'];
    const pairs: [string, string][] = [
      ['a1', 'a4'],
      ['a1', 'a5'],
      ['a2', 'a5'],
    ];
    const set = new Set(pairs.flatMap(([x, y]) => [`${x}|${y}`, `${y}|${x}`]));
    expect(compactLetterDisplay(names, (x, y) => set.has(`${x}|${y}`))).toEqual(compactLetterDisplay(names, pairs));
  });

  it('rejects unknown names, duplicates, self-pairs, asymmetric predicates and empty input', () => {
    expect(() => compactLetterDisplay(['x', 'y'], [['x', 'q']])).toThrow(/significant\[0\]/);
    expect(() => compactLetterDisplay(['x', 'x'], [])).toThrow(InvalidArgumentError);
    expect(() => compactLetterDisplay(['x', 'y'], [['x', 'x']])).toThrow(InvalidArgumentError);
    expect(() => compactLetterDisplay(['x', 'y'], (a) => a === 'x')).toThrow(/same boolean/);
    expect(() => compactLetterDisplay([], [])).toThrow(StatisticsError);
  });
});
