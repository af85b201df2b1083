import { InvalidArgumentError, StatisticsError } from '../core/errors.js';
import { meanOfClusterMeans } from './paired-bootstrap.js';
import { assertFiniteNumber, bootstrapPValue, type Interval, percentileInterval, type ResamplingOptions, resolveResampling } from './resampling-common.js';
import { type Rng, rng } from './rng.js';

/** Judge scores (or any per-cell measure) at one snapshot position, per arm. */
export interface PositionScores {
  /** The real-session (claude_session) arm. */
  real: readonly number[];
  /** The length- and structure-matched filler arm. */
  filler: readonly number[];
}

export interface GapBootstrapInput {
  positions: readonly PositionScores[];
}

export interface GapBootstrapOptions extends ResamplingOptions {
  /**
   * Allow a single position. Stage 1 is then degenerate and the procedure is the plain
   * cell-level bootstrap that resamples each arm's scores independently (as in the papers'
   * single-position audits). Default false: one position is refused.
   */
  allowSinglePosition?: boolean;
}

export interface ArmSummary {
  /** Mean over positions of the per-position mean. */
  estimate: number;
  ci: Interval;
}

export interface GapBootstrapResult {
  /** Drift gap Δ = filler − real, positions weighted equally (ContextEcho Def. 1). */
  gap: number;
  ci: Interval;
  /** Two-sided bootstrap p for Δ = 0. */
  p: number;
  real: ArmSummary;
  filler: ArmSummary;
  nPositions: number;
  level: number;
  B: number;
  seed: number;
  replicates: { gap: Float64Array; real: Float64Array; filler: Float64Array };
}

/**
 * The persona-drift gap with a two-stage position-clustered bootstrap (docs/decisions.md#d17).
 * Each replicate (1) draws as many positions as there are, with replacement, and (2) within
 * each drawn position redraws that position's real scores and its filler scores with
 * replacement (each arm keeps its own count). The replicate gap is the mean over drawn
 * positions of (filler mean − real mean); the per-arm summaries come from the same draws.
 * The interval is therefore on the gap itself, not two per-arm intervals side by side.
 *
 * Stage 2 re-adds within-position noise that stage 1 already carries in the position means, so
 * the interval is somewhat conservative when within-position noise dominates the spread of the
 * per-position gaps (few probes per arm, similar positions); with the papers' 25 probes per arm
 * and positions that differ, coverage is close to nominal (see the coverage test).
 */
export function gapBootstrap(input: GapBootstrapInput, options: GapBootstrapOptions = {}): GapBootstrapResult {
  const settings = resolveResampling(options, 'gapBootstrap');
  const positions = input?.positions;
  if (!Array.isArray(positions)) {
    throw new InvalidArgumentError('positions', 'expected an array of { real, filler } score lists');
  }
  if (positions.length === 0) throw new StatisticsError('gapBootstrap: positions is empty');
  if (positions.length === 1 && options.allowSinglePosition !== true) {
    throw new StatisticsError(
      'gapBootstrap: only one position; a position-clustered bootstrap needs at least 2 ' +
        '(pass allowSinglePosition: true for a cell-level bootstrap of one position)',
    );
  }
  const real = positions.map((p, i) => checkScores(p?.real, `positions[${i}].real`));
  const filler = positions.map((p, i) => checkScores(p?.filler, `positions[${i}].filler`));
  const k = positions.length;

  // Positions are never empty (checkScores): the means exist.
  const realPoint = meanOfClusterMeans(real)!;
  const fillerPoint = meanOfClusterMeans(filler)!;

  const random = rng(settings.seed);
  let largest = 0;
  for (let c = 0; c < k; c++) largest = Math.max(largest, (real[c] as Float64Array).length, (filler[c] as Float64Array).length);
  const scratch = new Int32Array(largest);
  const gapReps = new Float64Array(settings.B);
  const realReps = new Float64Array(settings.B);
  const fillerReps = new Float64Array(settings.B);
  for (let b = 0; b < settings.B; b++) {
    let realTotal = 0;
    let fillerTotal = 0;
    for (let c = 0; c < k; c++) {
      const position = random.int(k);
      realTotal += resampledMean(real[position] as Float64Array, random, scratch);
      fillerTotal += resampledMean(filler[position] as Float64Array, random, scratch);
    }
    realReps[b] = realTotal / k;
    fillerReps[b] = fillerTotal / k;
    gapReps[b] = (fillerTotal - realTotal) / k;
  }
  return {
    gap: fillerPoint - realPoint,
    ci: percentileInterval(gapReps, settings.level),
    p: bootstrapPValue(gapReps, 0),
    real: { estimate: realPoint, ci: percentileInterval(realReps, settings.level) },
    filler: { estimate: fillerPoint, ci: percentileInterval(fillerReps, settings.level) },
    nPositions: k,
    level: settings.level,
    B: settings.B,
    seed: settings.seed,
    replicates: { gap: gapReps, real: realReps, filler: fillerReps },
  };
}

function resampledMean(scores: Float64Array, random: Rng, scratch: Int32Array): number {
  const n = scores.length;
  const draw = random.fillInt(scratch, n, n);
  let sum = 0;
  for (let i = 0; i < n; i++) sum += scores[draw[i] as number] as number;
  return sum / n;
}

function checkScores(scores: unknown, argument: string): Float64Array {
  if (!Array.isArray(scores)) throw new InvalidArgumentError(argument, 'expected an array of scores');
  if (scores.length === 0) {
    throw new StatisticsError(`gapBootstrap: ${argument} is empty; every position needs scores in both arms`);
  }
  for (const [i, value] of (scores as unknown[]).entries()) assertFiniteNumber(value, `${argument}[${i}]`);
  return Float64Array.from(scores as number[]);
}
