import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { hashCanonical } from '../core/canonical-json.js';
import { configFromOverrides, loadConfigFile } from '../core/config-file.js';
import { ConfigError } from '../core/errors.js';
import type { AuditRunner } from '../experiment/audit.js';
import { auditRunId, runAudit } from '../experiment/run-audit.js';
import type { StageRuntime } from '../experiment/runtime.js';
import { readSession } from '../sessions/read.js';
import type { Session } from '../sessions/types.js';
import type { RunInfo, RunStore } from '../store/run-store.js';
import { analyzeContinuation, type ContinuationAnalysis, type ContinuationObservation } from './analysis.js';
import type { ContinuationArm } from './arms.js';
import { type ContinuationConfig, continuationConfigSchema } from './config.js';
import { CONTINUATION_EXPERIMENT, type ContinuationPlan, type PlannedCutpoint, planContinuation } from './plan.js';
import { type CallScore, scoreAnswer } from './scoring.js';
import { registerSimTruth } from './sim.js';

/** The I/O edge of the continuation audit: read the transcripts, run the cells, read them back. */

function resolvePath(path: string, base: string): string {
  if (path === '~' || path.startsWith('~/')) return join(homedir(), path.slice(1));
  return isAbsolute(path) ? path : resolve(base, path);
}

function resolvePaths(config: ContinuationConfig, base: string): ContinuationConfig {
  const out: ContinuationConfig = { ...config, session: resolvePath(config.session, base) };
  if (config.crossSession) out.crossSession = resolvePath(config.crossSession, base);
  if (config.tools) out.tools = resolvePath(config.tools, base);
  if (config.tasks) out.tasks = resolvePath(config.tasks, base);
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

export async function readContinuationSessions(config: ContinuationConfig): Promise<{ session: Session; cross: Session | undefined }> {
  const read = async (file: string, field: string) => {
    try {
      return await readSession(file);
    } catch (error) {
      throw new ConfigError(`cannot read session: ${(error as Error).message}`, { field });
    }
  };
  const session = await read(config.session, 'session');
  const cross = config.crossSession ? await read(config.crossSession, 'crossSession') : undefined;
  return { session, cross };
}

/** Plans, and tells the simulated targets the ground truth (they cannot know it otherwise). */
export function planAndPrime(config: ContinuationConfig, session: Session, cross: Session | undefined): ContinuationPlan {
  const plan = planContinuation(config, session, cross);
  if (config.targets.some((t) => t.startsWith('sim:'))) {
    for (const arms of plan.arms) registerSimTruth(arms.immediate, arms.cutpoint.groundTruth, arms.arms.recent.messages[0]?.content ?? null);
  }
  return plan;
}

/** What the continuation audit reads before planning: the transcripts and the plan built from them. */
export interface ContinuationInput {
  session: Session;
  cross: Session | undefined;
  plan: ContinuationPlan;
}

export interface ContinuationRunCounts {
  cells: number;
  cutpoints: number;
}

/** The continuation audit's run stage (the lifecycle around it is runAudit's). */
/**
 * What a resume must find unchanged: every planned request (prefix windows,
 * tools, the cutpoint's last turn) and every cutpoint's ground truth. The run id
 * hashes the config, which names the transcripts but not their content, so a
 * session that grew or was edited would otherwise resume into a different plan.
 */
function inputFingerprint(plan: ContinuationPlan): string {
  return hashCanonical({ requests: plan.specs.map((s) => s.request), truths: plan.cutpoints.map((c) => [c.id, c.groundTruth]) });
}

function changedPart(run: RunInfo, plan: ContinuationPlan): string {
  const recorded = (run.manifest.options as { cutpoints?: Array<{ id?: unknown; groundTruth?: unknown }> } | undefined)?.cutpoints ?? [];
  const now = plan.cutpoints.map((c) => hashCanonical([c.id, c.groundTruth]));
  const before = recorded.map((c) => hashCanonical([c.id, c.groundTruth]));
  const changed = now.filter((h, i) => h !== before[i]).length + Math.max(0, before.length - now.length);
  return changed > 0 ? `${changed} of ${plan.cutpoints.length} cutpoints now have another position or next tool call` : 'the cutpoints are the same, the prompts before them are not';
}

export const continuationRunner: AuditRunner<ContinuationConfig, ContinuationInput, ContinuationRunCounts> = {
  name: CONTINUATION_EXPERIMENT,
  limits: (config) => config.limits,
  async prepare(config) {
    const { session, cross } = await readContinuationSessions(config);
    return { session, cross, plan: planAndPrime(config, session, cross) };
  },
  plan: (_config, input) => input.plan.specs,
  manifestOptions: (_config, { session, cross, plan }) => ({
    inputFingerprint: inputFingerprint(plan),
    cutpoints: plan.cutpoints,
    tools: plan.tools.map((t) => t.name),
    toolSource: plan.toolSource,
    taskSource: plan.taskSource,
    tasks: plan.tasks,
    notes: plan.notes,
    session: session.file,
    crossSession: cross?.file ?? null,
  }),
  checkResume(run, _config, input, db) {
    const recorded = (run.manifest.options as { inputFingerprint?: unknown } | undefined)?.inputFingerprint;
    if (recorded === undefined || recorded === inputFingerprint(input.plan)) return;
    throw new ConfigError(
      `the transcript, cross session, tool schema or task file changed since run ${run.id} started in ${db} (${changedPart(run, input.plan)}); restore them or use another --db`,
      { field: 'session' },
    );
  },
  async execute({ specs, stage, input }) {
    await stage(specs, 'continuation');
    return { cells: specs.length, cutpoints: input.plan.cutpoints.length };
  },
};

export interface ContinuationRunResult {
  runId: string;
  resumed: boolean;
  cells: number;
  interrupted: boolean;
  spendUsd: number;
  plan: ContinuationPlan;
}

export async function runContinuation(
  config: ContinuationConfig,
  db: string,
  runtime: StageRuntime = {},
  sessions?: { session: Session; cross: Session | undefined },
): Promise<ContinuationRunResult> {
  const input = sessions ? { ...sessions, plan: planAndPrime(config, sessions.session, sessions.cross) } : await continuationRunner.prepare(config);
  const run = await runAudit(continuationRunner, config, db, { runtime, input });
  return { runId: run.runId, resumed: run.resumed, cells: run.result.cells, interrupted: run.interrupted, spendUsd: run.spendUsd, plan: input.plan };
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
  toolSource: string | null;
  tools: string[];
  taskSource: string | null;
  notes: string[];
  cutpoints: PlannedCutpoint[];
  analysis: ContinuationAnalysis;
  cells: ScoredCell[];
}

/** The latest continuation run in a store, or the one named. */
export function continuationRunId(store: RunStore, runId?: string): string {
  return auditRunId(store, CONTINUATION_EXPERIMENT, runId);
}

interface ManifestOptions {
  cutpoints?: PlannedCutpoint[];
  tools?: string[];
  toolSource?: string;
  taskSource?: string;
  notes?: string[];
  session?: string;
  crossSession?: string | null;
}

/** What the continuation audit reads back from a run: every target cell scored against its ground truth. */
export interface ContinuationCollected {
  observations: ContinuationObservation[];
  cells: ScoredCell[];
  cutpoints: PlannedCutpoint[];
}

export function collectContinuation(store: RunStore, run: RunInfo): ContinuationCollected {
  const options = (run.manifest.options ?? {}) as ManifestOptions;
  const cutpoints = options.cutpoints ?? [];
  const byId = new Map(cutpoints.map((c) => [c.id, c]));
  const observations: ContinuationObservation[] = [];
  const cells: ScoredCell[] = [];
  for (const cell of store.cellResultsOfRun(run.id)) {
    const l = cell.labels;
    if (l.experiment !== CONTINUATION_EXPERIMENT || l.stage !== 'target') continue;
    const cut = byId.get(String(l.cutpoint));
    if (!cut) continue;
    const status = cell.result.status;
    const generated = status === 'done' || status === 'empty';
    const score = scoreAnswer(cut.groundTruth, generated ? { text: cell.result.text, toolCalls: cell.result.toolCalls } : null);
    const arm = String(l.arm) as ContinuationArm;
    observations.push({ target: String(l.target), cutpoint: cut.id, arm, generated, status: score.status, fidelity: score.fidelity, sameTask: cut.sameTask });
    cells.push({ target: String(l.target), cutpoint: cut.id, arm, cellStatus: status, score });
  }
  return { observations, cells, cutpoints };
}

/** The analysis of a collected run (pure over what was collected and the recorded config). */
export function analyzeContinuationRun(collected: ContinuationCollected, run: RunInfo, options: { resamples?: number } = {}): ContinuationReport {
  const manifest = (run.manifest.options ?? {}) as ManifestOptions;
  const parsed = continuationConfigSchema.safeParse(run.manifest.config);
  const resamples = options.resamples ?? (parsed.success ? parsed.data.analysis.resamples : 20_000);
  const seed = parsed.success ? parsed.data.seed : 42;
  const targets = [...new Set(collected.observations.map((o) => o.target))];
  return {
    experiment: 'continuation',
    runId: run.id,
    simulated: targets.length > 0 && targets.every((t) => t.startsWith('sim:')),
    session: manifest.session ?? null,
    crossSession: manifest.crossSession ?? null,
    toolSource: manifest.toolSource ?? null,
    tools: manifest.tools ?? [],
    taskSource: manifest.taskSource ?? null,
    notes: manifest.notes ?? [],
    cutpoints: collected.cutpoints,
    analysis: analyzeContinuation(collected.observations, { resamples, seed }),
    cells: collected.cells,
  };
}

/** Scores every cell of a run against the recorded ground truth and analyses them (reads only the store). */
export function continuationReport(store: RunStore, runId: string, options: { resamples?: number } = {}): ContinuationReport {
  const run = store.requireRun(runId);
  return analyzeContinuationRun(collectContinuation(store, run), run, options);
}
