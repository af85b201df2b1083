/**
 * Benchmark: the dtw-reference variant (src/metrics/fastdtw.ts) against exact DTW under the same
 * cosine cost (`dtw` with a cost function), in the same command.
 *
 *   node --import tsx bench/fastdtw.bench.ts
 *   BENCH_SMOKE=1 node --import tsx bench/fastdtw.bench.ts   # tiny sizes, a few seconds
 *
 * 1. Memory-report sized pairs: lengths uniform in 5–15 over an 11-symbol alphabet with 384-d
 *    unit embeddings (MiniLM's size), mulberry32 seed 42: referenceDtw (embedder function, and a
 *    PreparedSymbolEmbeddings table as the memory report uses) vs exact dtw, pairs/s.
 * 2. Scaling: two random 16-d series of length n, fastdtw (radius 1) vs exact dtw, ms per pair.
 * The machine is shared: each variant runs several rounds, best and median are printed.
 */
import { loadavg } from 'node:os';
import { cosineDistance, dtw, fastdtw, PreparedSymbolEmbeddings, referenceDtw } from '../src/metrics/index.js';
import { rng } from '../src/stats/rng.js';

const SMOKE = Boolean(process.env.BENCH_SMOKE);
const PAIRS = SMOKE ? 300 : 20_000;
const ROUNDS = SMOKE ? 2 : 5;
const LENGTHS = SMOKE ? [64, 256] : [256, 1024, 4096];

// The project's seeded generator (src/stats/rng.ts): every run draws the same data.
const generator = rng(42);
const random = (): number => generator.next();
const gaussianVector = (dimension: number) => {
  const v = Array.from({ length: dimension }, () => random() - 0.5);
  const norm = Math.hypot(...v);
  return v.map((c) => c / norm);
};

const ALPHABET = Array.from({ length: 10 }, (_, i) => `Category${i % 4}/Sub${i}`).concat('unmapped');
const EMBEDDINGS = new Map(ALPHABET.map((s) => [s, gaussianVector(384)]));
const embed = (s: string) => EMBEDDINGS.get(s) as number[];
const pairs = Array.from({ length: PAIRS }, () => {
  const sequence = () => Array.from({ length: 5 + Math.floor(random() * 11) }, () => ALPHABET[Math.floor(random() * ALPHABET.length)] as string);
  return [sequence(), sequence()] as const;
});

function rounds(label: string, work: () => number, unit: (ms: number) => string): number {
  const times: number[] = [];
  let check = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const start = performance.now();
    check += work();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const best = times[0] as number;
  console.log(`${label.padEnd(44)} best ${unit(best)}, median ${unit(times[Math.floor(times.length / 2)] as number)}  (checksum ${check.toFixed(3)})`);
  return best;
}

console.log(
  `load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}; ${PAIRS} pairs, ${ROUNDS} rounds`,
);
const perSecond = (ms: number) => `${Math.round((PAIRS / ms) * 1000).toLocaleString('en')} pairs/s`;
const exactPairs = rounds(
  'exact dtw, cosine cost (baseline)',
  () => pairs.reduce((sum, [a, b]) => sum + dtw(a, b, { cost: (s, t) => cosineDistance(embed(s), embed(t)), path: true }).raw, 0),
  perSecond,
);
const referencePairs = rounds(
  'referenceDtw (fastdtw r=1, compiled)',
  () => pairs.reduce((sum, [a, b]) => sum + referenceDtw(a, b, embed).distance, 0),
  perSecond,
);
const prepared = new PreparedSymbolEmbeddings(EMBEDDINGS);
const preparedPairs = rounds(
  'referenceDtw, PreparedSymbolEmbeddings',
  () => pairs.reduce((sum, [a, b]) => sum + referenceDtw(a, b, prepared).distance, 0),
  perSecond,
);
console.log(`ratio referenceDtw / exact (time): ${(referencePairs / exactPairs).toFixed(2)}; prepared / exact: ${(preparedPairs / exactPairs).toFixed(2)}`);

for (const n of LENGTHS) {
  const x = Array.from({ length: n }, () => gaussianVector(16));
  const y = Array.from({ length: n }, () => gaussianVector(16));
  const ids = Array.from({ length: n }, (_, i) => String(i));
  const perPair = (ms: number) => `${ms.toFixed(1)} ms`;
  const exact = rounds(
    `n = ${n}: exact dtw (baseline)`,
    () => dtw(ids, ids, { cost: (s, t) => cosineDistance(x[Number(s)]!, y[Number(t)]!), path: false }).raw,
    perPair,
  );
  const fast = rounds(`n = ${n}: fastdtw radius 1`, () => fastdtw(x, y, cosineDistance).distance, perPair);
  console.log(`ratio fastdtw / exact at n = ${n} (time): ${(fast / exact).toFixed(3)}`);
}
