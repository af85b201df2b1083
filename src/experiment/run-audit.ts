import { spendOrNull } from '../core/money.js';
import type { RunStore } from '../store/run-store.js';
import type { StageDeclaration } from '../store/run-stages.js';
import type { RunCellsResult } from '../store/runner.js';
import type { CellSpec } from '../store/types.js';
import type { PlanEstimate } from '../models/estimate.js';
import type { AuditRunContext, AuditRunner, AuditRunResult, AuditRunSummary } from './audit.js';
import { cacheSettingsOf } from './limits-schema.js';
import { budgetInForce } from './preflight.js';
import type { MeasurementRequest } from './measurement.js';
import { afterStage } from './stage-hooks.js';
import { type StageTally, stageTally } from './stage-tally.js';
import { setResponseRedaction } from '../store/answer-scrub.js';
import type { StageRuntime } from './runtime.js';

// Reports, the gate and the viewer read runs through analyze-run.ts; they and this module's importers
// (the audits' run modules) load the execution engine only when a run starts (runAudit below).
export { analyzeAuditRun, auditRunId, latestRun } from './analyze-run.js';

/**
 * The one run lifecycle every audit shares: prepare and plan (the audit),
 * open the store and record the manifest, install Ctrl-C handling, apply the
 * config's limits under the command's flags, run the audit's stages while
 * tallying spend and stops, and always dispose the signals and close the store.
 */

/** Exit codes of run commands: 0 done, 2 a user-facing error, 3 stopped early (resume with the same command), 70 internal. */
export const AUDIT_EXIT = { done: 0, error: 2, interrupted: 3, internal: 70 } as const;

export function auditExitCode(result: Pick<AuditRunResult<unknown>, 'interrupted'>): number {
  return result.interrupted ? AUDIT_EXIT.interrupted : AUDIT_EXIT.done;
}

export interface RunAuditOptions<Input> {
  /** Flags that override the config's limits; `signal` given = the caller handles Ctrl-C. */
  runtime?: StageRuntime;
  /** Inputs already prepared (the CLI reads them once for a dry run and the run). */
  input?: Input;
  /** The plan of those inputs, already made (by the preflight): then `plan` is not called again. */
  specs?: readonly CellSpec[];
  /** The seed recorded in the manifest (default: the config's `seed`, else 0). */
  seed?: number;
  /**
   * Add the audit's stages to this existing run of the store instead of opening the config's own run
   * (`persona rejudge`): no manifest is written, the declared stages are appended to the run's stage
   * ledger, and the run is `running` until they are all complete. The run must be of this audit.
   */
  attachTo?: string;
  /** `--fresh`, `--max-age`, `--tag` (experiment/measurement.ts); the config's `fresh: true` counts as `--fresh`. */
  measurement?: MeasurementRequest;
}

export async function runAudit<C, I, X>(audit: AuditRunner<C, I, X>, config: C, db: string, options: RunAuditOptions<I> = {}): Promise<AuditRunResult<X>> {
  const runtime = options.runtime ?? {};
  const input = options.input ?? (await audit.prepare(config));
  // Plan before opening the store: a config that cannot plan leaves no run behind.
  const specs = options.specs ?? audit.plan(config, input);
  const configSeed = (config as { seed?: unknown }).seed;
  const seed = options.seed ?? (typeof configSeed === 'number' ? configSeed : 0);
  const configFresh = (config as { fresh?: unknown }).fresh === true;
  const measurement: MeasurementRequest = { ...options.measurement, ...(configFresh ? { fresh: true } : {}) };
  const { attachExperimentRun, installStopSignals, openExperimentRun, runParsedStage, runStage } = await import('./runtime.js');
  const { store, runId, resumed, salt } =
    options.attachTo === undefined
      ? await openExperimentRun(db, audit.name, config, seed, audit.manifestOptions(config, input), measurement)
      : await attachExperimentRun(db, audit.name, options.attachTo);
  try {
    if (resumed && audit.checkResume) audit.checkResume(await store.requireRun(runId), config, input, db);
    // The stages the run goes through, recorded before any runs: until each is complete the run is not done.
    if (audit.stages && options.attachTo === undefined) await store.declareStages(runId, audit.stages(config, input, specs));
    else if (audit.stages) await attachStages(store, runId, audit.stages(config, input, specs));
  } catch (error) {
    await store.close();
    throw error;
  }
  // `redactResponses: true`: personal data in answers is replaced before they are stored (docs/sessions.md).
  if ((config as { redactResponses?: unknown }).redactResponses === true) {
    const { redactPiiText } = await import('../sessions/redact/pii.js');
    setResponseRedaction(redactPiiText);
  }
  const signals = runtime.signal ? undefined : installStopSignals();
  const limits = audit.limits(config);
  const cache = cacheSettingsOf(limits);
  const stageRuntime: StageRuntime = {
    ...runtime,
    ...(salt ? { measurementSalt: salt } : {}),
    ...(signals ? { signal: signals.signal, hardSignal: signals.hardSignal } : {}),
    concurrency: runtime.concurrency ?? limits.concurrency,
    requestsPerMinute: runtime.requestsPerMinute ?? limits.requestsPerMinute,
    tokensPerMinute: runtime.tokensPerMinute ?? limits.tokensPerMinute,
    maxCostUsd: runtime.maxCostUsd ?? limits.maxCostUsd,
    ...((runtime.timeoutMs ?? limits.timeoutMs) ? { timeoutMs: runtime.timeoutMs ?? limits.timeoutMs } : {}),
    ...(Object.keys(cache).length > 0 ? { cache } : {}),
  };
  let spendUsd = 0;
  let unpricedCells = 0;
  let stopped = false;
  let stopReason: AuditRunResult<X>['stopReason'] = null;
  const stages: StageTally[] = [];
  const tally = (stage: RunCellsResult, label: string) => {
    stages.push(stageTally(label, stage));
    spendUsd += stage.spendUsd;
    unpricedCells += stage.unpricedCells;
    if (stage.stopReason !== null) {
      stopped = true;
      stopReason ??= stage.stopReason;
    }
  };
  // A stage starting records its exact count; counts already recorded for that count stand (a resume
  // re-runs every stage, and its cells stay registered), any other count starts from nothing.
  const startStage = async (label: string, expected: number) => {
    const known = (await store.stages(runId)).find((s) => s.stage === label);
    const same = known !== undefined && known.expected === expected;
    await store.recordStage(runId, label, { expected, registered: same ? known.registered : 0, settled: same ? known.settled : 0 });
  };
  // A stage's counts are written when it ends; the run becomes done only when the last stage does (the store checks).
  const endStage = async (label: string, counts: { expected: number; registered: number; settled: number }, finished: boolean) => {
    await store.recordStage(runId, label, counts);
    if (finished) await store.setRunStatus(runId, 'done');
    afterStage(label);
  };
  const context: AuditRunContext<C, I> = {
    config,
    input,
    store,
    runId,
    resumed,
    specs,
    runtime: stageRuntime,
    async stage(specs, label) {
      await startStage(label, specs.length);
      // One budget for the whole run: each stage is given what the earlier ones spent.
      const result = await runStage(store, runId, specs, { ...stageRuntime, label, spentBeforeUsd: spendUsd });
      tally(result, label);
      const settled = result.results.filter((r) => r.status !== 'pending').length;
      await endStage(label, { expected: specs.length, registered: specs.length, settled }, result.stopReason === null);
      return result;
    },
    async parsedStage(items, retries, label) {
      await startStage(label, items.length);
      const result = await runParsedStage(store, runId, items, retries, { ...stageRuntime, label, spentBeforeUsd: spendUsd });
      // Labelled as runParsedStage labels their progress lines.
      result.stages.forEach((stage, attempt) => {
        tally(stage, `${label} (attempt ${attempt + 1})`);
      });
      // Settled: parsed, invalid after its re-asks, or answered empty / failed; a cell left pending is not.
      const settled = result.outcomes.filter((o) => o !== undefined && (o.status !== 'unanswered' || o.result.status !== 'pending')).length;
      const registered = result.stages.length > 0 ? items.length : 0;
      await endStage(
        label,
        { expected: items.length, registered, settled },
        result.stages.every((s) => s.stopReason === null),
      );
      return result;
    },
    get stopped() {
      return stopped;
    },
  };
  try {
    const result = await audit.execute(context);
    return { audit: audit.name, runId, resumed, interrupted: stopped, stopReason, spendUsd, unpricedCells, result, stages };
  } finally {
    signals?.dispose();
    setResponseRedaction(undefined);
    await store.close();
  }
}

/**
 * Appends stages to an existing run's ledger (after its own; a stage already there keeps its counts) and
 * marks the run running: it is done again only when every stage, old and new, is complete.
 */
async function attachStages(store: RunStore, runId: string, stages: readonly StageDeclaration[]): Promise<void> {
  const known = new Set((await store.stages(runId)).map((s) => s.stage));
  for (const stage of stages) {
    if (!known.has(stage.name) && stage.expected !== null) await store.recordStage(runId, stage.name, { expected: stage.expected, registered: 0, settled: 0 });
  }
  await store.setRunStatus(runId, 'running');
}

/** What an audit's preflight checked, handed to {@link runCheckedAudit}. */
export interface CheckedAuditInput<Input> {
  input: Input;
  specs: readonly CellSpec[];
  /** The grid's price, when the preflight priced it (a budget was set). */
  estimate?: PlanEstimate | undefined;
  /** The config's budget; the command's `maxCostUsd` flag overrides it. */
  configMaxCostUsd: number | null | undefined;
}

/**
 * The library's `run<Audit>` functions: runs the audit on the inputs and plan its preflight
 * checked, and returns the audit's counts with the run summary, plus, when a budget is in force
 * and the grid was priced, that budget and one covering the whole estimate.
 */
export async function runCheckedAudit<C, I, X>(
  audit: AuditRunner<C, I, X>,
  config: C,
  db: string,
  runtime: StageRuntime,
  checked: CheckedAuditInput<I>,
): Promise<X & AuditRunSummary> {
  const budget = budgetInForce(checked.estimate, runtime.maxCostUsd ?? checked.configMaxCostUsd);
  const run = await runAudit(audit, config, db, { runtime, input: checked.input, specs: checked.specs });
  return {
    runId: run.runId,
    resumed: run.resumed,
    ...run.result,
    interrupted: run.interrupted,
    stopReason: run.stopReason,
    spendUsd: spendOrNull(run.spendUsd, run.unpricedCells),
    pricedSpendUsd: run.spendUsd,
    unpricedCells: run.unpricedCells,
    ...(budget ? { budget } : {}),
  };
}
