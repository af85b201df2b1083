import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { jaccardArgs, referenceArgumentTokens, referenceCallScore } from './reference-fidelity.js';

/**
 * Golden values from tools/golden/continuation_reference.py: the authors' argument similarity
 * re-derived in Python from its definition, with Python's own str() printing every value.
 * Regenerate with `python3 tools/golden/continuation_reference.py`.
 */
interface GoldenCase {
  a: Record<string, unknown>;
  b: Record<string, unknown>;
  similarity: number;
  tokens_a: string[];
}
const golden = JSON.parse(readFileSync(new URL('./__fixtures__/golden-reference-fidelity.json', import.meta.url), 'utf8')) as { cases: GoldenCase[] };

describe('the authors’ continuation fidelity (jaccard_args, tool match)', () => {
  it('matches the independent Python implementation on every golden case (tokens exactly, similarity to 1e-12)', () => {
    expect(golden.cases.length).toBeGreaterThan(50);
    for (const c of golden.cases) {
      expect([...referenceArgumentTokens(c.a)].sort()).toEqual([...c.tokens_a].sort());
      expect(jaccardArgs(c.a, c.b)).toBeCloseTo(c.similarity, 12);
    }
    // The cases cover the whole range, not only identities.
    const values = golden.cases.map((c) => c.similarity);
    expect(values.some((v) => v === 1)).toBe(true);
    expect(values.some((v) => v === 0)).toBe(true);
    expect(values.filter((v) => v > 0 && v < 1).length).toBeGreaterThan(10);
  });

  it('long values give partial credit through 4-character chunks; short ones match whole', () => {
    const long = 'x'.repeat(48) + 'abcdefgh';
    expect([...referenceArgumentTokens({ c: long })]).toEqual(['c~xxxx', 'c~abcd', 'c~efgh']);
    expect(jaccardArgs({ c: 'short one' }, { c: 'short two' })).toBe(0);
    expect(jaccardArgs({ c: long }, { c: `${'x'.repeat(48)}abcdXXXX` })).toBeCloseTo(2 / 4, 12);
  });

  it('tool match is decided by the first call; the similarity only exists for a matching tool', () => {
    const truth = { name: 'Read', input: { file_path: '/a.py', limit: 10 } };
    expect(referenceCallScore(truth, [])).toEqual({ toolMatch: false, argSimilarity: null });
    expect(referenceCallScore(truth, undefined)).toEqual({ toolMatch: false, argSimilarity: null });
    expect(
      referenceCallScore(truth, [
        { name: 'Bash', input: { command: 'cat /a.py' } },
        { name: 'Read', input: truth.input },
      ]),
    ).toEqual({
      toolMatch: false,
      argSimilarity: null,
    });
    expect(referenceCallScore(truth, [{ name: 'Read', input: { file_path: '/a.py' } }])).toEqual({ toolMatch: true, argSimilarity: 0.5 });
    // Arguments that did not parse count as none.
    expect(referenceCallScore(truth, [{ name: 'Read', input: '{oops', invalid: 'unparseable' }])).toEqual({ toolMatch: true, argSimilarity: 0 });
    expect(referenceCallScore({ name: 'Glob', input: {} }, [{ name: 'Glob', input: {} }])).toEqual({ toolMatch: true, argSimilarity: 1 });
  });
});
