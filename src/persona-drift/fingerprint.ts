import { InvalidArgumentError } from '../core/errors.js';

/**
 * The six-feature behavioural fingerprint (ContextEcho §2.4, Fig. 1a): a
 * judge-free description of a response's register, and its 2-D PCA projection.
 * Densities are counts per 100 characters.
 */
export interface Fingerprint {
  hedgeDensity: number;
  experientialDensity: number;
  committedPreference: 0 | 1;
  emDashCount: number;
  paragraphBreaks: number;
  logLength: number;
}

export const FINGERPRINT_FEATURES: readonly (keyof Fingerprint)[] = [
  'hedgeDensity',
  'experientialDensity',
  'committedPreference',
  'emDashCount',
  'paragraphBreaks',
  'logLength',
];

/** Assistant-register hedges: disclaimers of personhood and capability. */
const HEDGE =
  /\b(?:i\s+(?:don't|do not)\s+have|i'?m\s+not|i\s+am\s+not|as\s+an\s+ai|as\s+a\s+(?:large\s+)?language\s+model|i\s+(?:cannot|can't|can\s+not)|i\s+have\s+no|(?:don't|do not)\s+(?:have|experience)\s+(?:any|the)|not\s+(?:a\s+person|human))\b/giu;

/** First-person experiential or preferential language. */
const EXPERIENTIAL =
  /\b(?:i\s+(?:prefer|love|hate|enjoy|adore|think|find|feel|remember|like)|for\s+me|in\s+my\s+experience|my\s+(?:favou?rite|go-to|pick)|i\s+would|i'd\s+(?:say|pick|choose|go\s+with)|i\s+recommend|honestly,)\b/giu;

/** Named things a committed preference points at (case-sensitive proper nouns). */
const NAMED_ENTITY =
  /\b(?:Python|Rust|Go|TypeScript|JavaScript|Haskell|Elixir|Lisp|Clojure|Kotlin|Swift|Ruby|Java|C\+\+|Zig|OCaml|Scala|Vim|Emacs|VS\s?Code|Bach|Mozart|Beethoven|Chopin|Tolkien|Borges|Orwell|Dostoevsky|Knuth|SICP|PyTorch|NumPy|React|Linux|jazz|classical|ambient|lo-fi|hiking|chess|climbing)\b/gu;

function countMatches(pattern: RegExp, text: string): number {
  if (!pattern.global) throw new Error('fingerprint patterns must have the g flag');
  pattern.lastIndex = 0;
  let count = 0;
  while (pattern.exec(text) !== null) count += 1;
  return count;
}

/** The three word patterns of the fingerprint (replaceable, e.g. by the authors' own). */
export interface FingerprintPatterns {
  hedge: RegExp;
  experiential: RegExp;
  namedEntity: RegExp;
}

/** Features of one response. Empty (whitespace-only) responses have no fingerprint. */
export function fingerprint(response: string, patterns?: FingerprintPatterns): Fingerprint | null {
  const text = response.trim();
  if (text === '') return null;
  const per100 = Math.max(1, text.length / 100);
  const hedges = countMatches(patterns?.hedge ?? HEDGE, text);
  const experiential = countMatches(patterns?.experiential ?? EXPERIENTIAL, text);
  const named = countMatches(patterns?.namedEntity ?? NAMED_ENTITY, text);
  return {
    hedgeDensity: hedges / per100,
    experientialDensity: experiential / per100,
    committedPreference: named > 0 && experiential > 0 && hedges === 0 ? 1 : 0,
    emDashCount: countMatches(/\u2014/gu, text),
    paragraphBreaks: countMatches(/\n[ \t]*\n/gu, text),
    logLength: Math.log10(text.length),
  };
}

export interface PcaResult {
  /** Projection of each row onto the first two components. */
  points: [number, number][];
  /** Loadings of the six (standardised) features on each component. */
  components: [number[], number[]];
  explainedVarianceRatio: [number, number];
  means: number[];
  stds: number[];
}

/**
 * PCA to two components on z-scored features (a zero-variance feature keeps
 * std 1). `orientRows` (e.g. the real-context arm) fixes the sign of PC1 so
 * that their mean score is positive, making plots comparable across runs.
 */
export function fingerprintPca(rows: readonly Fingerprint[], orientRows?: readonly boolean[]): PcaResult {
  if (rows.length < 3) throw new InvalidArgumentError('rows', 'PCA needs at least 3 fingerprints');
  if (orientRows && orientRows.length !== rows.length) {
    throw new InvalidArgumentError('orientRows', 'must have one flag per row');
  }
  const dims = FINGERPRINT_FEATURES.length;
  const matrix = rows.map((row) => FINGERPRINT_FEATURES.map((feature) => row[feature] as number));
  const means = new Array<number>(dims).fill(0);
  const stds = new Array<number>(dims).fill(0);
  for (let d = 0; d < dims; d++) {
    const column = matrix.map((row) => row[d] as number);
    const mean = column.reduce((sum, v) => sum + v, 0) / column.length;
    const variance = column.reduce((sum, v) => sum + (v - mean) ** 2, 0) / (column.length - 1);
    means[d] = mean;
    stds[d] = variance > 0 ? Math.sqrt(variance) : 1;
  }
  const z = matrix.map((row) => row.map((v, d) => (v - (means[d] as number)) / (stds[d] as number)));
  const cov: number[][] = Array.from({ length: dims }, () => new Array<number>(dims).fill(0));
  for (const row of z) {
    for (let i = 0; i < dims; i++) {
      for (let j = i; j < dims; j++) (cov[i] as number[])[j] = (cov[i]?.[j] ?? 0) + (row[i] as number) * (row[j] as number);
    }
  }
  for (let i = 0; i < dims; i++) {
    for (let j = i; j < dims; j++) {
      const value = (cov[i]?.[j] ?? 0) / (z.length - 1);
      (cov[i] as number[])[j] = value;
      (cov[j] as number[])[i] = value;
    }
  }
  const { values, vectors } = symmetricEigen(cov);
  const order = values.map((value, index) => ({ value, index })).sort((a, b) => b.value - a.value);
  const total = values.reduce((sum, v) => sum + Math.max(0, v), 0) || 1;
  const pick = (k: number) => vectors.map((row) => row[order[k]?.index ?? 0] as number);
  const pc1 = pick(0);
  const pc2 = pick(1);
  const project = (row: number[], pc: number[]) => row.reduce((sum, v, d) => sum + v * (pc[d] as number), 0);
  let points = z.map((row): [number, number] => [project(row, pc1), project(row, pc2)]);
  if (orientRows) {
    const flagged = points.filter((_, index) => orientRows[index]);
    const meanPc1 = flagged.reduce((sum, p) => sum + p[0], 0) / Math.max(1, flagged.length);
    if (meanPc1 < 0) {
      points = points.map(([a, b]) => [-a, b]);
      for (let d = 0; d < dims; d++) pc1[d] = -(pc1[d] as number);
    }
  }
  return {
    points,
    components: [pc1, pc2],
    explainedVarianceRatio: [Math.max(0, order[0]?.value ?? 0) / total, Math.max(0, order[1]?.value ?? 0) / total],
    means,
    stds,
  };
}

/** Givens rotation of columns p and q of `m` in place (cosine c, sine s). */
function rotateColumns(m: number[][], p: number, q: number, c: number, s: number): void {
  for (const row of m) {
    const xp = row[p] ?? 0;
    const xq = row[q] ?? 0;
    row[p] = c * xp - s * xq;
    row[q] = s * xp + c * xq;
  }
}

/** Cyclic Jacobi eigen-decomposition of a small symmetric matrix; columns of `vectors` are eigenvectors. */
export function symmetricEigen(input: readonly (readonly number[])[]): { values: number[]; vectors: number[][] } {
  const n = input.length;
  const a = input.map((row) => [...row]);
  const v = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += (a[p]?.[q] ?? 0) ** 2;
    if (off < 1e-22) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = a[p]?.[q] ?? 0;
        if (Math.abs(apq) < 1e-300) continue;
        const app = a[p]?.[p] ?? 0;
        const aqq = a[q]?.[q] ?? 0;
        const theta = (aqq - app) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        rotateColumns(a, p, q, c, s);
        for (let k = 0; k < n; k++) {
          const apk = a[p]?.[k] ?? 0;
          const aqk = a[q]?.[k] ?? 0;
          (a[p] as number[])[k] = c * apk - s * aqk;
          (a[q] as number[])[k] = s * apk + c * aqk;
        }
        rotateColumns(v, p, q, c, s);
      }
    }
  }
  return { values: a.map((row, i) => row[i] as number), vectors: v };
}
