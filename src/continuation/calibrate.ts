import { InvalidArgumentError } from '../core/errors.js';
import { type CalibrationOutcome, summarizeCalibration, type TestCalibration, withinNominal } from '../stats/calibration.js';
import { rng } from '../stats/rng.js';
import { type AnalysisOptions, analyzeContinuation, type ContinuationObservation } from './analysis.js';
import { CONTINUATION_ARMS } from './arms.js';
import { type ContinuationSimParams, drawOutcome, plantedGain } from './sim.js';

/**
 * `continuation calibrate` (pure): replicates of the continuation design drawn from a
 * simulation profile's generative model — the same draws `sim:continuation` makes per cell
 * — each analysed exactly as a real run. Under the null profile the rejection rate of a
 * test is its false-positive rate; under the planted profile it is the power, and the
 * share of 95% intervals containing the planted gain is the coverage.
 */

export interface CalibrationDesign {
  cutpoints: number;
  replicates: number;
  /** Share of cutpoints in the same-task stratum (default 0.5). */
  sameTaskShare?: number;
  /** Top-level arguments per call are drawn from 1…maxArguments (default 4). */
  maxArguments?: number;
  seed?: number;
  analysis?: AnalysisOptions;
  /**
   * Dependent cutpoints (issue #39): runs of `size` consecutive cutpoints in which each cutpoint
   * after the first repeats the run's first answer (every arm) with probability `repeat` — a
   * polling loop or a low temperature. `declared` analyses the runs as clusters
   * (`analysis.clusterBy: { consecutive: size }`); undeclared, the cutpoints stay the units.
   */
  blocks?: { size: number; repeat: number; declared: boolean };
}

/** One simulated run's observations (one target). */
export function simulateObservations(params: ContinuationSimParams, design: CalibrationDesign, replicate: number): ContinuationObservation[] {
  const random = rng((design.seed ?? 42) * 1_000_003 + replicate);
  const maxArgs = design.maxArguments ?? 4;
  const share = design.sameTaskShare ?? 0.5;
  const out: ContinuationObservation[] = [];
  const blocks = design.blocks;
  let first: ContinuationObservation[] = [];
  for (let c = 0; c < design.cutpoints; c += 1) {
    const cutpoint = `C${String(c + 1).padStart(2, '0')}`;
    if (blocks && c % blocks.size !== 0 && random.next() < blocks.repeat) {
      // The run's first answers again, at this cutpoint.
      for (const o of first) out.push({ ...o, cutpoint });
      continue;
    }
    const leaves = 1 + random.int(maxArgs);
    const sameTask = random.next() < share;
    const start = out.length;
    for (const arm of CONTINUATION_ARMS) {
      const outcome = drawOutcome(params, arm, random);
      let fidelity: number | null = null;
      if (outcome.status === 'call') {
        let kept = 0;
        for (let l = 0; l < leaves; l += 1) if (outcome.keep(String(l))) kept += 1;
        fidelity = kept / leaves;
      }
      out.push({ target: `sim:${params.name}`, cutpoint, arm, generated: true, status: outcome.status, fidelity, sameTask });
    }
    if (blocks && c % blocks.size === 0) first = out.slice(start);
  }
  return out;
}

export interface ContinuationCalibration {
  profile: string;
  design: { cutpoints: number; replicates: number; resamples: number; seed: number; blocks?: { size: number; repeat: number; declared: boolean } };
  planted: { completeCase: number; itt: number };
  tests: TestCalibration[];
  /** Per test: whether its false-positive rate is within alpha + 2 MC SE (null profiles only). */
  withinNominal: Record<string, boolean> | null;
}

export function calibrateContinuation(params: ContinuationSimParams, design: CalibrationDesign): ContinuationCalibration {
  if (!Number.isInteger(design.cutpoints) || design.cutpoints < 2) throw new InvalidArgumentError('cutpoints', 'must be an integer ≥ 2');
  if (!Number.isInteger(design.replicates) || design.replicates < 1) throw new InvalidArgumentError('replicates', 'must be a positive integer');
  const blocks = design.blocks;
  if (blocks && (!Number.isInteger(blocks.size) || blocks.size < 2 || !(blocks.repeat >= 0 && blocks.repeat <= 1))) {
    throw new InvalidArgumentError('blocks', 'size must be an integer ≥ 2 and repeat a probability in [0, 1]');
  }
  const planted = plantedGain(params, 'recent', 'cross');
  const outcomes: CalibrationOutcome[] = [];
  const clusterOf = blocks?.declared ? (cutpoint: string) => `B${Math.floor((Number(cutpoint.slice(1)) - 1) / blocks.size)}` : undefined;
  for (let r = 0; r < design.replicates; r += 1) {
    const analysis = analyzeContinuation(simulateObservations(params, design, r), {
      ...design.analysis,
      seed: (design.seed ?? 42) + r,
      ...(clusterOf ? { clusterOf } : {}),
    });
    const primary = analysis.targets[0]!.contrasts.find((c) => c.primary)!;
    for (const kind of ['completeCase', 'itt'] as const) {
      const e = primary[kind];
      const outcome: { -readonly [K in keyof CalibrationOutcome]: CalibrationOutcome[K] } = { test: `recent-cross/${kind}`, truth: planted[kind] };
      if (e.p !== null) outcome.p = e.p;
      if (e.mean !== null) outcome.estimate = e.mean;
      if (e.ci !== null) outcome.ci = e.ci;
      if (e.standardError !== null) outcome.standardError = e.standardError;
      outcomes.push(outcome);
    }
  }
  const tests = summarizeCalibration(outcomes);
  const isNull = planted.completeCase === 0 && planted.itt === 0;
  return {
    profile: params.name,
    design: {
      cutpoints: design.cutpoints,
      replicates: design.replicates,
      resamples: design.analysis?.resamples ?? 20_000,
      seed: design.seed ?? 42,
      ...(blocks ? { blocks } : {}),
    },
    planted,
    tests,
    withinNominal: isNull ? Object.fromEntries(tests.map((t) => [t.test, t.rejection === null ? false : withinNominal(t.rejection)])) : null,
  };
}
