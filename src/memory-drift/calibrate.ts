import { sha256Hex } from '../core/canonical-json.js';
import { InvalidArgumentError } from '../core/errors.js';
import {
  type CalibrationOutcome,
  minimumDetectableEffect,
  rateWithError,
  type RateWithError,
  summarizeCalibration,
  type TestCalibration,
} from '../stats/calibration.js';
import {
  analyzeMemory,
  type DRelEstimate,
  type ElevationEstimate,
  type LabelledSample,
  MEMORY_METRICS,
  type MemoryReport,
  sampleFromCellLabels,
  scoreTrajectories,
} from './analysis.js';
import type { Maybe } from '../core/maybe.js';
import type { MemoryConfig } from './config.js';
import type { PerturbationTier } from './perturbations.js';
import { assignSampleSeeds } from './plan.js';
import type { CellSpec } from '../store/types.js';
import { type MemoryStimuli, planMemoryGeneration } from './run.js';
import { DEFAULT_SEEDED_NOISE, seededNoiseRate, seededSimSymbols, simBaselineSequence } from './sim.js';

/**
 * `memory calibrate`: the operating characteristics of the memory report for one design,
 * measured before any model is called. Each replicate plans the user's exact grid (questions,
 * conditions, stimuli, k, seeding scheme, pairing) through the real planner and seed
 * derivation, draws every generation cell from a seed-honouring simulated sampler
 * (seededSimSymbols: same seed + same question = same answer), and runs the real scoring and
 * analysis. Under the null scenario memory changes nothing, so every rejection is a false
 * positive; planted scenarios flip steps with a per-tier probability, so rejections are power.
 * Pure (no I/O): the CLI prints what it returns.
 */

export interface CalibrationScenario {
  name: string;
  /** Probability that memory flips a step, per tier (none = 0 always). */
  flip: Record<Exclude<PerturbationTier, 'none'>, number>;
}

export const NULL_SCENARIO: CalibrationScenario = { name: 'null', flip: { noise: 0, persona: 0, life_event: 0 } };
/** The planted tiers of sim:memory: noise leaves reasoning alone, persona and life events flip steps. */
export const PLANTED_SCENARIO: CalibrationScenario = { name: 'planted', flip: { noise: 0, persona: 0.15, life_event: 0.3 } };

export interface SimulateDesignOptions {
  scenario: CalibrationScenario;
  /** Replicate index (its base seed is derived from this and `seed`). */
  replicate: number;
  /** Seed of the whole calibration. */
  seed: number;
  /** Bootstrap replicates of each analysis (default: the config's). */
  B?: number;
}

const seedOf = (...parts: (string | number)[]) => Number.parseInt(sha256Hex(JSON.stringify(parts)).slice(0, 8), 16) & 0x7fffffff;

/**
 * The design a calibration simulates: the user's generation plan (one target: every target of a
 * config runs the same grid and is analysed on its own, so one stands for all), planned once
 * through the real planner. Replicates re-derive the seeds from a replicate base seed with the
 * config's seeding scheme (assignSampleSeeds), so the stimuli stay the user's.
 */
export interface SimulatedDesign {
  config: MemoryConfig;
  cells: CellSpec[];
  baselines: Map<string, string[]>;
  rates: Map<string, number>;
  samplingNoise: number;
}

export function prepareDesign(config: MemoryConfig, stimuli: MemoryStimuli, samplingNoise = DEFAULT_SEEDED_NOISE): SimulatedDesign {
  const target = config.targets[0] as string;
  const cells = planMemoryGeneration({ ...config, targets: [target] }, stimuli);
  const baselines = new Map<string, string[]>();
  const rates = new Map<string, number>();
  for (const cell of cells) {
    const question = String(cell.labels.question_id);
    if (!baselines.has(question)) {
      baselines.set(question, simBaselineSequence(question));
      rates.set(question, seededNoiseRate(question, samplingNoise));
    }
  }
  return { config, cells, baselines, rates, samplingNoise };
}

/** The labelled samples of one simulated run of the design. */
export function simulateDesignSamples(design: SimulatedDesign, options: SimulateDesignOptions): LabelledSample[] {
  const runSeed = seedOf('memory-calibrate', options.seed, options.replicate);
  assignSampleSeeds(design.cells, design.config.sampleSeeds, runSeed);
  return design.cells.map((spec, index) => {
    const labels = spec.labels;
    const tier = String(labels.tier) as PerturbationTier;
    const question = String(labels.question_id);
    // A provider without a seed (sampleSeeds: none) draws fresh: the cell's position stands in.
    const seed = spec.request.params.seed ?? seedOf('unseeded', runSeed, index);
    const drawn = seededSimSymbols(
      {
        question,
        memory: String(labels.stimulus_id),
        flipProbability: tier === 'none' ? 0 : options.scenario.flip[tier],
        seed,
        samplingNoise: design.samplingNoise,
      },
      { baseline: design.baselines.get(question) as string[], rate: design.rates.get(question) as number },
    );
    return sampleFromCellLabels(labels, { status: 'labelled', symbols: drawn.symbols }, `cell ${index}`);
  });
}

/** One simulated report of the design. */
export function simulateDesignReport(design: SimulatedDesign, options: SimulateDesignOptions): MemoryReport {
  const samples = simulateDesignSamples(design, options);
  const config = design.config;
  const scored = scoreTrajectories(samples, { pairing: config.analysis.pairing });
  return analyzeMemory(scored.observations, {
    B: options.B ?? config.analysis.B,
    seed: seedOf('memory-calibrate-bootstrap', options.seed, options.replicate),
    alpha: config.analysis.alpha,
  });
}

/** Every test of a report as calibration outcomes (truth = the null value 0 under the null scenario). */
export function reportOutcomes(report: MemoryReport, isNull: boolean): CalibrationOutcome[] {
  const out: CalibrationOutcome[] = [];
  const truth = isNull ? { truth: 0 } : {};
  const target = report.targets[0];
  if (target === undefined) return out;
  // A bootstrap test (elevation or d_rel): a refused one counts as tested with no p.
  const bootstrapOutcome = (test: string, r: Maybe<ElevationEstimate | DRelEstimate>): CalibrationOutcome =>
    'error' in r ? { test } : { test, p: r.p, estimate: 'dRel' in r ? r.dRel : r.estimate, ci: r.ci, standardError: r.se, ...truth };
  for (const metric of MEMORY_METRICS) {
    const analysis = target.metrics[metric];
    for (const c of analysis.conditions) if (c.elevation !== null) out.push(bootstrapOutcome(`${metric}/elevation/${c.condition}`, c.elevation));
    for (const t of analysis.tiers) out.push(bootstrapOutcome(`${metric}/elevation/tier:${t.tier}`, t.elevation));
    const mixed = analysis.mixedModel;
    if (!('error' in mixed)) {
      for (const f of mixed.fixed) {
        if (f.term === '(Intercept)') continue;
        const half = 1.959963984540054 * f.se;
        out.push({
          test: `${metric}/mixedModel/${f.term}`,
          p: f.p,
          estimate: f.estimate,
          ci: [f.estimate - half, f.estimate + half],
          standardError: f.se,
          ...truth,
        });
      }
    }
    for (const d of analysis.dRel) out.push(bootstrapOutcome(`${metric}/dRel/${d.condition}`, d.result));
  }
  return out;
}

/** Per-run family quantities: the share of per-condition tests below alpha and any BH-significant d_rel. */
export interface RunFamily {
  /** Per-condition tests (elevation, mixed-model fixed effects, d_rel) with a p-value, over both metrics. */
  tests: number;
  rejected: number;
  /** Whether any d_rel is BH-significant (per metric and tier family). */
  anyDRelSignificant: boolean;
  /** Whether any Welch pairwise comparison is BH-significant. */
  anyPairwiseSignificant: boolean;
}

const PER_CONDITION = /^(dtw|sri)\/(elevation\/(?!tier:)|mixedModel\/|dRel\/)/;

export function runFamily(report: MemoryReport, outcomes: readonly CalibrationOutcome[], alpha: number): RunFamily {
  const tested = outcomes.filter((o) => PER_CONDITION.test(o.test) && typeof o.p === 'number' && Number.isFinite(o.p));
  const target = report.targets[0];
  const anyDRel = target !== undefined && MEMORY_METRICS.some((m) => target.metrics[m].dRel.some((d) => !('error' in d.result) && d.result.significant));
  const anyPairwise =
    target !== undefined &&
    MEMORY_METRICS.some((m) => {
      const pw = target.metrics[m].pairwise;
      return !('error' in pw) && pw.comparisons.some((c) => !('error' in c.test) && c.test.significant);
    });
  return {
    tests: tested.length,
    rejected: tested.filter((o) => (o.p as number) < alpha).length,
    anyDRelSignificant: anyDRel,
    anyPairwiseSignificant: anyPairwise,
  };
}

export interface ScenarioCalibration {
  scenario: CalibrationScenario;
  replicates: number;
  /** Per test: rejection rate (false-positive rate under the null, power otherwise), coverage, mean SE. */
  tests: TestCalibration[];
  /** Mean over runs of the share of per-condition tests below alpha, with its Monte Carlo SE (runs are the unit). */
  perConditionShare: { mean: number; mcSE: number };
  /** Share of runs with at least one BH-significant d_rel (the family-wise rate of the d_rel family). */
  dRelFamilyWise: RateWithError;
  /** Share of runs with at least one BH-significant Welch comparison. */
  pairwiseFamilyWise: RateWithError;
}

export interface MemoryCalibration {
  design: {
    questions: number;
    conditions: number;
    k: number;
    stimuliPerCategory: number | 'all';
    sampleSeeds: MemoryConfig['sampleSeeds'];
    pairing: MemoryConfig['analysis']['pairing'];
    B: number;
    samplingNoise: number;
    /** Targets of the config: the figures hold for each (see `targetsNote`). */
    targets: number;
    /** What one simulated target stands for. */
    targetsNote: string;
  };
  alpha: number;
  scenarios: ScenarioCalibration[];
  /**
   * Minimum detectable elevation / d_rel at 80% power (two-sided alpha) from the mean
   * standard error under the null, per metric: a planning figure (normal approximation).
   */
  minimumDetectable: Array<{ metric: string; test: 'elevation' | 'dRel'; meanSE: number; mde: number }>;
}

export interface CalibrateMemoryOptions {
  replicates: number;
  seed?: number;
  /** Bootstrap replicates per analysis (default min(config B, 500): enough to place p around 0.05). */
  B?: number;
  samplingNoise?: number;
  scenarios?: readonly CalibrationScenario[];
  /** Called after each replicate (progress). */
  onReplicate?: (scenario: string, done: number, total: number) => void;
}

/**
 * One target is simulated, and it stands for every target: each target runs the same grid with
 * the same seeds (seeds are derived from question, condition, stimulus and sample, not from the
 * model) and is analysed on its own, so a second simulated target would repeat the first's draws
 * and figures exactly. What several targets add is multiplicity across reports, stated here.
 */
export function targetsNote(targets: number, alpha: number): string {
  if (targets <= 1) return 'one target: the figures are its own';
  const bound = Math.min(1, targets * alpha);
  return (
    `simulated once for all ${targets} targets (each runs the same grid with the same seeds and is analysed on its own, so the figures hold for each); ` +
    `the report does not correct across targets: under the null, some target shows a given false positive with probability up to ${targets} × the per-target rate (≤ ${(100 * bound).toFixed(0)} % at α = ${alpha})`
  );
}

/** Simulates the design under each scenario and summarises every test of the report. */
export function calibrateMemoryDesign(config: MemoryConfig, stimuli: MemoryStimuli, options: CalibrateMemoryOptions): MemoryCalibration {
  if (!Number.isInteger(options.replicates) || options.replicates < 2) {
    throw new InvalidArgumentError('replicates', 'must be an integer ≥ 2 (200 or more for a false-positive rate within ±3 percentage points)');
  }
  const seed = options.seed ?? config.seed;
  const B = options.B ?? Math.min(config.analysis.B, 500);
  const alpha = config.analysis.alpha;
  const samplingNoise = options.samplingNoise ?? DEFAULT_SEEDED_NOISE;
  const scenarios = options.scenarios ?? [NULL_SCENARIO, PLANTED_SCENARIO];
  const design = prepareDesign(config, stimuli, samplingNoise);
  const results: ScenarioCalibration[] = [];
  for (const scenario of scenarios) {
    const outcomes: CalibrationOutcome[] = [];
    const shares: number[] = [];
    let dRelRuns = 0;
    let pairwiseRuns = 0;
    for (let r = 0; r < options.replicates; r++) {
      const report = simulateDesignReport(design, { scenario, replicate: r, seed, B });
      const isNull = Object.values(scenario.flip).every((p) => p === 0);
      const these = reportOutcomes(report, isNull);
      outcomes.push(...these);
      const family = runFamily(report, these, alpha);
      if (family.tests > 0) shares.push(family.rejected / family.tests);
      if (family.anyDRelSignificant) dRelRuns += 1;
      if (family.anyPairwiseSignificant) pairwiseRuns += 1;
      options.onReplicate?.(scenario.name, r + 1, options.replicates);
    }
    const mean = shares.length > 0 ? shares.reduce((a, b) => a + b, 0) / shares.length : Number.NaN;
    const variance = shares.length > 1 ? shares.reduce((a, b) => a + (b - mean) ** 2, 0) / (shares.length - 1) : Number.NaN;
    results.push({
      scenario,
      replicates: options.replicates,
      tests: summarizeCalibration(outcomes, alpha),
      perConditionShare: { mean, mcSE: Math.sqrt(variance / shares.length) },
      dRelFamilyWise: rateWithError(dRelRuns, options.replicates),
      pairwiseFamilyWise: rateWithError(pairwiseRuns, options.replicates),
    });
  }
  const nullResult = results.find((r) => Object.values(r.scenario.flip).every((p) => p === 0));
  const minimumDetectable: MemoryCalibration['minimumDetectable'] = [];
  if (nullResult !== undefined) {
    for (const metric of MEMORY_METRICS) {
      for (const test of ['elevation', 'dRel'] as const) {
        const ses = nullResult.tests
          .filter((t) => t.test.startsWith(`${metric}/${test}/`) && !t.test.includes('tier:') && t.meanStandardError !== null)
          .map((t) => t.meanStandardError as number);
        if (ses.length === 0) continue;
        const meanSE = ses.reduce((a, b) => a + b, 0) / ses.length;
        minimumDetectable.push({ metric, test, meanSE, mde: minimumDetectableEffect(meanSE, { alpha }) });
      }
    }
  }
  return {
    design: {
      questions: stimuli.questions.questions.length,
      conditions: stimuli.conditions.length,
      k: config.k,
      stimuliPerCategory: config.stimuliPerCategory,
      sampleSeeds: config.sampleSeeds,
      pairing: config.analysis.pairing,
      B,
      samplingNoise,
      targets: config.targets.length,
      targetsNote: targetsNote(config.targets.length, alpha),
    },
    alpha,
    scenarios: results,
    minimumDetectable,
  };
}

/** Simulated runs per scenario in the dry run's power figures (fewer for large grids: the dry run stays quick). */
export function dryRunReplicates(generationCells: number): number {
  return Math.max(4, Math.min(8, Math.round((8 * 1500) / Math.max(1, generationCells))));
}

export interface MemoryDesignPower {
  questions: number;
  replicates: number;
  B: number;
  seed: number;
  alpha: number;
  /** The verdict's tests, per metric: sensitivity (pooled life events over the floor) and specificity (pooled noise tier). */
  metrics: Array<{
    metric: string;
    /** Minimum detectable life-event elevation at 80% power, from the test's mean SE under the null (null when never tested). */
    mde: number | null;
    /** Rejection rate of the life-event elevation test under the calibration's planted scenario. */
    power: RateWithError | null;
    /** Mean life-event elevation under the planted scenario. */
    plantedElevation: number | null;
    /** Rejection rate of the noise-tier elevation test under the null (a false "not specific"). */
    noiseFalsePositive: RateWithError | null;
  }>;
  /** Below the 30-question rule, or power below 80% at the planted effect. */
  underpowered: boolean;
  /** Questions that would bring every metric's MDE down to its planted elevation (SE ∝ 1/√questions), when underpowered. */
  neededQuestions: number | null;
}

/**
 * The dry run's power figures for a memory design: the calibration's own simulation (same
 * planner, seeds, sampler, scoring and analysis as `memory calibrate`, null and planted
 * scenarios) at a few replicates, summarised for the tests that decide the validity verdict:
 * the pooled life-event elevation (sensitivity) and the pooled noise elevation (specificity),
 * per metric. Pure. `memory calibrate --replicates R --bootstrap B --seed S` prints the same
 * rejection rates and mean SEs for these tests.
 */
export function memoryDesignPower(
  config: MemoryConfig,
  stimuli: MemoryStimuli,
  options: { replicates: number; B?: number; seed?: number; minQuestions: number },
): MemoryDesignPower {
  const seed = options.seed ?? config.seed;
  const B = options.B ?? Math.min(config.analysis.B, 100);
  const alpha = config.analysis.alpha;
  const design = prepareDesign(config, stimuli);
  const outcomes = new Map<string, CalibrationOutcome[]>();
  for (const scenario of [NULL_SCENARIO, PLANTED_SCENARIO]) {
    const list: CalibrationOutcome[] = [];
    for (let r = 0; r < options.replicates; r++) {
      list.push(...reportOutcomes(simulateDesignReport(design, { scenario, replicate: r, seed, B }), scenario === NULL_SCENARIO));
    }
    outcomes.set(scenario.name, list);
  }
  const summary = (scenario: string) => summarizeCalibration(outcomes.get(scenario) ?? [], alpha);
  const nullTests = summary('null');
  const plantedTests = summary('planted');
  const questions = stimuli.questions.questions.length;
  const metrics = MEMORY_METRICS.map((metric) => {
    const life = `${metric}/elevation/tier:life_event`;
    const nullSE = nullTests.find((t) => t.test === life)?.meanStandardError ?? null;
    const estimates = (outcomes.get('planted') ?? []).filter((o) => o.test === life && typeof o.estimate === 'number').map((o) => o.estimate as number);
    return {
      metric,
      mde: nullSE === null ? null : minimumDetectableEffect(nullSE, { alpha }),
      power: plantedTests.find((t) => t.test === life)?.rejection ?? null,
      plantedElevation: estimates.length > 0 ? estimates.reduce((a, b) => a + b, 0) / estimates.length : null,
      noiseFalsePositive: nullTests.find((t) => t.test === `${metric}/elevation/tier:noise`)?.rejection ?? null,
    };
  });
  const lowPower = metrics.some((m) => m.power === null || m.power.rate < 0.8);
  const underpowered = questions < options.minQuestions || lowPower;
  let neededQuestions: number | null = null;
  if (underpowered) {
    const ratios = metrics.map((m) => (m.mde !== null && m.plantedElevation !== null && m.plantedElevation > 0 ? (m.mde / m.plantedElevation) ** 2 : null));
    const byPower = ratios.every((r) => r !== null) ? Math.ceil(questions * Math.max(...(ratios as number[]))) : null;
    neededQuestions = Math.max(options.minQuestions, byPower ?? options.minQuestions);
  }
  return { questions, replicates: options.replicates, B, seed, alpha, metrics, underpowered, neededQuestions };
}

/** The dry run's power line for a memory design. */
export function memoryPowerLine(p: MemoryDesignPower, minQuestions: number): string {
  const pct = (x: number | null) => (x === null ? 'n/a' : `${(100 * x).toFixed(0)}%`);
  const rate = (r: RateWithError | null) => (r === null ? 'n/a' : r.rate.toFixed(2));
  const each = (f: (m: MemoryDesignPower['metrics'][number]) => string) => p.metrics.map((m) => `${f(m)} (${m.metric})`).join(', ');
  const figures =
    `sensitivity, the pooled life-event elevation over the floor → minimum detectable elevation ≈ ${each((m) => pct(m.mde))} at 80% power; ` +
    `power ${each((m) => rate(m.power))} at the calibration's planted effect (memory flips a step with probability ${PLANTED_SCENARIO.flip.persona} for persona, ${PLANTED_SCENARIO.flip.life_event} for life events: life-event elevation ≈ ${each((m) => pct(m.plantedElevation))}); ` +
    `specificity, the noise tier falsely elevated in ${each((m) => (m.noiseFalsePositive === null ? 'n/a' : `${Math.round(m.noiseFalsePositive.rate * m.noiseFalsePositive.n)} of ${m.noiseFalsePositive.n}`))} null runs; ` +
    `α = ${p.alpha}, ${p.replicates} simulated runs per scenario, B = ${p.B} (\`echolens memory calibrate <config> --replicates ${p.replicates} --bootstrap ${p.B} --seed ${p.seed}\` prints the same figures; more replicates narrow them)`;
  if (p.questions < minQuestions) {
    return `power: UNDERPOWERED — ${p.questions} questions, below the ${minQuestions}-question rule: the report will list no significance and the validity verdict will be "undetermined"; run at least ${p.neededQuestions ?? minQuestions} (questions.limit, or --questions-limit). ${figures}`;
  }
  if (p.underpowered)
    return `power: ${p.questions} questions: ${figures}; UNDERPOWERED — about ${p.neededQuestions} questions would reach 80% (questions.limit)`;
  return `power: ${p.questions} questions: ${figures}; adequately powered`;
}
