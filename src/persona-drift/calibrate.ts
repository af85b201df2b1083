import { InvalidArgumentError } from '../core/errors.js';
import { type CalibrationOutcome, minimumDetectableEffect, type RateWithError, summarizeCalibration, withinNominal } from '../stats/calibration.js';
import { type Rng, rng } from '../stats/rng.js';
import type { GapEstimate, Maybe, PersonaObservation } from './analysis.js';
import { analyzePersonaInference, type PersonaInference, resolveOptions } from './analysis.js';
import { analyzeConsensus } from './consensus.js';
import { analyzeHarness, type HarnessName } from './harness.js';
import type { CellRef } from './analysis-types.js';
import type { PersonaConfig } from './config.js';
import type { PlannedPosition } from './plan.js';
import { getOrInsert } from '../core/get-or-insert.js';

/**
 * `echolens persona calibrate`: the operating characteristics of every test the persona report
 * makes, for one design, before any model is called (pure, in-process). Simulated targets and
 * judges produce scores with between-session, between-position and within-cell variation of the
 * sizes the user sets; the real analysis runs on them under a null (every contrast 0) and under
 * planted effects of size `effect`. Continuous judge scores on the 0–3 scale are simulated (no
 * rounding), so every planted contrast is known exactly.
 */

export interface CalibrationDesign {
  targets: string[];
  judges: string[];
  sessions: number;
  positionsPerSession: number;
  /** Compaction events per session (each adds a pre and a post position). */
  compactionsPerSession: number;
  arms: string[];
  mitigations: string[];
  distances: string[];
  systemPrompts: string[];
  probes: Array<{ item: string; category: string }>;
  paraphrases: number;
  samples: number;
  stressors: string[];
  stressorParaphrases: number;
  contracts: string[];
  primaryCategory: string | null;
  /**
   * Sessions that are forks of another listed session (default 0): the last `forks` sessions fork
   * the first `forks`, sharing their conversation (session effects) and, before the fork point,
   * their probed contexts exactly.
   */
  forks?: number;
  /** Share of a fork's positions before its fork point (default 0.5). */
  forkAt?: number;
  /**
   * Sessions per harness, [Claude Code, Codex] (their sum is `sessions`): the first group's
   * sessions are recorded as Claude Code, the rest as Codex, and the harness contrast is tested.
   * Absent: no harness is recorded and no harness contrast is made.
   */
  harnessGroups?: [number, number];
  /** The Codex sessions' session effects are this many times as spread as the Claude Code sessions' (default 1). */
  harnessSpread?: number;
  /**
   * SD of each judge's own noise on one response's score, one per judge (default 0.2 each): a
   * judge noisier than the others breaks the sphericity the uncorrected judge F test assumes.
   */
  judgeNoise?: number[];
}

/**
 * How draws reach the units: `per-unit` (what `persona run` plans: forks merged into their
 * parent's unit, requests shared across units drawn once per unit) or `shared` (the plan before:
 * every identical request is one cached draw, forks are separate sessions) — kept to show what
 * shared draws do to the false-positive rate.
 */
export type DrawSharing = 'per-unit' | 'shared';

export interface VarianceKnobs {
  /** SD across sessions of each contrast (session × arm interaction), judge points. */
  betweenSession: number;
  /** SD across positions within a session of each contrast (position × arm interaction). */
  betweenPosition: number;
  /** SD of one response's score around its cell mean (probe × paraphrase × sample noise). */
  withinCell: number;
}

/** Defaults: moderate heterogeneity on the 0–3 judge scale (documented in docs/statistics.md). */
export const DEFAULT_VARIANCE: VarianceKnobs = { betweenSession: 0.2, betweenPosition: 0.2, withinCell: 0.7 };

/**
 * Shape of the session effects on each contrast against the headline real cell (standardized to
 * mean 0, SD 1, then scaled by the between-session SD): `normal`; `skewed` (a centred
 * exponential, skewness 2); `dominant` (each session +1.4 with probability 1/8, else −0.2:
 * population mean 0, a rare session carrying the drift — issue #39); `one-dominant` (not drawn: the
 * first session +1.4, every other −1.4/(n − 1), so the sessions' own mean is exactly 0 — with 8
 * sessions the rest are at −0.2, issue #39's fixed design). The sign-flip test assumes symmetry;
 * the last three show what it costs when that fails.
 */
export type SessionEffectShape = 'normal' | 'skewed' | 'dominant' | 'one-dominant';
export const SESSION_EFFECT_SHAPES: readonly SessionEffectShape[] = ['normal', 'skewed', 'dominant', 'one-dominant'];

const DOMINANT_SD = Math.sqrt((1.4 * 1.4) / 8 + (0.2 * 0.2 * 7) / 8);

/**
 * One standardized session deviation (mean 0, SD 1) of the given shape; `one-dominant` is fixed by the
 * session's index among `sessions` (its standardizing SD is the 8-session population's, as `dominant`).
 */
export function sessionEffectDraw(shape: SessionEffectShape, random: Rng, session = 0, sessions = 8): number {
  if (shape === 'one-dominant') return (session === 0 ? 1.4 : -1.4 / Math.max(sessions - 1, 1)) / DOMINANT_SD;
  if (shape === 'skewed') return -Math.log(1 - random.next()) - 1;
  if (shape === 'dominant') return (random.next() < 1 / 8 ? 1.4 : -0.2) / DOMINANT_SD;
  return normal(random);
}

export interface CalibrateOptions {
  replicates?: number;
  /** Shape of the session effects (default `normal`). */
  sessionEffects?: SessionEffectShape;
  seed?: number;
  variance?: Partial<VarianceKnobs>;
  /** Planted |Δ| for power (default 0.30, the paper's strong-drift threshold). */
  effect?: number;
  alpha?: number;
  tostMargin?: number;
  /** Worlds to simulate (default: every world the design has). */
  worlds?: readonly World[];
  /** Default `per-unit`, what runs do; `shared` simulates the old cache sharing. */
  draws?: DrawSharing;
}

export type World = 'null' | 'drift' | 'mitigation' | 'distance' | 'prompt' | 'compaction';

export interface TestOperatingCharacteristics {
  test: string;
  /** False-positive rate at alpha over replicates where the test's null holds (TOST: change = margin). */
  fpr: RateWithError | null;
  fprWithinNominal: boolean | null;
  /** 95% CI coverage of the true value (all replicates with an interval). */
  coverage: RateWithError | null;
  /** Rejection rate at |Δ| = effect (TOST: at change 0). */
  power: RateWithError | null;
  /** Mean (estimate − truth) when the effect is planted. */
  plantedBias: number | null;
  /** Mean estimate when the effect is planted (recovery in sign and size). */
  plantedMean: number | null;
  /** Minimum detectable |Δ| at 80% power from the mean standard error; null when the test cannot reject. */
  mde: number | null;
  nullReplicates: number;
  plantedReplicates: number;
  refused: number;
  note?: string;
}

export interface PersonaCalibration {
  schema: 'echolens.persona-calibration/1';
  design: CalibrationDesign;
  variance: VarianceKnobs;
  /** Shape of the simulated session effects. */
  sessionEffects: SessionEffectShape;
  replicates: number;
  seed: number;
  effect: number;
  alpha: number;
  worlds: World[];
  draws: DrawSharing;
  tests: TestOperatingCharacteristics[];
}

interface Effects {
  /** Fixed effect of a cell (surface-specific), on the score scale (probe) or probability scale (stressor/contract). */
  fixed(cell: Pick<CellRef, 'arm' | 'mitigation' | 'distance' | 'systemPrompt' | 'surface'>): number;
  /** Added to the filler arm at post-compaction positions. */
  compactionShift: number;
}

function worldEffects(world: World, design: CalibrationDesign, effect: number, margin: number): Effects {
  // The cells each world plants `effect` in (the null and compaction worlds plant none).
  const planted: Partial<Record<World, (cell: Parameters<Effects['fixed']>[0]) => boolean>> = {
    drift: (c) => c.arm === 'filler',
    mitigation: (c) => c.arm === 'real' && c.mitigation !== 'none' && c.mitigation !== 'placebo_iso_recipe',
    distance: (c) => c.arm === 'real' && c.distance !== design.distances[0],
    prompt: (c) => c.arm === 'filler' && c.systemPrompt !== design.systemPrompts[0],
  };
  return { compactionShift: world === 'compaction' ? margin : 0, fixed: (cell) => (planted[world]?.(cell) ? effect : 0) };
}

function normal(random: Rng): number {
  let u = random.next();
  while (u <= 0) u = random.next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random.next());
}

type SimCell = Pick<CellRef, 'arm' | 'mitigation' | 'distance' | 'systemPrompt'>;

function designCells(design: CalibrationDesign): SimCell[] {
  const cells: SimCell[] = [];
  for (const arm of design.arms) {
    const mitigations = arm === 'real' ? design.mitigations : ['none'];
    const distances = arm === 'real' ? design.distances : design.distances.slice(0, 1);
    for (const mitigation of mitigations) {
      for (const distance of distances) {
        for (const systemPrompt of design.systemPrompts) cells.push({ arm, mitigation, distance, systemPrompt });
      }
    }
  }
  return cells;
}

type SimPosition = Omit<PlannedPosition, 'selectedBy'>;

function positionsOf(design: CalibrationDesign): SimPosition[] {
  const out: SimPosition[] = [];
  for (let p = 0; p < design.positionsPerSession; p++) out.push({ label: `P${String(p).padStart(2, '0')}`, value: (p + 1) * 100 });
  for (let c = 0; c < design.compactionsPerSession; c++) {
    out.push({ label: `C${c + 1}-pre`, value: (c + 1) * 1000 - 1, compaction: { index: c + 1, side: 'pre' } });
    out.push({ label: `C${c + 1}-post`, value: (c + 1) * 1000 + 100, compaction: { index: c + 1, side: 'post' } });
  }
  return out;
}

const sessionName = (s: number) => `session-${String(s + 1).padStart(2, '0')}`;
const cellId = (c: SimCell) => `${c.arm}|${c.mitigation}|${c.distance}|${c.systemPrompt}`;

/** Interaction effects drawn for one replicate: per (target, session, cell) and (target, session, position, cell). */
type Draws = Record<'session' | 'position', Map<string, number>>;

/** One simulated run of the design: observations plus the interaction draws (for conditional truths). */
export function simulateRun(
  design: CalibrationDesign,
  variance: VarianceKnobs,
  effects: Effects,
  random: Rng,
  sharing: DrawSharing = 'per-unit',
  shape: SessionEffectShape = 'normal',
): { observations: PersonaObservation[]; draws: Draws } {
  const observations: PersonaObservation[] = [];
  const draws: Draws = { session: new Map(), position: new Map() };
  const cells = designCells(design);
  const positions = positionsOf(design);
  // Each cell gets an independent interaction with SD σ/√2, so a difference of two cells has SD σ.
  // With one session the report's claim is about that session (positions are the units), so its
  // own deviation is part of the truth: the null is "this session does not drift".
  const sSd = design.sessions === 1 ? 0 : variance.betweenSession / Math.SQRT2;
  const pSd = variance.betweenPosition / Math.SQRT2;
  const probeItems: Array<{ surface: PersonaObservation['surface']; item: string; category: string; paraphrases: number }> = [
    ...design.probes.map((p) => ({ surface: 'probe' as const, item: p.item, category: p.category, paraphrases: design.paraphrases })),
    ...design.stressors.map((id) => ({ surface: 'stressor' as const, item: id, category: id, paraphrases: design.stressorParaphrases })),
    ...design.contracts.map((id) => ({ surface: 'contract' as const, item: id, category: id, paraphrases: 1 })),
  ];
  const forks = design.forks ?? 0;
  const firstFork = design.sessions - forks;
  const preFork = Math.round((design.forkAt ?? 0.5) * positions.length);
  const judgeNoise = new Map(design.judges.map((j, i) => [j, design.judgeNoise?.[i] ?? 0.2]));
  // The second harness group's session effects are `harnessSpread` times as spread.
  const spreadOf = (s: number) => (design.harnessGroups && s >= design.harnessGroups[0] ? (design.harnessSpread ?? 1) : 1);
  for (const target of design.targets) {
    const itemLevel = new Map(probeItems.map((i) => [i.item, 0.3 * normal(random)]));
    const judgeBias = new Map(design.judges.map((j) => [j, 0.2 * normal(random)]));
    // The scratch arm has no context: its requests are the same in every session. Shared draws:
    // one set of answers per target and prompt, reused everywhere; per unit: one set per unit.
    const sharedScratch = new Map<string, number>();
    const scratchOf = new Map<string, Map<string, number>>();
    const levelOf = new Map<string, { level: number; dev: Map<string, number> }>();
    const pre = new Map<string, PersonaObservation[]>();
    for (let s = 0; s < design.sessions; s++) {
      const parent = s >= firstFork ? sessionName(s - firstFork) : null;
      // Per unit, a fork is analysed as its parent's unit; with shared draws it is one more session.
      const session = parent !== null && sharing === 'per-unit' ? parent : sessionName(s);
      const own = sessionName(s);
      const scratch = sharing === 'per-unit' ? getOrInsert(scratchOf, session, () => new Map<string, number>()) : sharedScratch;
      // Normal: every cell its own deviation (SD σ/√2), so a contrast of two cells has SD σ. Other
      // shapes: the headline real cell is the reference (0) and every other cell deviates by σ ×
      // the shape, so each contrast against the real context has that shape (a difference of
      // two independent skewed draws would be symmetric again).
      const deviation = (c: SimCell) => {
        const reference = c.arm === 'real' && c.mitigation === 'none' && c.distance === design.distances[0] && c.systemPrompt === design.systemPrompts[0];
        return (
          spreadOf(s) *
          (shape === 'normal'
            ? sSd * normal(random)
            : reference || design.sessions === 1
              ? 0
              : variance.betweenSession * sessionEffectDraw(shape, random, s, design.sessions))
        );
      };
      // A fork is the same conversation: the session's level and its arm interactions are its parent's.
      const inherited = parent !== null ? levelOf.get(`${target}|${parent}`) : undefined;
      const sessionLevel = inherited ? inherited.level : 0.3 * normal(random);
      const sessionDev = inherited ? inherited.dev : new Map(cells.map((c) => [cellId(c), deviation(c)]));
      for (const c of cells) draws.session.set(`${target}|${session}|${cellId(c)}`, sessionDev.get(cellId(c)) as number);
      if (!inherited) levelOf.set(`${target}|${own}`, { level: sessionLevel, dev: sessionDev });
      for (const [positionIndex, position] of positions.entries()) {
        // Before the fork point a fork's probed contexts are its parent's requests: the same draws.
        const copied = parent !== null && positionIndex < preFork ? pre.get(`${target}|${parent}|${position.label}`) : undefined;
        if (copied) {
          for (const o of copied) observations.push({ ...o, session, scores: { ...o.scores } });
          continue;
        }
        const start = observations.length;
        const positionLevel = 0.3 * normal(random);
        for (const c of cells) {
          const dev = pSd * normal(random);
          const positionKey = `${target}|${session}|${position.label}|${cellId(c)}`;
          // A merged unit averages its members at a position: the truth is the mean of their deviations.
          const earlier = parent !== null && sharing === 'per-unit' ? draws.position.get(positionKey) : undefined;
          draws.position.set(positionKey, earlier === undefined ? dev : (earlier + dev) / 2);
          const interaction = (sessionDev.get(cellId(c)) as number) + dev;
          const shift = c.arm === 'filler' && position.compaction?.side === 'post' ? effects.compactionShift : 0;
          const at = {
            target,
            session,
            position: position.label,
            positionValue: position.value,
            ...c,
            ...(position.compaction ? { compaction: position.compaction } : {}),
          };
          for (const item of probeItems) {
            const fixed = effects.fixed({ ...c, surface: item.surface });
            const level = itemLevel.get(item.item) as number;
            for (let paraphrase = 0; paraphrase < item.paraphrases; paraphrase++) {
              for (let sample = 0; sample < design.samples; sample++) {
                const scores: Record<string, number> = {};
                let check: PersonaObservation['check'];
                if (item.surface === 'probe') {
                  let latent: number;
                  if (c.arm === 'scratch') {
                    const key = `${c.systemPrompt}|${item.item}|${paraphrase}|${sample}`;
                    latent = getOrInsert(scratch, key, () => 1.5 + fixed + level + variance.withinCell * normal(random));
                  } else {
                    latent = 1.5 + fixed + shift + sessionLevel + positionLevel + level + interaction + variance.withinCell * normal(random);
                  }
                  for (const judge of design.judges)
                    scores[judge] = latent + (judgeBias.get(judge) as number) + (judgeNoise.get(judge) as number) * normal(random);
                } else {
                  const probability = Math.min(0.98, Math.max(0.02, 0.5 + fixed + 0.25 * interaction));
                  check = { pass: random.next() < probability, reason: 'simulated' };
                }
                const { surface, category } = item;
                observations.push({
                  ...at,
                  surface,
                  item: item.item,
                  category,
                  paraphrase,
                  sample,
                  status: 'done',
                  text: '',
                  scores,
                  ...(check ? { check } : {}),
                });
              }
            }
          }
        }
        if (parent === null && s < forks) pre.set(`${target}|${own}|${position.label}`, observations.slice(start));
      }
    }
  }
  return { observations, draws };
}

type Outcome = CalibrationOutcome & { phase: 'null' | 'planted' | 'other'; df?: number; minAttainableP?: number };

function phaseOf(truth: number, effect: number): Outcome['phase'] {
  if (Math.abs(truth) < 1e-12) return 'null';
  if (Math.abs(Math.abs(truth) - effect) < 1e-12) return 'planted';
  return 'other';
}

function outcome(test: string, result: Maybe<GapEstimate | (GapEstimate & object)> | null, truth: number, effect: number): Outcome {
  if (!result || 'error' in result) return { test, truth, phase: phaseOf(truth, effect) };
  return {
    test,
    p: result.p,
    estimate: result.estimate,
    ci: result.ci,
    truth,
    standardError: result.se,
    df: result.df,
    minAttainableP: result.minAttainableP,
    phase: phaseOf(truth, effect),
  };
}

const headlineCell = ({ design }: PersonaInference) =>
  ({ mitigation: 'none', distance: design.primaryDistance, systemPrompt: design.primarySystemPrompt, surface: 'probe' }) as const;
/** The headline drift gap's true value: filler − real in the headline cell. */
const headlineDriftTruth = (inference: PersonaInference, effects: Effects) =>
  effects.fixed({ ...headlineCell(inference), arm: 'filler' }) - effects.fixed({ ...headlineCell(inference), arm: 'real' });

/** Every test of one analysed replicate, with its true value in the simulated world. */
function outcomesOf(inference: PersonaInference, effects: Effects, draws: Draws, effect: number, margin: number, world: World): Outcome[] {
  const out: Outcome[] = [];
  const f = (ref: Pick<CellRef, 'arm' | 'mitigation' | 'distance' | 'systemPrompt' | 'surface'>) => effects.fixed(ref);
  const design = inference.design;
  const head = headlineCell(inference);
  const driftTruth = headlineDriftTruth(inference, effects);
  const headCell = (arm: string) => `${arm}|none|${design.primaryDistance}|${design.primarySystemPrompt}`;
  // In the compaction world the change is the margin (the TOST null); elsewhere it is 0: equivalence holds, rejections are power.
  const tost = (truth: number, phase: Outcome['phase']) =>
    inference.compaction.map((c): Outcome => {
      const t = c.tost;
      const test = `compaction TOST (±${margin}) ${c.cell}`;
      return !t || 'error' in t ? { test, truth, phase } : { test, p: t.p, estimate: t.mean, ci: t.ci95, truth, phase };
    });
  if (world === 'compaction') return tost(margin, 'null');
  for (const d of inference.drift) {
    out.push(outcome(`drift ${d.cell}`, d.gap, driftTruth, effect));
    if (!('error' in d.signFlip)) {
      // The verdict: Holm across targets, and a fragile one (one session carries it) counts as not significant.
      const fragile = !('error' in d.gap) && d.gap.claim.fragile;
      out.push({
        test: `drift verdict (Holm across targets; fragile = not significant) ${d.cell}`,
        p: fragile ? 1 : d.signFlip.pHolm,
        truth: driftTruth,
        phase: phaseOf(driftTruth, effect),
      });
    }
    out.push({ test: `onset ${d.cell}`, p: d.onset ? 0 : 1, truth: driftTruth, phase: phaseOf(driftTruth, effect) });
    for (const c of d.byCategory) out.push(outcome(`drift by category ${c.category} ${d.cell}`, c.gap, driftTruth, effect));
    for (const r of d.referenceArms) {
      out.push(outcome(`reference arm filler − ${r.arm} ${d.cell}`, r.gap, driftTruth - (f({ ...head, arm: r.arm }) - f({ ...head, arm: 'real' })), effect));
    }
    // Per session and per position the estimand is that session's (position's) own gap.
    for (const s of d.bySession) {
      const dev =
        (draws.session.get(`${d.target}|${s.session}|${headCell('filler')}`) ?? 0) - (draws.session.get(`${d.target}|${s.session}|${headCell('real')}`) ?? 0);
      out.push(outcome('drift by session (each session, its own gap)', s.gap, driftTruth + dev, effect));
    }
    for (const p of d.byPosition) {
      const key = (arm: string, map: Map<string, number>, withPosition: boolean) =>
        map.get(`${d.target}|${p.session}|${withPosition ? `${p.position}|` : ''}${headCell(arm)}`) ?? 0;
      const dev =
        key('filler', draws.session, false) - key('real', draws.session, false) + key('filler', draws.position, true) - key('real', draws.position, true);
      const post = p.position.endsWith('-post') ? effects.compactionShift : 0;
      out.push(outcome('drift by position (each position, its own gap)', p.gap, driftTruth + dev + post, effect));
    }
  }
  for (const c of inference.contrasts) {
    const truth = c.terms.reduce((s, t) => s + t.weight * f(t.ref), 0);
    out.push(outcome(c.name, 'error' in c.result ? c.result : ({ ...c.result } as GapEstimate), truth, effect));
  }
  for (const m of inference.mitigations) {
    const at = (mitigation: string) => f({ arm: 'real', mitigation, distance: m.distance, systemPrompt: m.systemPrompt, surface: 'probe' });
    out.push(outcome(`mitigation ${m.cell} − none`, m.vsControl, at(m.mitigation) - at('none'), effect));
    if (m.vsPlacebo) out.push(outcome(`mitigation ${m.cell} − placebo_iso_recipe`, m.vsPlacebo, at(m.mitigation) - at('placebo_iso_recipe'), effect));
  }
  for (const s of inference.stressorContrasts) {
    const at = (arm: string) => f({ arm, mitigation: 'none', distance: s.distance, systemPrompt: s.systemPrompt, surface: 'stressor' });
    out.push(outcome(s.name, s.difference, at('filler') - at('real'), effect));
  }
  for (const c of inference.contractContrasts) {
    const [treated, baseline] = c.contrast.split(' - ') as [string, string];
    const at = (mitigation: string) => f({ arm: 'real', mitigation, distance: c.distance, systemPrompt: c.systemPrompt, surface: 'contract' });
    out.push(outcome(`contract ${c.contrast} ${c.cell}`, c.difference, at(treated) - at(baseline), effect));
  }
  return [...out, ...tost(0, 'planted')];
}

/** The harness of each simulated session (the first group Claude Code, the rest Codex), or undefined without groups. */
export function simulatedHarnesses(design: CalibrationDesign): Record<string, HarnessName> | undefined {
  if (!design.harnessGroups) return undefined;
  const out: Record<string, HarnessName> = {};
  for (let s = 0; s < design.sessions; s++) out[sessionName(s)] = s < design.harnessGroups[0] ? 'claude-code' : 'codex';
  return out;
}

/**
 * The tests of the departures `calibrate` can simulate: the harness contrast (Welch, ν − 1) when
 * harness groups are given, and, with two or more judges, the pooled consensus and the judge
 * effect F test (Greenhouse–Geisser). No harness difference and no judge × arm interaction is
 * ever planted, so both are nulls in every world; the consensus pools the judges' Δ, whose truth
 * is the headline's (judge biases are constant and cancel).
 */
function departureOutcomes(
  observations: readonly PersonaObservation[],
  inference: PersonaInference,
  design: CalibrationDesign,
  options: { seed: number; alpha: number },
  effects: Effects,
  effect: number,
): Outcome[] {
  const out: Outcome[] = [];
  const resolved = resolveOptions({ seed: options.seed, alpha: options.alpha, primaryCategory: design.primaryCategory });
  const harnesses = simulatedHarnesses(design);
  if (harnesses) {
    for (const h of analyzeHarness(observations, inference.design, resolved, { harnesses })) {
      const d = h.difference;
      const tested = d.p === null || d.ci === null ? {} : { p: d.p, estimate: d.estimate, ci: d.ci };
      out.push({ test: 'harness contrast claude-code − codex (Welch, ν − 1)', ...tested, truth: 0, phase: 'null' });
    }
  }
  if (design.judges.length >= 2) {
    const driftTruth = headlineDriftTruth(inference, effects);
    for (const c of analyzeConsensus(observations, inference.design, resolved).rows) {
      out.push({
        test: 'consensus pooled Δ over judges',
        p: c.claim.p,
        estimate: c.estimate,
        ci: c.claim.interval,
        truth: driftTruth,
        phase: phaseOf(driftTruth, effect),
      });
      const j = c.judgeEffect;
      const name = 'judge effect F (Greenhouse–Geisser), no judge × arm interaction';
      out.push('error' in j ? { test: name, truth: 0, phase: 'null' } : { test: name, p: j.p, truth: 0, phase: 'null' });
    }
  }
  return out;
}

function worldsFor(design: CalibrationDesign): World[] {
  const worlds: World[] = ['null'];
  if (design.arms.includes('real') && design.arms.includes('filler')) worlds.push('drift');
  if (design.mitigations.some((m) => m !== 'none' && m !== 'placebo_iso_recipe')) worlds.push('mitigation');
  if (design.distances.length > 1) worlds.push('distance');
  if (design.systemPrompts.length > 1) worlds.push('prompt');
  if (design.compactionsPerSession > 0) worlds.push('compaction');
  return worlds;
}

export function validateCalibrationDesign(design: CalibrationDesign): void {
  if (design.sessions < 1) throw new InvalidArgumentError('sessions', 'the design needs at least one session');
  const forks = design.forks ?? 0;
  if (!Number.isInteger(forks) || forks < 0 || 2 * forks > design.sessions) {
    throw new InvalidArgumentError(
      'forks',
      `must be an integer from 0 to half the sessions (${Math.floor(design.sessions / 2)}): each fork needs its own parent, got ${forks}`,
    );
  }
  const forkAt = design.forkAt ?? 0.5;
  if (!(forkAt >= 0 && forkAt <= 1)) throw new InvalidArgumentError('forkAt', `must be a fraction from 0 to 1, got ${forkAt}`);
  if (design.harnessGroups) {
    const [cc, cx] = design.harnessGroups;
    if (!(Number.isInteger(cc) && Number.isInteger(cx) && cc >= 1 && cx >= 1) || cc + cx !== design.sessions)
      throw new InvalidArgumentError('harnessGroups', `must be two positive integers summing to the ${design.sessions} sessions, got ${cc},${cx}`);
  }
  const spread = design.harnessSpread ?? 1;
  if (!(Number.isFinite(spread) && spread > 0)) throw new InvalidArgumentError('harnessSpread', `must be a positive number, got ${spread}`);
  if (design.harnessSpread !== undefined && !design.harnessGroups)
    throw new InvalidArgumentError('harnessSpread', 'needs harnessGroups (which sessions are Codex)');
  if (design.judgeNoise) {
    if (design.judgeNoise.length !== design.judges.length)
      throw new InvalidArgumentError('judgeNoise', `give one SD per judge (${design.judges.length}), got ${design.judgeNoise.length}`);
    for (const sd of design.judgeNoise)
      if (!(Number.isFinite(sd) && sd >= 0)) throw new InvalidArgumentError('judgeNoise', `must be non-negative numbers, got ${sd}`);
  }
  if (design.positionsPerSession + design.compactionsPerSession < 1) throw new InvalidArgumentError('positions', 'the design needs at least one position');
  if (design.targets.length === 0) throw new InvalidArgumentError('targets', 'name at least one target');
  if (design.distances.length === 0 || design.systemPrompts.length === 0)
    throw new InvalidArgumentError('design', 'distances and systemPrompts need at least one level each');
}

/** Runs the calibration: `replicates` simulated runs per world, analysed with the report's own code. */
export function calibratePersona(design: CalibrationDesign, options: CalibrateOptions = {}): PersonaCalibration {
  validateCalibrationDesign(design);
  const replicates = options.replicates ?? 400;
  if (!Number.isInteger(replicates) || replicates < 1) throw new InvalidArgumentError('replicates', `must be a positive integer, got ${replicates}`);
  const seed = options.seed ?? 42;
  const effect = options.effect ?? 0.3;
  const alpha = options.alpha ?? 0.05;
  const margin = options.tostMargin ?? 0.08;
  const variance: VarianceKnobs = { ...DEFAULT_VARIANCE, ...options.variance };
  for (const [k, v] of Object.entries(variance)) {
    if (!(Number.isFinite(v) && v >= 0)) throw new InvalidArgumentError(k, `must be a non-negative number, got ${v}`);
  }
  const worlds = (options.worlds ?? worldsFor(design)).filter((w) => worldsFor(design).includes(w));
  const sharing = options.draws ?? 'per-unit';
  const shape = options.sessionEffects ?? 'normal';
  if (!SESSION_EFFECT_SHAPES.includes(shape))
    throw new InvalidArgumentError('sessionEffects', `must be one of ${SESSION_EFFECT_SHAPES.join(', ')}, got ${String(shape)}`);
  if (sharing !== 'per-unit' && sharing !== 'shared') throw new InvalidArgumentError('draws', `must be per-unit or shared, got ${String(sharing)}`);
  const random = rng(seed);
  const outcomes: Outcome[] = [];
  for (const world of worlds) {
    const effects = worldEffects(world, design, effect, margin);
    for (let r = 0; r < replicates; r++) {
      const { observations, draws } = simulateRun(design, variance, effects, random, sharing, shape);
      const inference = analyzePersonaInference(observations, {
        seed: seed + r,
        alpha,
        tostMargin: margin,
        primaryCategory: design.primaryCategory,
        systemPrompts: design.systemPrompts,
        distances: design.distances,
      });
      outcomes.push(...outcomesOf(inference, effects, draws, effect, margin, world));
      if (world !== 'compaction') outcomes.push(...departureOutcomes(observations, inference, design, { seed: seed + r, alpha }, effects, effect));
    }
  }
  return {
    schema: 'echolens.persona-calibration/1',
    design,
    variance,
    sessionEffects: shape,
    replicates,
    seed,
    effect,
    alpha,
    worlds,
    draws: sharing,
    tests: summarize(outcomes, alpha),
  };
}

function summarize(outcomes: readonly Outcome[], alpha: number): TestOperatingCharacteristics[] {
  const names = [...new Set(outcomes.map((o) => o.test))];
  return names.map((test) => {
    const mine = outcomes.filter((o) => o.test === test);
    const nulls = mine.filter((o) => o.phase === 'null');
    const planted = mine.filter((o) => o.phase === 'planted');
    const [nullSummary] = nulls.length > 0 ? summarizeCalibration(nulls, alpha) : [];
    const [plantedSummary] = planted.length > 0 ? summarizeCalibration(planted, alpha) : [];
    const [allSummary] = summarizeCalibration(mine, alpha);
    const withSE = nulls.length > 0 ? nulls : mine;
    const first = withSE.find((o) => typeof o.standardError === 'number');
    const cannotReject = first?.minAttainableP !== undefined && first.minAttainableP >= alpha;
    const meanSE = nullSummary?.meanStandardError ?? allSummary?.meanStandardError ?? null;
    const fpr = nullSummary?.rejection ?? null;
    const plantedEstimates = planted.filter((o) => typeof o.estimate === 'number');
    const row: TestOperatingCharacteristics = {
      test,
      fpr,
      fprWithinNominal: fpr ? withinNominal(fpr, alpha) : null,
      coverage: allSummary?.coverage ?? null,
      power: plantedSummary?.rejection ?? null,
      plantedBias: plantedSummary?.bias ?? null,
      plantedMean: plantedEstimates.length > 0 ? plantedEstimates.reduce((s, o) => s + (o.estimate as number), 0) / plantedEstimates.length : null,
      mde: meanSE !== null && !cannotReject ? minimumDetectableEffect(meanSE, { alpha, df: first?.df ?? Number.POSITIVE_INFINITY }) : null,
      nullReplicates: nulls.length,
      plantedReplicates: planted.length,
      refused: mine.filter((o) => typeof o.p !== 'number').length,
    };
    if (cannotReject) row.note = `the sign-flip test cannot reach p < ${alpha} with this many units (smallest p ${first?.minAttainableP?.toFixed(3)})`;
    return row;
  });
}

/** Knobs the configuration cannot tell (it names transcripts, not their counts of positions; compactions default to 2 per session under a `compactions` selector). */
export type DesignOverrides = Partial<Pick<CalibrationDesign, 'sessions' | 'positionsPerSession' | 'compactionsPerSession'>>;

/** The parts of a persona config that shape its calibration design. */
type DesignSource = Pick<
  PersonaConfig,
  'sessions' | 'positions' | 'arms' | 'mitigations' | 'distances' | 'systemPrompts' | 'samples' | 'targets' | 'judges' | 'contracts' | 'stressors' | 'analysis'
>;

/**
 * The calibration design of a persona config: its arms, mitigations, distances, prompts,
 * targets, judges, samples and planned items, with as many sessions as it lists and positions
 * per session counted from its selectors (an upper bound: positions two selectors share are
 * probed once).
 */
export function calibrationDesignFromConfig(
  config: DesignSource,
  items: ReadonlyArray<{ surface: string; item: string; category: string; paraphrase: number }>,
  overrides: DesignOverrides = {},
): CalibrationDesign {
  let positions = 0;
  let compactionSelector = false;
  for (const selector of config.positions) {
    if ('uniform' in selector) positions += Number(selector.uniform);
    else if ('deciles' in selector) positions += 10;
    else if ('steps' in selector) positions += (selector.steps as unknown[]).length;
    else if ('fraction' in selector) positions += (selector.fraction as unknown[]).length;
    else if ('compactions' in selector) compactionSelector = true;
  }
  const probeItems = items.filter((i) => i.surface === 'probe');
  const probes = [...new Map(probeItems.map((i) => [i.item, { item: i.item, category: i.category }])).values()];
  const paraphrases = Math.max(1, ...probeItems.map((i) => i.paraphrase + 1));
  const stressorItems = items.filter((i) => i.surface === 'stressor');
  return {
    targets: [...config.targets],
    judges: [...config.judges],
    sessions: overrides.sessions ?? config.sessions.length,
    positionsPerSession: overrides.positionsPerSession ?? positions,
    compactionsPerSession: overrides.compactionsPerSession ?? (compactionSelector ? 2 : 0),
    arms: [...config.arms],
    mitigations: [...config.mitigations],
    distances: config.distances.map((d) => d.name),
    // Names with spaces (text: prompts) are shortened so that test names stay one token per factor.
    systemPrompts: config.systemPrompts.map((p, i) => (/\s/u.test(p) ? `text-prompt-${i + 1}` : p)),
    probes,
    paraphrases,
    samples: config.samples,
    stressors: [...new Set(stressorItems.map((i) => i.item))],
    stressorParaphrases: Math.max(1, ...stressorItems.map((i) => i.paraphrase + 1)),
    contracts: [...config.contracts],
    primaryCategory: config.analysis.primaryCategory,
  };
}
