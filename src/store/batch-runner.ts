import { addTokenCounts } from '../core/token-counts.js';
import { ConfigError, InvalidArgumentError } from '../core/errors.js';
import type { BatchClient, BatchEndpoint, BatchLineResult, BatchProvider, BatchState } from '../models/batch/index.js';
import { ModelCallError, RETRYABLE_KINDS } from '../models/errors.js';
import { defaultSleep } from '../models/retry.js';
import { type ModelRequest, type TokenUsage, ZERO_USAGE } from '../models/types.js';
import { type BatchJob, BatchJobs } from './batch-jobs.js';
import type { CellOutcome, RunStatus, RunStore } from './run-store.js';
import { type CostFn, FatalBurstError, type ProgressSnapshot, type RunCellsOptions, type RunCellsResult, runCells, type RunSummary, type StopReason } from './runner.js';
import { estimateInputTokens } from './schedule.js';
import type { CellResult, CellSpec } from './types.js';

export interface RunCellsBatchOptions extends RunCellsOptions {
  /** Time between status polls of open batch jobs (ms). Default 30 000. */
  pollIntervalMs?: number;
  /** Where API keys and base URLs are read (default process.env). */
  env?: Record<string, string | undefined>;
  /** Builds the wire client of a provider (default: the OpenAI / Anthropic batch clients). */
  batchClientFor?: (endpoint: BatchEndpoint) => BatchClient;
  /** One-line notices: online fallback, job submitted, per-job counts while polling. */
  notify?: (line: string) => void;
  /**
   * Largest batch echolens builds, in bytes of request bodies (default 100 MB, below both
   * providers' limits): the whole batch is held in memory while it is uploaded.
   */
  maxBatchBytes?: number;
}

type BatchModule = typeof import('../models/batch/index.js');

/** A stop found while talking to a batch endpoint: the run ends with this reason. */
class BatchStop extends Error {
  constructor(
    readonly reason: StopReason,
    message: string,
    readonly kind = 'batch',
  ) {
    super(message);
  }
}

interface OpenJob {
  job: BatchJob;
  client: BatchClient;
  provider: BatchProvider;
  lastNote: string;
  errors: number;
}

/**
 * Runs a plan through the providers' batch APIs (OpenAI Batch, Anthropic Message
 * Batches) at half price: the same cells, keys and store rows as `runCells`, but
 * each model's pending cells go out as provider batches that are polled until they
 * end. Jobs are recorded in the store before submission, so a killed run collects
 * them on its next start and never submits a held cell twice. Cells of providers
 * without a batch API run online through `runCells`.
 */
export async function runCellsBatch(
  store: RunStore,
  runId: string,
  specs: readonly CellSpec[],
  options: RunCellsBatchOptions = {},
): Promise<RunCellsResult> {
  const pollIntervalMs = options.pollIntervalMs ?? 30_000;
  if (!Number.isFinite(pollIntervalMs) || pollIntervalMs < 0) {
    throw new InvalidArgumentError('pollIntervalMs', `must be a finite number ≥ 0, got ${pollIntervalMs}`);
  }
  if (options.maxCostUsd !== undefined && (!Number.isFinite(options.maxCostUsd) || options.maxCostUsd < 0)) {
    throw new InvalidArgumentError('maxCostUsd', `must be a finite number ≥ 0, got ${options.maxCostUsd}`);
  }
  const batch: BatchModule = await import('../models/batch/index.js');
  const env = options.env ?? process.env;
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? defaultSleep;
  const notify = options.notify ?? (() => {});
  const startedAt = now();
  const assumedOutput = options.assumedMaxOutputTokens ?? 4096;
  const onlineCostOf = options.costOf ?? (await defaultCostOf());
  const clientFor = options.batchClientFor ?? batch.createBatchClient;
  const jobs = new BatchJobs(store.db);

  store.requireRun(runId);
  const specKeys = store.registerCells(runId, specs);
  store.setRunStatus(runId, 'running');

  const uniqueKeys: string[] = [];
  const requestOf = new Map<string, ModelRequest>();
  specKeys.forEach((key, index) => {
    if (requestOf.has(key)) return;
    requestOf.set(key, specs[index]!.request);
    uniqueKeys.push(key);
  });
  const inPlan = new Set(uniqueKeys);

  const stats = { done: 0, empty: 0, failed: 0, calls: 0, spendUsd: 0, unpriced: 0, tokens: { ...ZERO_USAGE } as TokenUsage };
  let cachedCount = 0;
  let stopReason: StopReason | null = null;
  let stopMessage: string | null = null;
  let fatalKind = '';
  const stop = (reason: StopReason, message: string, kind = '') => {
    // A budget stop still collects submitted jobs; an interrupt or a fatal error during that wins.
    if (stopReason !== null && !(stopReason === 'budget' && reason !== 'budget')) return;
    stopReason = reason;
    stopMessage = message;
    fatalKind = kind;
  };
  const stopController = new AbortController();
  const onExternalAbort = () => {
    stop('interrupted', 'interrupted: submitted batch jobs are recorded; re-run the same command to collect them');
    if (!stopController.signal.aborted) stopController.abort(new Error('interrupted'));
  };
  if (options.signal?.aborted) onExternalAbort();
  options.signal?.addEventListener('abort', onExternalAbort, { once: true });

  const active: OpenJob[] = [];
  const heldKeys = new Set<string>();
  const snapshot = (): ProgressSnapshot => ({
    total: uniqueKeys.length,
    finished: cachedCount + stats.done + stats.empty + stats.failed,
    cached: cachedCount,
    done: stats.done,
    empty: stats.empty,
    failed: stats.failed,
    inFlight: uniqueKeys.filter((key) => heldKeys.has(key)).length,
    calls: stats.calls,
    tokens: { ...stats.tokens },
    spendUsd: stats.spendUsd,
    elapsedMs: now() - startedAt,
  });

  const batchCostFn = (provider: BatchProvider): CostFn => (model, usage) => batch.batchCost(provider, onlineCostOf(model, usage));

  const openClient = (model: string): { client: BatchClient; provider: BatchProvider } => {
    const endpoint = batch.batchEndpointOf(model, env);
    return { client: clientFor(endpoint), provider: endpoint.provider };
  };

  // 1. Jobs an earlier (perhaps killed) run left open are collected first: those of this run
  // and those holding a cell of this plan (another run's unrelated jobs are left to that run).
  for (const job of jobs.open()) {
    if (job.runId !== runId && !job.keys.some((key) => inPlan.has(key))) continue;
    if (job.batchId === null) {
      jobs.finish(job.id, 'abandoned', 'no batch id was recorded: the process stopped inside the create call');
      notify(`batch: job ${job.id} (${job.model}) has no provider batch id; its ${job.keys.length} cells are released`);
      continue;
    }
    try {
      const { client, provider } = openClient(job.model);
      active.push({ job, client, provider, lastNote: '', errors: 0 });
      for (const key of job.keys) heldKeys.add(key);
      notify(`batch: resuming ${provider} batch ${job.batchId} (${job.model}, ${job.keys.length} cells)`);
    } catch (error) {
      stop('fatal', `batch ${job.batchId} (${job.model}) cannot be polled: ${(error as Error).message}`, kindOf(error));
    }
  }

  // 2. What this plan still needs.
  const stored = store.getCells(uniqueKeys);
  const toRun: string[] = [];
  const cachedKeys = new Set<string>();
  for (const key of uniqueKeys) {
    const result = stored.get(key)!;
    const final =
      result.status === 'done' ||
      (result.status === 'empty' && !options.retryEmpty) ||
      (result.status === 'failed' && options.retryFailed === false);
    if (final) {
      cachedCount += 1;
      cachedKeys.add(key);
    } else if (!heldKeys.has(key)) toRun.push(key);
  }
  const batchable = toRun.filter((key) => batch.batchProviderOf(requestOf.get(key)!.model) !== null);
  const online = toRun.filter((key) => batch.batchProviderOf(requestOf.get(key)!.model) === null);
  if (options.maxCostUsd !== undefined) checkPricesKnown(batchable.map((key) => requestOf.get(key)!.model), onlineCostOf);
  options.onProgress?.(snapshot());

  // 3. Submit: one job per model, split at the provider's line and byte limits, each reserved against --max-cost.
  let reservedUsd = 0;
  const byModel = new Map<string, string[]>();
  for (const key of batchable) {
    const model = requestOf.get(key)!.model;
    byModel.set(model, [...(byModel.get(model) ?? []), key]);
  }
  for (const [model, keys] of byModel) {
    if (stopReason !== null) break;
    let opened: { client: BatchClient; provider: BatchProvider };
    try {
      opened = openClient(model);
    } catch (error) {
      stop('fatal', (error as Error).message, kindOf(error));
      break;
    }
    const price = batchCostFn(opened.provider);
    const maxBytes = Math.min(opened.client.maxBytes, options.maxBatchBytes ?? 100 * 1024 * 1024);
    let chunk: Array<{ key: string; body: Record<string, unknown> }> = [];
    let chunkBytes = 0;
    const flush = async () => {
      if (chunk.length === 0) return;
      const lines = chunk;
      chunk = [];
      chunkBytes = 0;
      const id = jobs.begin(runId, opened.provider, model, lines.map((line) => line.key));
      try {
        const created = await opened.client.submit(
          lines.map((line) => ({ customId: line.key, body: line.body })),
          options.hardSignal,
        );
        jobs.submitted(id, created.id);
        stats.calls += lines.length;
        for (const line of lines) heldKeys.add(line.key);
        active.push({ job: jobs.get(id)!, client: opened.client, provider: opened.provider, lastNote: '', errors: 0 });
        notify(`batch: submitted ${opened.provider} batch ${created.id} (${model}, ${lines.length} cells)`);
      } catch (error) {
        jobs.finish(id, 'failed', (error as Error).message);
        throw new BatchStop('fatal', `batch submission failed: ${(error as Error).message}`, kindOf(error));
      }
    };
    try {
      for (const key of keys) {
        if (stopReason !== null) break;
        const request = requestOf.get(key)!;
        if (options.maxCostUsd !== undefined) {
          const worst = price(model, { ...ZERO_USAGE, inputTokens: estimateInputTokens(request), outputTokens: request.params?.maxTokens ?? assumedOutput }) ?? 0;
          if (stats.spendUsd + reservedUsd + worst > options.maxCostUsd) {
            stop('budget', `stopped before exceeding --max-cost $${options.maxCostUsd}: $${reservedUsd.toFixed(4)} reserved by submitted batches, the next cell could cost up to $${worst.toFixed(4)}`);
            break;
          }
          reservedUsd += worst;
        }
        const wire = await batch.wireRequestOf(request, env);
        const bytes = Buffer.byteLength(JSON.stringify(wire.body)) + 200;
        if (chunk.length >= opened.client.maxLines || (chunk.length > 0 && chunkBytes + bytes > maxBytes)) await flush();
        chunk.push({ key, body: wire.body });
        chunkBytes += bytes;
      }
      // An interrupt submits nothing more; a budget stop still submits the cells it reserved.
      if (stopReason === null || stopReason === 'budget') await flush();
    } catch (error) {
      if (error instanceof BatchStop) {
        stop(error.reason, error.message, error.kind);
        break;
      }
      // A request the adapter cannot build (e.g. a bad model reference) stops the run like a fatal burst.
      if (error instanceof ModelCallError) {
        stop('fatal', `${model}: ${error.message}`, error.kind);
        break;
      }
      throw error;
    }
  }

  // 4. Cells no provider batches run online, under what is left of the budget.
  let onlineResult: RunCellsResult | undefined;
  if (online.length > 0 && stopReason === null) {
    const models = [...new Set(online.map((key) => requestOf.get(key)!.model))];
    notify(`--batch: ${models.join(', ')} ${models.length === 1 ? 'has' : 'have'} no batch API; running ${online.length} cells online`);
    const onlineKeys = new Set(online);
    const onlineSpecs = specs.filter((_spec, index) => onlineKeys.has(specKeys[index]!));
    const { pollIntervalMs: _p, env: _e, batchClientFor: _b, notify: _n, ...rest } = options;
    try {
      onlineResult = await runCells(store, runId, onlineSpecs, {
        ...rest,
        ...(options.maxCostUsd !== undefined ? { maxCostUsd: Math.max(0, options.maxCostUsd - reservedUsd) } : {}),
      });
    } catch (error) {
      if (!(error instanceof FatalBurstError)) throw error;
      onlineResult = error.summary;
      stop('fatal', error.message, error.errorKind);
    }
    if (onlineResult.stopReason !== null) stop(onlineResult.stopReason, onlineResult.stopMessage ?? 'stopped');
  }

  // 5. Poll until every open job ended and is collected (or a stop).
  const collect = async (open: OpenJob, state: BatchState) => {
    const { job } = open;
    const finishedAt = new Date().toISOString();
    const base = { attempts: 1, startedAt: job.submittedAt, finishedAt, latencyMs: null, reasoning: null, responseModel: null, finishReason: null };
    const lines = new Map<string, BatchLineResult>();
    if (state.failure === undefined) {
      for (const line of await open.client.results(job.batchId!, options.hardSignal)) lines.set(line.customId, line);
    }
    const price = batchCostFn(open.provider);
    const items: Array<{ key: string; outcome: CellOutcome }> = [];
    for (const key of job.keys) {
      const request = requestOf.get(key) ?? store.getRequest(key);
      if (request === undefined) continue; // the cell was deleted with its run
      const line = lines.get(key);
      let outcome: CellOutcome;
      if (state.failure !== undefined) {
        outcome = failed(base, 'batch_failed', `the ${open.provider} batch ${job.batchId} failed: ${state.failure}`);
      } else if (line === undefined) {
        outcome = failed(base, 'batch_missing', `the ${open.provider} batch ${job.batchId} ended without a result for this cell`);
      } else if (line.kind === 'succeeded') {
        outcome = await decodeLine(batch, request, line.body, env, base, price);
      } else if (line.kind === 'errored') {
        outcome = failed(base, line.errorClass, line.message);
      } else {
        outcome = failed(base, line.kind === 'expired' ? 'batch_expired' : 'batch_canceled', `${line.message} (a later run resubmits it)`);
      }
      items.push({ key, outcome });
    }
    const written = store.recordResults(items);
    items.forEach((item, index) => {
      heldKeys.delete(item.key);
      if (!written[index] || !inPlan.has(item.key)) return;
      const { outcome } = item;
      addTokenCounts(stats.tokens, outcome.usage);
      if (outcome.costUsd !== null) stats.spendUsd += outcome.costUsd;
      else if (outcome.usage.inputTokens + outcome.usage.outputTokens > 0) stats.unpriced += 1;
      if (outcome.status === 'done') stats.done += 1;
      else if (outcome.status === 'empty') stats.empty += 1;
      else stats.failed += 1;
    });
    jobs.finish(job.id, state.failure === undefined ? 'collected' : 'failed', state.failure);
    const failedLines = items.filter((item) => item.outcome.status === 'failed').length;
    notify(`batch: collected ${open.provider} batch ${job.batchId}: ${items.length - failedLines} answered, ${failedLines} failed`);
  };

  // A budget stop submits nothing more but still collects what was submitted (like in-flight calls online).
  const polling = () => stopReason === null || stopReason === 'budget';
  try {
    while (active.length > 0 && polling()) {
      for (const open of [...active]) {
        if (!polling()) break;
        let state: BatchState;
        try {
          state = await open.client.state(open.job.batchId!, options.hardSignal);
          open.errors = 0;
        } catch (error) {
          if (options.hardSignal?.aborted) break;
          open.errors += 1;
          const kind = kindOf(error);
          if (!RETRYABLE_KINDS.has(kind as never) || open.errors >= 5) {
            stop('fatal', `polling ${open.provider} batch ${open.job.batchId} failed: ${(error as Error).message}`, kind);
            break;
          }
          notify(`batch: polling ${open.job.batchId} failed (${(error as Error).message}); trying again`);
          continue;
        }
        const c = state.counts;
        const note = `${c.succeeded}/${c.total} done, ${c.failed} failed, ${c.processing} processing (${state.providerStatus})`;
        if (note !== open.lastNote) {
          open.lastNote = note;
          jobs.observed(open.job.id, state.providerStatus, note);
          notify(`batch ${open.job.batchId} (${open.job.model}): ${note}`);
        }
        if (state.ended) {
          jobs.finish(open.job.id, 'ended');
          try {
            await collect(open, state);
          } catch (error) {
            // The job stays `ended` in the store: the next poll (or the next run) collects it again.
            if (options.hardSignal?.aborted) break;
            open.errors += 1;
            const kind = kindOf(error);
            if (!RETRYABLE_KINDS.has(kind as never) || open.errors >= 5) {
              stop('fatal', `reading the results of ${open.provider} batch ${open.job.batchId} failed: ${(error as Error).message}`, kind);
              break;
            }
            notify(`batch: reading the results of ${open.job.batchId} failed (${(error as Error).message}); trying again`);
            continue;
          }
          active.splice(active.indexOf(open), 1);
          options.onProgress?.(snapshot());
        }
      }
      options.onProgress?.(snapshot());
      if (active.length === 0 || !polling()) break;
      try {
        await sleep(pollIntervalMs, stopController.signal);
      } catch {
        break; // interrupted while waiting: jobs stay recorded
      }
    }
  } finally {
    options.signal?.removeEventListener('abort', onExternalAbort);
  }

  // 6. Results and summary, like runCells.
  const finalCells = store.getCells(uniqueKeys);
  const results = new Map<string, CellResult>();
  for (const key of uniqueKeys) results.set(key, { ...finalCells.get(key)!, cached: cachedKeys.has(key) });
  const o = onlineResult;
  const done = stats.done + (o?.done ?? 0);
  const empty = stats.empty + (o?.empty ?? 0);
  const failedCount = stats.failed + (o?.failed ?? 0);
  const pending = uniqueKeys.length - cachedCount - done - empty - failedCount;
  const tokens = { ...stats.tokens };
  if (o) addTokenCounts(tokens, o.tokens);
  const status: RunStatus =
    stopReason === 'fatal' ? 'failed' : stopReason === 'budget' ? 'stopped' : stopReason === 'interrupted' ? 'interrupted' : 'done';
  const summary: RunSummary = {
    runId,
    status,
    planned: specs.length,
    total: uniqueKeys.length,
    done,
    cached: cachedCount,
    empty,
    failed: failedCount,
    pending,
    interrupted: stopReason === 'interrupted',
    stopReason,
    stopMessage,
    calls: stats.calls + (o?.calls ?? 0),
    spendUsd: stats.spendUsd + (o?.spendUsd ?? 0),
    unpricedCells: stats.unpriced + (o?.unpricedCells ?? 0),
    tokens,
    wallMs: now() - startedAt,
  };
  store.setRunStatus(runId, status, summary);
  const full: RunCellsResult = { ...summary, results: specKeys.map((key) => results.get(key)!) };
  if (stopReason === 'fatal') throw new FatalBurstError(stopMessage ?? 'run stopped', fatalKind || 'batch', full);
  return full;
}

type OutcomeBase = Pick<CellOutcome, 'attempts' | 'startedAt' | 'finishedAt' | 'latencyMs' | 'reasoning' | 'responseModel' | 'finishReason'>;

function failed(base: OutcomeBase, errorClass: string, message: string): CellOutcome {
  return { ...base, status: 'failed', text: null, usage: { ...ZERO_USAGE }, costUsd: null, errorClass, errorMessage: message };
}

/** A succeeded line, read by the online adapter's own parser; an empty answer is `empty`, as online. */
async function decodeLine(
  batch: BatchModule,
  request: ModelRequest,
  body: unknown,
  env: Record<string, string | undefined>,
  base: OutcomeBase,
  price: CostFn,
): Promise<CellOutcome> {
  const priced = (usage: TokenUsage) => {
    const cost = price(request.model, usage);
    return cost === undefined || cost === null || !Number.isFinite(cost) ? null : cost;
  };
  try {
    const response = await batch.decodeWireResponse(request, body, env);
    return {
      ...base,
      status: 'done',
      text: response.text,
      reasoning: response.reasoning ?? null,
      ...(response.toolCalls === undefined ? {} : { toolCalls: response.toolCalls }),
      finishReason: response.finishReason,
      responseModel: response.responseModel ?? null,
      usage: response.usage,
      costUsd: priced(response.usage),
      errorClass: null,
      errorMessage: null,
    };
  } catch (error) {
    if (error instanceof ModelCallError && error.kind === 'empty') {
      const last = error.response;
      const usage = last?.usage ?? { ...ZERO_USAGE };
      return {
        ...base,
        status: 'empty',
        text: last?.text ?? '',
        reasoning: last?.reasoning ?? null,
        finishReason: last?.finishReason ?? null,
        responseModel: last?.responseModel ?? null,
        usage,
        costUsd: priced(usage),
        errorClass: 'empty',
        errorMessage: error.message,
      };
    }
    return failed(base, kindOf(error), `unreadable batch result: ${(error as Error).message}`);
  }
}

function kindOf(error: unknown): string {
  return error instanceof ModelCallError ? error.kind : 'internal';
}


/** With a budget, every model about to be submitted needs a known price. */
function checkPricesKnown(models: readonly string[], costOf: CostFn): void {
  for (const model of new Set(models)) {
    const probe = costOf(model, { ...ZERO_USAGE, inputTokens: 1_000_000, outputTokens: 1_000_000 });
    if (probe === undefined || probe === null || !Number.isFinite(probe)) {
      throw new ConfigError(`no price is known for ${model}, so --max-cost cannot be enforced`, { field: 'maxCostUsd' }, {
        hint: 'add a price for the model or run without --max-cost',
      });
    }
  }
}

async function defaultCostOf(): Promise<CostFn> {
  const models = await import('../models/index.js');
  return (model, usage) => {
    try {
      return models.costOf(model, usage);
    } catch {
      return null;
    }
  };
}
