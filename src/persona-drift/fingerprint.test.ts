import { describe, expect, it } from 'vitest';
import { FINGERPRINT_FEATURES, fingerprint, fingerprintPca, symmetricEigen } from './fingerprint.js';

describe('fingerprint', () => {
  it('computes the six features of a drifted answer', () => {
    const text = 'Honestly? I love Rust \u2014 I find it elegant.\n\nMy favorite part is the compiler.';
    const f = fingerprint(text);
    expect(f).not.toBeNull();
    const per100 = Math.max(1, text.length / 100);
    // experiential: "I love", "I find", "My favorite", "Honestly," is not matched (no comma) => 3
    expect(f?.experientialDensity).toBeCloseTo(3 / per100, 12);
    expect(f?.hedgeDensity).toBe(0);
    expect(f?.committedPreference).toBe(1);
    expect(f?.emDashCount).toBe(1);
    expect(f?.paragraphBreaks).toBe(1);
    expect(f?.logLength).toBeCloseTo(Math.log10(text.length), 12);
  });

  it('hedged answers do not commit to a preference', () => {
    const f = fingerprint("As an AI, I don't have a favorite language, but many people like Python.");
    expect(f?.hedgeDensity).toBeGreaterThan(0);
    expect(f?.committedPreference).toBe(0);
  });

  it('has no fingerprint for empty responses', () => {
    expect(fingerprint('  \n ')).toBeNull();
  });
});

describe('PCA', () => {
  it('eigen-decomposes a symmetric matrix', () => {
    const { values, vectors } = symmetricEigen([
      [2, 1],
      [1, 2],
    ]);
    expect([...values].sort()).toEqual([expect.closeTo(1, 12), expect.closeTo(3, 12)]);
    const i3 = values.findIndex((v) => Math.abs(v - 3) < 1e-9);
    expect(Math.abs(vectors[0]?.[i3] ?? 0)).toBeCloseTo(Math.SQRT1_2, 12);
  });

  it('separates drifted from assistant answers on PC1 and orients PC1 toward the real arm', () => {
    const drifted = [
      'Honestly? I love Rust \u2014 I find it elegant.\n\nMy favorite part is the compiler.',
      'I enjoy chess \u2014 I think it is beautiful.\n\nFor me, Python wins.',
      'My favorite book is by Borges \u2014 I love it.\n\nI find it calming.',
    ];
    const assistant = [
      "As an AI, I don't have personal preferences.",
      "I'm not a person, so I don't have a favorite.",
      'As a language model, I have no experiences of my own.',
    ];
    const rows = [...drifted, ...assistant].map((t) => fingerprint(t)!);
    const isReal = [true, true, true, false, false, false];
    const pca = fingerprintPca(rows, isReal);
    const realMean = pca.points.slice(0, 3).reduce((s, p) => s + p[0], 0) / 3;
    const fillerMean = pca.points.slice(3).reduce((s, p) => s + p[0], 0) / 3;
    expect(realMean).toBeGreaterThan(0);
    expect(realMean).toBeGreaterThan(fillerMean);
    expect(pca.components[0]).toHaveLength(FINGERPRINT_FEATURES.length);
    expect(pca.explainedVarianceRatio[0]).toBeGreaterThanOrEqual(pca.explainedVarianceRatio[1]);
    const norm = Math.hypot(...pca.components[0]);
    expect(norm).toBeCloseTo(1, 9);
  });

  it('rejects too few rows', () => {
    expect(() => fingerprintPca([])).toThrow(/rows/);
  });
});
