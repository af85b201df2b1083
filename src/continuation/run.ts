import { dirname, resolve } from 'node:path';
import { configPath as resolvePath } from '../core/config-path.js';
import { hashCanonical } from '../core/canonical-json.js';
import { configFromOverrides, loadConfigFile } from '../core/config-file.js';
import { ConfigError } from '../core/errors.js';
import type { StagedAuditRunner } from '../experiment/audit.js';
import { groupReaskChains, resolveReaskChain } from '../experiment/reask.js';
import type { ParsedItem, StageRuntime } from '../experiment/runtime.js';
import type { Session } from '../sessions/types.js';
import type { RunInfo, RunStore } from '../store/run-store.js';
import { analyzeContinuation, type ClusterBy, type ContinuationAnalysis, type ContinuationObservation, cutpointClusters } from './analysis.js';
import type { ContinuationArm } from './arms.js';
import { type ContinuationConfig, continuationConfigSchema } from './config.js';
import { CONTINUATION_EXPERIMENT, type ContinuationPlan, type PlannedCutpoint, planContinuation } from './plan.js';
import { applyVerdicts, JUDGE_STAGE, type JudgeQuestion, judgeQuestions, judgeSpec, parseEquivalence, questionId, reaskEquivalence } from './judge.js';
import type { JudgeVerdict } from './judge.js';
import { type CallScore, scoreAnswer } from './scoring.js';
import { type ReferenceCallScore, referenceCallScore } from './reference-fidelity.js';
import { analyzeReferenceContinuation, type ReferenceContinuation } from './reference-analysis.js';
import { registerSimTruth } from './sim.js';
import { isBuiltinMaterials } from '../materials/files.js';
import { type ContinuationMaterials, loadContinuationMaterials } from './materials.js';
import { streamedInputFingerprint } from './fingerprint.js';
import { getOrInsert } from '../core/get-or-insert.js';

/** The I/O edge of the continuation audit: read the transcripts, run the cells, read them back. */

function resolvePaths(config: ContinuationConfig, base: string): ContinuationConfig {
  const out: ContinuationConfig = { ...config, session: resolvePath(config.session, base) };
  if (config.crossSession) out.crossSession = resolvePath(config.crossSession, base);
  if (config.crossSessions) out.crossSessions = config.crossSessions.map((p) => resolvePath(p, base));
  if (config.tools) out.tools = resolvePath(config.tools, base);
  if (config.tasks) out.tasks = resolvePath(config.tasks, base);
  if (config.materials !== undefined && !isBuiltinMaterials(config.materials)) out.materials = resolvePath(config.materials, base);
  return out;
}

/** A config file; paths may use `~/` and are relative to the file's folder. */
export function loadContinuationConfig(file: string, overrides: readonly string[] = []): ContinuationConfig {
  return resolvePaths(loadConfigFile(file, continuationConfigSchema, overrides).config, dirname(resolve(file)));
}

/** A config from command-line overrides alone; paths relative to the working directory. */
export function continuationConfigFromFlags(overrides: readonly string[]): ContinuationConfig {
  return resolvePaths(configFromOverrides(continuationConfigSchema, overrides), process.cwd());
}

export async function readContinuationSessions(config: ContinuationConfig): Promise<{ session: Session; cross: Session | undefined; crosses: Session[] }> {
  // The transcript readers and the run lifecycle load when a run needs them, not for reports (issue #44).
  const { readSession } = await import('../sessions/read.js');
  const read = async (file: string, field: string) => {
    try {
      return await readSession(file);
    } catch (error) {
      throw new ConfigError(`cannot read session: ${(error as Error).message}`, { field });
    }
  };
  if (config.crossSession && config.crossSessions) {
    throw new ConfigError('give either crossSession (one donor) or crossSessions (several), not both', { field: 'crossSessions' });
  }
  const session = await read(config.session, 'session');
  const cross = config.crossSession ? await read(config.crossSession, 'crossSession') : undefined;
  const crosses: Session[] = [];
  for (const [i, file] of (config.crossSessions ?? []).entries()) crosses.push(await read(file, `crossSessions.${i}`));
  return { session, cross, crosses };
}

/** Plans, and tells the simulated targets the ground truth (they cannot know it otherwise). */
export function planAndPrime(
  config: ContinuationConfig,
  session: Session,
  cross: Session | undefined,
  materials: ContinuationMaterials | null = loadContinuationMaterials(config.materials),
  crosses: readonly Session[] = [],
): ContinuationPlan {
  const plan = planContinuation(config, session, cross, materials, crosses);
  if (config.targets.some((t) => t.startsWith('sim:'))) {
    for (const arms of plan.arms) registerSimTruth(arms.immediate, arms.cutpoint.groundTruth, arms.arms.recent.messages[0]?.content ?? null);
  }
  return plan;
}

/** What the continuation audit reads before planning: the transcripts and the plan built from them. */
export interface ContinuationInput {
  session: Session;
  cross: Session | undefined;
  /** The donors of `crossSessions` (empty without it). */
  crosses?: Session[];
  plan: ContinuationPlan;
  /** The authors' texts when `materials` names a clone (null: echolens's). */
  materials?: ContinuationMaterials | null;
}

export interface ContinuationRunCounts {
  cells: number;
  cutpoints: number;
  /** Distinct questions put to the optional judge (0 without one). */
  judgeQuestions?: number;
}

/**
 * What a resume must find unchanged: every planned request (prefix windows,
 * tools, the cutpoint's last turn) and every cutpoint's ground truth. The run id
 * hashes the config, which names the transcripts but not their content, so a
 * session that grew or was edited would otherwise resume into a different plan.
 */
export function inputFingerprint(plan: Pick<ContinuationPlan, 'specs' | 'cutpoints'>): string {
  // Streamed (fingerprint.ts): the same hash as hashCanonical({ requests, truths }), without one giant string.
  return streamedInputFingerprint(
    plan.specs.map((s) => s.request),
    plan.cutpoints.map((c) => [c.id, c.groundTruth]),
  );
}

function changedPart(run: RunInfo, plan: ContinuationPlan): string {
  const recorded = (run.manifest.options as { cutpoints?: Array<{ id?: unknown; groundTruth?: unknown }> } | undefined)?.cutpoints ?? [];
  const now = plan.cutpoints.map((c) => hashCanonical([c.id, c.groundTruth]));
  const before = recorded.map((c) => hashCanonical([c.id, c.groundTruth]));
  const changed = now.filter((h, i) => h !== before[i]).length + Math.max(0, before.length - now.length);
  return changed > 0
    ? `${changed} of ${plan.cutpoints.length} cutpoints now have another position or next tool call`
    : 'the cutpoints are the same, the prompts before them are not';
}

export const continuationRunner: StagedAuditRunner<ContinuationConfig, ContinuationInput, ContinuationRunCounts> = {
  name: CONTINUATION_EXPERIMENT,
  limits: (config) => config.limits,
  async prepare(config) {
    const { session, cross, crosses } = await readContinuationSessions(config);
    const materials = loadContinuationMaterials(config.materials);
    return { session, cross, crosses, materials, plan: planAndPrime(config, session, cross, materials, crosses) };
  },
  preflight: async (config, runtime) => (await import('./preflight.js')).preflightContinuation(config, runtime, continuationRunner.prepare),
  plan: (_config, input) => input.plan.specs,
  manifestOptions: (config, { session, cross, crosses, plan, materials }) => ({
    // Which texts and which scoring: the reports name them (materials/report.ts).
    ...(materials ? { materials: materials.record } : {}),
    procedure: config.procedure ?? 'echolens',
    inputFingerprint: inputFingerprint(plan),
    cutpoints: plan.cutpoints,
    tools: plan.tools.map((t) => t.name),
    toolSource: plan.toolSource,
    taskSource: plan.taskSource,
    tasks: plan.tasks,
    notes: plan.notes,
    session: session.file,
    crossSession: cross?.file ?? null,
    ...(crosses && crosses.length > 0 ? { crossSessions: crosses.map((c) => c.file) } : {}),
  }),
  checkResume(run, _config, input, db) {
    const recorded = (run.manifest.options as { inputFingerprint?: unknown } | undefined)?.inputFingerprint;
    if (recorded === undefined || recorded === inputFingerprint(input.plan)) return;
    // The same inputs, planned before cutpoints got their own draws: the old run shared cells between cutpoints.
    const unsalted = input.plan.specs.map((s) => {
      if (s.request.unit === undefined) return s;
      const { unit: _unit, ...request } = s.request;
      return { ...s, request };
    });
    if (recorded === inputFingerprint({ specs: unsalted, cutpoints: input.plan.cutpoints })) {
      throw new ConfigError(
        `run ${run.id} in ${db} was planned before cutpoints were separated and shares draws between cutpoints (${input.plan.notes.find((n) => n.includes('more than one cutpoint')) ?? 'shared requests'}): start a new run with another --db (or delete this run) to re-plan it`,
        { field: 'session' },
      );
    }
    throw new ConfigError(
      `the transcript, cross session, tool schema or task file changed since run ${run.id} started in ${db} (${changedPart(run, input.plan)}); restore them or use another --db`,
      { field: 'session' },
    );
  },
  // Target cells, then (with a judge) the equivalence questions, whose number depends on the answers.
  stages: (config, _input, specs) => [
    { name: 'continuation', expected: specs.length },
    ...(config.judge !== undefined ? [{ name: 'judge', expected: null }] : []),
  ],
  async execute({ config, specs, stage, parsedStage, input }) {
    const targets = await stage(specs, 'continuation');
    const counts = { cells: specs.length, cutpoints: input.plan.cutpoints.length, judgeQuestions: 0 };
    if (config.judge === undefined || targets.stopReason !== null) return counts;
    const judge = config.judge;
    const byId = new Map(input.plan.cutpoints.map((c) => [c.id, c]));
    // The questions each cutpoint raised. A question raised at one cutpoint is asked once (for
    // every target and arm there); one raised at several is asked once per cutpoint, so no two
    // cutpoints (the units) share a judge draw (docs/statistics.md, "Units share no draws").
    const raised = new Map<string, { question: JudgeQuestion; cutpoints: Set<string> }>();
    specs.forEach((spec, index) => {
      const result = targets.results[index];
      const cut = byId.get(String(spec.labels.cutpoint));
      if (!cut || result?.status !== 'done') return;
      const answer = { text: result.text, toolCalls: result.toolCalls };
      for (const question of judgeQuestions(cut.groundTruth, scoreAnswer(cut.groundTruth, answer), result.toolCalls)) {
        const id = questionId(question);
        getOrInsert(raised, id, () => ({ question, cutpoints: new Set<string>() })).cutpoints.add(cut.id);
      }
    });
    const items: ParsedItem<boolean>[] = [];
    for (const { question, cutpoints } of raised.values()) {
      for (const cutpoint of cutpoints.size === 1 ? [null] : [...cutpoints]) {
        items.push({ spec: judgeSpec(judge.model, question, cutpoint), parse: parseEquivalence, reask: reaskEquivalence });
      }
    }
    counts.judgeQuestions = items.length;
    // Run even when empty: the declared stage is then recorded complete with 0 cells.
    await parsedStage(items, judge.retries, 'judge');
    return counts;
  },
};

export interface ContinuationRunResult {
  runId: string;
  resumed: boolean;
  cells: number;
  interrupted: boolean;
  /** Dollars over priced cells; `unpricedCells` had no known price (their cost is unknown). */
  spendUsd: number;
  unpricedCells: number;
  plan: ContinuationPlan;
}

export async function runContinuation(
  config: ContinuationConfig,
  db: string,
  runtime: StageRuntime = {},
  sessions?: { session: Session; cross: Session | undefined },
): Promise<ContinuationRunResult> {
  const materials = sessions ? loadContinuationMaterials(config.materials) : null;
  const input = sessions
    ? { ...sessions, materials, plan: planAndPrime(config, sessions.session, sessions.cross, materials) }
    : await continuationRunner.prepare(config);
  const { runAudit } = await import('../experiment/run-audit.js');
  const { runId, resumed, result, interrupted, spendUsd, unpricedCells } = await runAudit(continuationRunner, config, db, { runtime, input });
  return { runId, resumed, cells: result.cells, interrupted, spendUsd, unpricedCells, plan: input.plan };
}

export interface ScoredCell {
  target: string;
  cutpoint: string;
  arm: ContinuationArm;
  cellStatus: string;
  score: CallScore;
}

export interface ContinuationReport {
  experiment: 'continuation';
  runId: string;
  /** True when every target is a `sim:` simulation (nothing was measured). */
  simulated: boolean;
  session: string | null;
  crossSession: string | null;
  /** The donors of `crossSessions` (absent with one donor or none). */
  crossSessions?: string[];
  toolSource: string | null;
  tools: string[];
  taskSource: string | null;
  notes: string[];
  cutpoints: PlannedCutpoint[];
  analysis: ContinuationAnalysis;
  /** The optional semantic-equivalence judge: how its questions were answered (null: no judge). */
  judge: JudgeSummary | null;
  /** With `procedure: reference`: the panel scored as the authors' code scores it (the verdict stays the calibrated analysis). */
  reference: ReferenceContinuation | null;
  cells: ScoredCell[];
}

/** What the run manifest records of the plan (manifestOptions above), as the report reads it back. */
type ManifestOptions = Partial<
  Pick<ContinuationReport, 'cutpoints' | 'tools' | 'toolSource' | 'taskSource' | 'notes' | 'session' | 'crossSession' | 'crossSessions'>
>;

/** What the continuation audit reads back from a run: every target cell scored against its ground truth. */
export interface ContinuationCollected {
  observations: ContinuationObservation[];
  cells: ScoredCell[];
  cutpoints: PlannedCutpoint[];
  /** The optional judge's verdicts by kind (null when the run asked no judge). */
  judge: JudgeSummary | null;
  /** Each observation scored as the authors' code scores it (same order as observations). */
  referenceScores?: ReferenceCallScore[];
}

/** How the judge's distinct questions were answered. */
export interface JudgeSummary {
  model: string | null;
  questions: number;
  equivalent: number;
  different: number;
  invalid: number;
  unanswered: number;
}

/** The `analysis.clusterBy` setting as the analysis's cluster function (none: cutpoints are the units). */
function clusterOption(by: ClusterBy | undefined, cutpoints: readonly PlannedCutpoint[]): { clusterOf?: (cutpoint: string) => string } {
  if (by === undefined || by === 'none') return {};
  const clusters = cutpointClusters(cutpoints, by);
  return { clusterOf: (cutpoint) => clusters.get(cutpoint) ?? cutpoint };
}

/** With several cross donors (`crossSessions`), each cutpoint's donor: a sampled unit of the contrasts with the cross arm. */
function donorOption(cutpoints: readonly PlannedCutpoint[]): { crossDonorOf?: (cutpoint: string) => string } {
  const donors = new Map(cutpoints.filter((c) => c.crossDonor !== undefined).map((c) => [c.id, c.crossDonor as string]));
  if (new Set(donors.values()).size < 2) return {};
  return { crossDonorOf: (cutpoint) => donors.get(cutpoint) ?? cutpoint };
}

/** One cross transcript: its own effect is part of every cross cell, so the claim is about that donor. */
function withCrossWarning(analysis: ContinuationAnalysis, crossSession: unknown): ContinuationAnalysis {
  if (crossSession === null) return analysis;
  const warning =
    'the cross arm draws every cutpoint from one donor transcript: recent − cross compares with that donor only (its own effect is not averaged out); the p and interval are about this donor, not cross contexts in general';
  return { ...analysis, targets: analysis.targets.map((t) => ({ ...t, warnings: [...t.warnings, warning] })) };
}

export async function collectContinuation(store: RunStore, run: RunInfo): Promise<ContinuationCollected> {
  const options = (run.manifest.options ?? {}) as ManifestOptions;
  const cutpoints = options.cutpoints ?? [];
  const byId = new Map(cutpoints.map((c) => [c.id, c]));
  const observations: ContinuationObservation[] = [];
  const cells: ScoredCell[] = [];
  const all = await store.cellResultsOfRun(run.id);
  const config = recordedConfig(run);
  const verdicts = judgeVerdicts(all, config);
  const referenceScores: ReferenceCallScore[] = [];
  for (const cell of all) {
    const l = cell.labels;
    if (l.experiment !== CONTINUATION_EXPERIMENT || l.stage !== 'target') continue;
    const cut = byId.get(String(l.cutpoint));
    if (!cut) continue;
    const status = cell.result.status;
    const generated = status === 'done' || status === 'empty';
    const deterministic = scoreAnswer(cut.groundTruth, generated ? { text: cell.result.text, toolCalls: cell.result.toolCalls } : null);
    const score = verdicts.size > 0 ? applyVerdicts(cut.groundTruth, deterministic, cell.result.toolCalls, verdicts, cut.id) : deterministic;
    const arm = String(l.arm) as ContinuationArm;
    observations.push({ target: String(l.target), cutpoint: cut.id, arm, generated, status: score.status, fidelity: score.fidelity, sameTask: cut.sameTask });
    referenceScores.push(referenceCallScore(cut.groundTruth, generated ? cell.result.toolCalls : undefined));
    cells.push({ target: String(l.target), cutpoint: cut.id, arm, cellStatus: status, score });
  }
  return { observations, cells, cutpoints, judge: judgeSummary(verdicts, config), referenceScores };
}

/** The run's recorded config, or null when it no longer parses. */
function recordedConfig(run: RunInfo): ContinuationConfig | null {
  const parsed = continuationConfigSchema.safeParse(run.manifest.config);
  return parsed.success ? parsed.data : null;
}

function judgeSummary(verdicts: ReadonlyMap<string, JudgeVerdict>, config: ContinuationConfig | null): JudgeSummary | null {
  const model = config?.judge?.model ?? null;
  if (model === null && verdicts.size === 0) return null;
  const summary: JudgeSummary = { model, questions: verdicts.size, equivalent: 0, different: 0, invalid: 0, unanswered: 0 };
  for (const verdict of verdicts.values()) summary[verdict] += 1;
  return summary;
}

type StoredCell = Awaited<ReturnType<RunStore['cellResultsOfRun']>>[number];

/** The judge's verdict per question id (re-ask chains resolved; empty without judge cells). */
function judgeVerdicts(cells: readonly StoredCell[], config: ContinuationConfig | null): Map<string, JudgeVerdict> {
  const judged = cells.filter((c) => c.labels.experiment === CONTINUATION_EXPERIMENT && c.labels.stage === JUDGE_STAGE);
  const out = new Map<string, JudgeVerdict>();
  if (judged.length === 0) return out;
  const retries = config?.judge ? config.judge.retries : Number.POSITIVE_INFINITY;
  const chains = groupReaskChains(
    judged,
    (c) => (typeof c.labels.question === 'string' ? c.labels.question : null),
    (c) => (typeof c.labels.attempt === 'number' ? c.labels.attempt : 0),
  );
  const reader = { text: (c: StoredCell) => (c.result.status === 'done' ? c.result.text : null) };
  for (const [question, chain] of chains) {
    const resolved = resolveReaskChain(chain, reader, parseEquivalence, retries);
    out.set(question, resolved.status === 'ok' ? (resolved.value ? 'equivalent' : 'different') : resolved.status === 'invalid' ? 'invalid' : 'unanswered');
  }
  return out;
}

/** The analysis of a collected run (pure over what was collected and the recorded config). */
export function analyzeContinuationRun(collected: ContinuationCollected, run: RunInfo, options: { resamples?: number } = {}): ContinuationReport {
  const manifest = (run.manifest.options ?? {}) as ManifestOptions;
  const config = recordedConfig(run);
  const resamples = options.resamples ?? config?.analysis.resamples ?? 20_000;
  const seed = config?.seed ?? 42;
  const targets = [...new Set(collected.observations.map((o) => o.target))];
  return {
    experiment: 'continuation',
    runId: run.id,
    simulated: targets.length > 0 && targets.every((t) => t.startsWith('sim:')),
    session: manifest.session ?? null,
    crossSession: manifest.crossSession ?? null,
    ...(manifest.crossSessions ? { crossSessions: manifest.crossSessions } : {}),
    toolSource: manifest.toolSource ?? null,
    tools: manifest.tools ?? [],
    taskSource: manifest.taskSource ?? null,
    notes: manifest.notes ?? [],
    cutpoints: collected.cutpoints,
    analysis: withCrossWarning(
      analyzeContinuation(collected.observations, {
        resamples,
        seed,
        ...(config?.analysis.effectOfInterest !== undefined ? { effectOfInterest: config.analysis.effectOfInterest } : {}),
        ...clusterOption(config?.analysis.clusterBy, collected.cutpoints),
        ...donorOption(collected.cutpoints),
      }),
      manifest.crossSession ?? null,
    ),
    judge: collected.judge,
    reference:
      config?.procedure === 'reference' && collected.referenceScores
        ? analyzeReferenceContinuation(
            collected.observations.map((o, i) => ({ ...o, reference: collected.referenceScores?.[i] ?? { toolMatch: false, argSimilarity: null } })),
            { resamples, seed },
          )
        : null,
    cells: collected.cells,
  };
}

/** Scores every cell of a run against the recorded ground truth and analyses them (reads only the store). */
export async function continuationReport(store: RunStore, runId: string, options: { resamples?: number } = {}): Promise<ContinuationReport> {
  const run = await store.requireRun(runId);
  return analyzeContinuationRun(await collectContinuation(store, run), run, options);
}
