import { execFileSync } from 'node:child_process';
import { definedFields } from '../core/copy-defined.js';
import { ConfigError } from '../core/errors.js';
import { packageRoot, packageVersion } from '../core/version.js';
import { costOf, loadPriceTable } from '../models/prices.js';
import type { ChatMessage } from '../models/types.js';
import { type InterruptSignals, interruptSignals } from '../store/interrupt.js';
import { createProgressReporter } from '../store/progress.js';
import '../store/replay.js';
import { billingLine } from '../store/billing-line.js';
import { runCellsBatch } from '../store/batch-runner.js';
import { openStore, type RunStore } from '../store/run-store.js';
import { type RunCellsOptions, type RunCellsResult, runCells } from '../store/runner.js';
import type { CellResult, CellSpec, RunManifest } from '../store/types.js';
import { decideMeasurement, designIdOf, type MeasurementRequest, measurementOf, runsOfDesign, saltSpecs } from './measurement.js';

/**
 * Shared edge of both audits: open the store, record the manifest, run a stage
 * of cells with progress, signals, limits and cost, and re-ask unparseable
 * judge/labeler outputs (docs/decisions.md#d2).
 */

export function gitCommit(cwd = packageRoot()): string | null {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || null;
  } catch {
    return null;
  }
}

export interface ExperimentRun {
  store: RunStore;
  runId: string;
  resumed: boolean;
  /** The run's measurement salt (null for a design's first measurement): `runStage` adds it to every cell's key. */
  salt: string | null;
}

/**
 * The run id is derived from the experiment and its canonical config (the design id), so the
 * same command against the same database resumes the same run: the latest measurement of the
 * design. `measurement.fresh` (or a latest measurement older than `measurement.maxAgeMs`) opens a
 * new run of the same design instead (experiment/measurement.ts); earlier runs are kept.
 */
export async function openExperimentRun(
  db: string,
  experiment: string,
  config: unknown,
  seed: number,
  options: Record<string, unknown> = {},
  measurement: MeasurementRequest = {},
): Promise<ExperimentRun> {
  const store = openStore(db);
  try {
    const designId = designIdOf(experiment, config);
    const decision = decideMeasurement(designId, runsOfDesign(await store.listRuns(), designId), measurement);
    if (decision.action === 'resume') return { store, runId: decision.run.id, resumed: true, salt: decision.record.salt };
    const manifest: RunManifest = {
      experiment,
      config,
      seed,
      versions: { echolens: packageVersion(), node: process.version },
      gitCommit: gitCommit(),
      options,
      measurement: decision.record,
    };
    await store.createRun(manifest, { id: decision.runId });
    return { store, runId: decision.runId, resumed: false, salt: decision.record.salt };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/** An existing run of `experiment` opened for more stages (run-audit.ts, `attachTo`); a wrong id closes the store and throws. */
export async function attachExperimentRun(db: string, experiment: string, runId: string): Promise<ExperimentRun> {
  const store = openStore(db);
  const run = await store.getRun(runId);
  if (!run || run.experiment !== experiment) {
    await store.close();
    throw new ConfigError(run ? `run ${runId} is a ${run.experiment} run, not a ${experiment} run` : `no run ${runId} in ${db}`, { field: 'run' });
  }
  return { store, runId, resumed: true, salt: measurementOf(run).salt };
}

export interface StageRuntime {
  concurrency?: number;
  requestsPerMinute?: number;
  tokensPerMinute?: number;
  maxCostUsd?: number;
  /** Spend of the run's earlier stages (USD): counted against `maxCostUsd` and shown with this stage's. */
  spentBeforeUsd?: number;
  priceFile?: string;
  signal?: AbortSignal;
  hardSignal?: AbortSignal;
  /** Show progress on stderr (default true). */
  progress?: boolean;
  label?: string;
  adapterFor?: RunCellsOptions['adapterFor'];
  /** Deadline of one attempt of one call (ms), given to every adapter this stage builds. */
  timeoutMs?: number;
  /** Prompt-cache settings (config `limits.cacheTtl`, `limits.openaiCacheRetention`, `limits.promptCacheKey`). */
  cache?: RunCellsOptions['cache'];
  /** `--batch`: OpenAI / Anthropic cells go through the providers' batch APIs (src/store/batch-runner.ts). */
  batch?: boolean;
  /** `--poll-interval`: time between polls of open batch jobs (ms). */
  pollIntervalMs?: number;
  /** `--dry-run`: preflight reports missing API keys as warnings, so a grid can be priced before keys exist. */
  dryRun?: boolean;
  /** A re-measurement's salt (experiment/measurement.ts): joins every cell's key, so no earlier answer is reused. */
  measurementSalt?: string | null;
}

/** Builds adapters whose every attempt ends after `timeoutMs` (a hung endpoint is a timeout, retried). */
export function adapterWithTimeout(timeoutMs: number): NonNullable<RunCellsOptions['adapterFor']> {
  return async (ref) => {
    const models = await import('../models/index.js');
    return models.createAdapter(ref, { timeoutMs });
  };
}

export async function runStage(store: RunStore, runId: string, planned: readonly CellSpec[], runtime: StageRuntime = {}): Promise<RunCellsResult> {
  const specs = saltSpecs(planned, runtime.measurementSalt);
  const prices = loadPriceTable(runtime.priceFile ? { file: runtime.priceFile } : {});
  const reporter =
    runtime.progress === false
      ? undefined
      : createProgressReporter({
          label: runtime.label ?? runId,
          ...(runtime.maxCostUsd !== undefined ? { budgetUsd: runtime.maxCostUsd } : {}),
          ...(runtime.spentBeforeUsd ? { spentBeforeUsd: runtime.spentBeforeUsd } : {}),
        });
  const limits =
    runtime.requestsPerMinute || runtime.tokensPerMinute
      ? { '*': { requestsPerMinute: runtime.requestsPerMinute, tokensPerMinute: runtime.tokensPerMinute } }
      : undefined;
  // --batch: the same options, plus the poll interval and one-line notices on stderr.
  const batch =
    runtime.batch === true
      ? {
          ...(runtime.pollIntervalMs !== undefined ? { pollIntervalMs: runtime.pollIntervalMs } : {}),
          notify: (line: string) => void process.stderr.write(`${line}\n`),
        }
      : undefined;
  const run = batch ? (s: RunStore, r: string, c: readonly CellSpec[], o: RunCellsOptions) => runCellsBatch(s, r, c, { ...o, ...batch }) : runCells;
  let result: RunCellsResult;
  try {
    result = await run(store, runId, specs, {
      ...(runtime.concurrency ? { concurrency: runtime.concurrency } : {}),
      ...(limits ? { limits } : {}),
      ...definedFields(runtime, ['maxCostUsd', 'cache', 'signal', 'hardSignal']),
      ...(runtime.spentBeforeUsd ? { spentBeforeUsd: runtime.spentBeforeUsd } : {}),
      ...(runtime.adapterFor
        ? { adapterFor: runtime.adapterFor }
        : runtime.timeoutMs !== undefined
          ? { adapterFor: adapterWithTimeout(runtime.timeoutMs) }
          : {}),
      costOf: (model, usage) => costOf(model, usage, prices),
      ...(reporter ? { onProgress: (snapshot) => reporter.update(snapshot) } : {}),
    });
  } finally {
    reporter?.finish();
  }
  const billed = reporter ? billingLine(runtime.label ?? runId, result) : null;
  if (billed !== null) process.stderr.write(`${billed}\n`);
  return result;
}

/** A cell whose output must parse; failures are re-asked with a reminder. */
export interface ParsedItem<T> {
  spec: CellSpec;
  parse(text: string): { ok: true; value: T } | { ok: false; error: string };
  /** Builds the re-ask conversation from the previous messages and the bad output. */
  reask(previous: ChatMessage[], badOutput: string): ChatMessage[];
}

export type ParsedOutcome<T> =
  | { status: 'ok'; value: T; attempts: number; key: string }
  | { status: 'invalid'; error: string; attempts: number; key: string }
  | { status: 'unanswered'; result: CellResult; attempts: number };

/**
 * Runs the items, then re-asks the ones whose output does not parse, up to
 * `retries` more times (each re-ask is its own cell, so it is cached and
 * resumable). Outputs that still fail are `invalid`: excluded and counted.
 */
export async function runParsedStage<T>(
  store: RunStore,
  runId: string,
  items: readonly ParsedItem<T>[],
  retries: number,
  runtime: StageRuntime = {},
): Promise<{ outcomes: ParsedOutcome<T>[]; stages: RunCellsResult[] }> {
  const outcomes: ParsedOutcome<T>[] = new Array(items.length);
  const stages: RunCellsResult[] = [];
  let active: Array<{ index: number; spec: CellSpec; last?: CellResult }> = items.map((item, index) => ({ index, spec: item.spec }));
  for (let attempt = 0; attempt <= retries && active.length > 0; attempt++) {
    const label = `${runtime.label ?? runId} (attempt ${attempt + 1})`;
    const spentBeforeUsd = stages.reduce((sum, s) => sum + s.spendUsd, runtime.spentBeforeUsd ?? 0);
    const specs = active.map((a) => a.spec);
    const stage = await runStage(store, runId, specs, { ...runtime, label, spentBeforeUsd });
    stages.push(stage);
    const next: typeof active = [];
    active.forEach((a, k) => {
      const result = stage.results[k] as CellResult;
      const item = items[a.index] as ParsedItem<T>;
      if (result.status !== 'done' || result.text === null) {
        outcomes[a.index] = { status: 'unanswered', result, attempts: attempt + 1 };
        return;
      }
      const parsed = item.parse(result.text);
      if (parsed.ok) {
        outcomes[a.index] = { status: 'ok', value: parsed.value, attempts: attempt + 1, key: result.key };
      } else if (attempt < retries) {
        const badOutput = result.text;
        next.push({
          index: a.index,
          last: result,
          spec: {
            request: { ...a.spec.request, messages: item.reask(a.spec.request.messages, badOutput) },
            labels: { ...a.spec.labels, attempt: attempt + 1 },
            // A re-ask of a cell stored under an earlier prompt shape was stored in that shape too.
            ...(a.spec.legacyRequests === undefined
              ? {}
              : { legacyRequests: a.spec.legacyRequests.map((legacy) => ({ ...legacy, messages: item.reask(legacy.messages, badOutput) })) }),
          },
        });
      } else {
        outcomes[a.index] = { status: 'invalid', error: parsed.error, attempts: attempt + 1, key: result.key };
      }
    });
    if (stage.interrupted || stage.stopReason !== null) {
      for (const a of next) outcomes[a.index] = { status: 'unanswered', result: a.last as CellResult, attempts: attempt + 1 };
      break;
    }
    active = next;
  }
  return { outcomes, stages };
}

/** SIGINT/SIGTERM: the first finishes in-flight cells and stops; the second cancels them. */
export function installStopSignals(): InterruptSignals {
  return interruptSignals(process, (_name, level) => {
    process.stderr.write(
      level === 'graceful'
        ? '\necholens: stopping after in-flight cells finish (press Ctrl-C again to cancel them)\n'
        : '\necholens: cancelling in-flight cells; they stay pending and a re-run resumes them\n',
    );
  });
}
