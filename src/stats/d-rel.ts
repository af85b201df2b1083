import { getOrInsert } from '../core/get-or-insert.js';
import { InvalidArgumentError, StatisticsError } from '../core/errors.js';
import type { ClusterKey } from './cluster-bootstrap.js';
import {
  assertFiniteNumber,
  bootstrapPValue,
  finiteReplicates,
  type Interval,
  percentileInterval,
  type ResamplingOptions,
  resolveResampling,
} from './resampling-common.js';
import { rng } from './rng.js';

/** One observation (e.g. a DTW or SRI drift score) and the question it belongs to. */
export interface ClusteredValue {
  value: number;
  cluster: ClusterKey;
}

/**
 * Input of dRel. Every arm is a list of `{ value, cluster }` rows; rows of different arms that
 * share a cluster key belong to the same question and are resampled together.
 * - `treat`: the persona (or other treatment) condition.
 * - `noise`: the pragmatic-noise floor (filler, whitespace, punctuation) — μ_noise, σ_noise.
 * - `floor` (optional): the floor for percent elevation. DriftLens measures percent elevation
 *   over the `no_perturbation` floor (docs/decisions.md#d9); pass those rows here. Without it the
 *   elevation is taken over `noise`.
 */
export interface DRelInput {
  treat: readonly ClusteredValue[];
  noise: readonly ClusteredValue[];
  floor?: readonly ClusteredValue[];
}

export interface DRelResult {
  /** (μ_treat − μ_noise) / σ_noise with σ_noise the sample SD (n − 1) of the noise rows. */
  dRel: number;
  ci: Interval;
  /** Two-sided bootstrap p for d_rel = 0 (see bootstrapPValue). */
  p: number;
  /** μ_treat / μ_floor − 1 as a fraction (0.113 = +11.3 %). */
  elevation: number;
  elevationCi: Interval;
  elevationP: number;
  muTreat: number;
  muNoise: number;
  sdNoise: number;
  muFloor: number;
  /** Which arm the elevation used. */
  elevationFloor: 'floor' | 'noise';
  nClusters: number;
  nTreat: number;
  nNoise: number;
  nFloor: number;
  level: number;
  B: number;
  seed: number;
  replicates: { dRel: Float64Array; elevation: Float64Array };
  invalidReplicates: { dRel: number; elevation: number };
}

// Per-cluster sufficient statistics: treat n, treat Σ(x − c), noise n, noise Σ(x − c),
// noise Σ(x − c)², and with a floor arm also floor n, floor Σ(x − c) (stride 7, else 5).
// Values are shifted by c (the noise mean) so Σx² − (Σx)²/n does not lose digits.

/**
 * d_rel of DriftLens §2.5 with a question-level cluster bootstrap.
 *
 * Each replicate draws as many questions as there are, with replacement, and takes every
 * treat, noise and floor row of each drawn question; μ_treat, μ_noise, σ_noise and μ_floor are
 * all re-estimated on the replicate, so the noise floor's own sampling uncertainty enters the
 * interval. Each replicate costs O(#questions) thanks to per-question sufficient statistics.
 * Replicates where σ*_noise = 0 or an arm is empty are dropped and counted (see
 * ResamplingOptions.maxInvalidFraction).
 */
export function dRel(input: DRelInput, options: ResamplingOptions = {}): DRelResult {
  const settings = resolveResampling(options, 'dRel');
  if (input === null || typeof input !== 'object') {
    throw new InvalidArgumentError('input', 'expected { treat, noise, floor? }');
  }
  const treat = checkArm(input.treat, 'treat', 1);
  const noise = checkArm(input.noise, 'noise', 2);
  const floor = input.floor === undefined ? undefined : checkArm(input.floor, 'floor', 1);

  const clusterIndex = new Map<ClusterKey, number>();
  const indexOf = (key: ClusterKey): number => getOrInsert(clusterIndex, key, () => clusterIndex.size);
  for (const row of [...treat, ...noise, ...(floor ?? [])]) indexOf(row.cluster);
  const k = clusterIndex.size;
  if (k < 2) {
    throw new StatisticsError('dRel: all rows belong to one question; the cluster bootstrap needs at least 2');
  }

  let noiseSum = 0;
  for (const row of noise) noiseSum += row.value;
  const shift = noiseSum / noise.length;

  const stride = floor ? 7 : 5;
  const stats = new Float64Array(k * stride);
  // Each arm's n and Σ(x − c) start at its offset in the stride; only the noise arm keeps Σ(x − c)².
  for (const [rows, offset, squares] of [
    [treat, 0, false],
    [noise, 2, true],
    [floor ?? [], 5, false],
  ] as const) {
    for (const row of rows) {
      const at = indexOf(row.cluster) * stride + offset;
      const d = row.value - shift;
      stats[at] = (stats[at] as number) + 1;
      stats[at + 1] = (stats[at + 1] as number) + d;
      if (squares) stats[at + 2] = (stats[at + 2] as number) + d * d;
    }
  }

  const everyCluster = Int32Array.from({ length: k }, (_, i) => i);
  const point = combine(stats, stride, everyCluster, shift);
  if (!(point.sdNoise > 0)) {
    throw new StatisticsError('dRel: the noise rows have zero variance; σ_noise = 0 makes d_rel undefined');
  }
  if (point.muFloor === 0) {
    throw new StatisticsError(`dRel: the ${floor ? 'floor' : 'noise'} mean is 0; percent elevation μ_treat/μ_floor − 1 is undefined`);
  }

  const random = rng(settings.seed);
  const rawD = new Float64Array(settings.B);
  const rawE = new Float64Array(settings.B);
  const draw = new Int32Array(k);
  for (let b = 0; b < settings.B; b++) {
    random.fillInt(draw, k);
    const { tn, ts, nn, ns, nq, fn, fs } = sumDraw(stats, stride, draw);
    const variance = nn > 1 ? (nq - (ns * ns) / nn) / (nn - 1) : 0;
    // Relative guard: a variance at rounding level of Σ(x − c)² is a zero variance.
    const sd = variance > nq * 1e-14 ? Math.sqrt(variance) : 0;
    rawD[b] = tn > 0 && sd > 0 ? (ts / tn - ns / nn) / sd : Number.NaN;
    const muF = fn > 0 ? fs / fn + shift : 0;
    rawE[b] = tn > 0 && muF !== 0 ? (ts / tn + shift) / muF - 1 : Number.NaN;
  }
  const d = finiteReplicates(rawD, settings, 'dRel (d_rel)');
  const e = finiteReplicates(rawE, settings, 'dRel (percent elevation)');
  return {
    dRel: point.dRel,
    ci: percentileInterval(d.replicates, settings.level),
    p: bootstrapPValue(d.replicates, 0),
    elevation: point.elevation,
    elevationCi: percentileInterval(e.replicates, settings.level),
    elevationP: bootstrapPValue(e.replicates, 0),
    muTreat: point.muTreat,
    muNoise: point.muNoise,
    sdNoise: point.sdNoise,
    muFloor: point.muFloor,
    elevationFloor: floor ? 'floor' : 'noise',
    nClusters: k,
    nTreat: treat.length,
    nNoise: noise.length,
    nFloor: (floor ?? noise).length,
    level: settings.level,
    B: settings.B,
    seed: settings.seed,
    replicates: { dRel: d.replicates, elevation: e.replicates },
    invalidReplicates: { dRel: d.invalid, elevation: e.invalid },
  };
}

/**
 * Sums of the per-cluster statistics over the drawn clusters, in draw order (a cluster drawn
 * twice counts twice). Without a floor arm (stride 5) the floor sums are the noise sums.
 */
function sumDraw(stats: Float64Array, stride: number, draw: Int32Array) {
  const sums = new Float64Array(stride);
  for (let c = 0; c < draw.length; c++) {
    const at = (draw[c] as number) * stride;
    for (let k = 0; k < stride; k++) sums[k] = (sums[k] as number) + (stats[at + k] as number);
  }
  const [tn, ts, nn, ns, nq, fn = nn, fs = ns] = sums;
  return { tn, ts, nn, ns, nq, fn, fs } as Record<'tn' | 'ts' | 'nn' | 'ns' | 'nq' | 'fn' | 'fs', number>;
}

function combine(stats: Float64Array, stride: number, draw: Int32Array, shift: number) {
  const { tn, ts, nn, ns, nq, fn, fs } = sumDraw(stats, stride, draw);
  const variance = (nq - (ns * ns) / nn) / (nn - 1);
  const sdNoise = variance > nq * 1e-14 ? Math.sqrt(variance) : 0;
  const muTreat = ts / tn + shift;
  const muNoise = ns / nn + shift;
  const muFloor = fs / fn + shift;
  return {
    muTreat,
    muNoise,
    sdNoise,
    muFloor,
    dRel: sdNoise > 0 ? (muTreat - muNoise) / sdNoise : Number.NaN,
    elevation: muTreat / muFloor - 1,
  };
}

function checkArm(rows: unknown, name: string, minRows: number): readonly ClusteredValue[] {
  if (!Array.isArray(rows)) {
    throw new InvalidArgumentError(name, 'expected an array of { value, cluster } rows');
  }
  if (rows.length < minRows) {
    throw new StatisticsError(`dRel: ${name} has ${rows.length} row(s); at least ${minRows} ${minRows === 1 ? 'is' : 'are'} needed`);
  }
  rows.forEach((row: unknown, i) => {
    const r = row as Partial<ClusteredValue> | null;
    if (r === null || typeof r !== 'object') {
      throw new InvalidArgumentError(`${name}[${i}]`, 'expected { value, cluster }');
    }
    assertFiniteNumber(r.value, `${name}[${i}].value`);
    const key = r.cluster;
    if (typeof key === 'number' ? !Number.isFinite(key) : typeof key !== 'string') {
      throw new InvalidArgumentError(`${name}[${i}].cluster`, `must be a string or a finite number, got ${String(key)}`);
    }
  });
  return rows as readonly ClusteredValue[];
}
