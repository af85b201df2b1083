import { ConfigError, EcholensError, InvalidArgumentError } from '../core/errors.js';
import { ModelCallError } from '../models/errors.js';
import { CallFailedError, type RetryPolicy, type SleepFn, callWithRetry, defaultSleep } from '../models/retry.js';
import { type ModelAdapter, type ModelRequest, type TokenUsage, ZERO_USAGE } from '../models/types.js';
import { cellIdentity } from './keys.js';
import type { CellOutcome, RunStatus, RunStore } from './run-store.js';
import { DEFAULT_PREFIX_MIN_CHARS, estimateInputTokens, schedulePrefixGroups } from './schedule.js';
import { WorkLane } from './lane.js';
import { TokenBucket } from './token-bucket.js';
import type { CellResult, CellSpec } from './types.js';

export type AdapterFactory = (ref: string) => ModelAdapter | Promise<ModelAdapter>;
/** USD for a call's usage on a model; null when no price is known. */
export type CostFn = (model: string, usage: TokenUsage) => number | null | undefined;

export interface ProviderLimits {
  requestsPerMinute?: number;
  tokensPerMinute?: number;
}

export interface ProgressSnapshot {
  /** Distinct cells in the plan. */
  total: number;
  /** Cells finished so far in any way (cached + done + empty + failed). */
  finished: number;
  cached: number;
  done: number;
  empty: number;
  failed: number;
  inFlight: number;
  calls: number;
  tokens: TokenUsage;
  spendUsd: number;
  elapsedMs: number;
  /** The last cell that finished, when the snapshot follows one. */
  last?: { key: string; status: CellResult['status']; cached: boolean };
}

export interface RunCellsOptions {
  /** Builds the adapter for a model ref (default: `createAdapter` from src/models/registry). */
  adapterFor?: AdapterFactory;
  /** Concurrent calls per provider (the part of the ref before ":"); a number applies to all. Default 8. */
  concurrency?: number | Record<string, number>;
  /** Per-provider request and token rates; `"*"` applies to providers not named. */
  limits?: Record<string, ProviderLimits>;
  retry?: Partial<RetryPolicy>;
  /** Graceful stop (SIGINT/SIGTERM): no new cells start, running calls finish and are stored. */
  signal?: AbortSignal;
  /** Cancels running requests too (e.g. a second Ctrl-C). Cells cut this way stay pending. */
  hardSignal?: AbortSignal;
  onProgress?: (snapshot: ProgressSnapshot) => void;
  /** Stop before starting a cell whose worst-case cost would take total spend over this (USD). */
  maxCostUsd?: number;
  /** Spend already counted against `maxCostUsd` before this call (earlier stages of the same run). Default 0. */
  spentBeforeUsd?: number;
  /** Price of a call (default: `costOf` of src/models with the built-in price table). */
  costOf?: CostFn;
  /** Output tokens assumed for the worst case when a request sets no maxTokens. Default 4096. */
  assumedMaxOutputTokens?: number;
  /** Stop after this many consecutive cells failing with the same error. Default 3. */
  fatalBurst?: number;
  /** Re-run cells a previous run left `failed` (default true) or `empty` (default false). */
  retryFailed?: boolean;
  retryEmpty?: boolean;
  /** `prefix`: cells sharing a long prefix run back to back, leader first (default); `plan`: plan order. */
  schedule?: 'prefix' | 'plan';
  prefixMinChars?: number;
  /** Injectable time for tests: sleep (retries, rate limits) and clock (rate limits, wall time). */
  sleep?: SleepFn;
  now?: () => number;
  random?: () => number;
}

export type StopReason = 'interrupted' | 'budget' | 'fatal';

export interface RunSummary {
  runId: string;
  status: RunStatus;
  /** Specs given and distinct cells among them. */
  planned: number;
  total: number;
  /** Cells answered by a call in this run. */
  done: number;
  /** Cells already finished in the store (done, or empty when not retried). */
  cached: number;
  /** Dropouts of this run: empty output after retries. */
  empty: number;
  failed: number;
  /** Cells not finished (never started, or cut by a stop); a later run resumes them. */
  pending: number;
  interrupted: boolean;
  stopReason: StopReason | null;
  stopMessage: string | null;
  calls: number;
  spendUsd: number;
  /** Cells whose cost is unknown (no price for their model). */
  unpricedCells: number;
  tokens: TokenUsage;
  wallMs: number;
}

export interface RunCellsResult extends RunSummary {
  /** One result per spec, in spec order (shared cells share a result). */
  results: CellResult[];
}

/** The run stopped because the same error kept happening; the message says which. */
export class FatalBurstError extends EcholensError {
  readonly summary: RunCellsResult;
  readonly errorKind: string;

  constructor(message: string, errorKind: string, summary: RunCellsResult, hint?: string) {
    super('fatal_burst', message, hint === undefined ? undefined : { hint });
    this.summary = summary;
    this.errorKind = errorKind;
  }
}

const DEFAULT_CONCURRENCY = 8;

interface ProviderLane {
  queue: WorkLane;
  requests?: TokenBucket;
  tokens?: TokenBucket;
}

/**
 * Runs a plan against the store: cells already finished are returned from the
 * store without a call; identical keys run once; every result is written the
 * moment it arrives, so a killed run resumes where it stopped.
 */
export async function runCells(
  store: RunStore,
  runId: string,
  specs: readonly CellSpec[],
  options: RunCellsOptions = {},
): Promise<RunCellsResult> {
  validateOptions(options);
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? defaultSleep;
  const startedAt = now();
  const fatalBurst = options.fatalBurst ?? 3;
  const assumedOutput = options.assumedMaxOutputTokens ?? 4096;
  const adapterFor = options.adapterFor ?? defaultAdapterFactory;
  const costOf = options.costOf ?? (await defaultCostOf());

  store.requireRun(runId);
  const identities = specs.map((spec) => cellIdentity(spec.request));
  const specKeys = store.registerCells(runId, specs, identities);
  store.setRunStatus(runId, 'running');

  // Distinct cells in first-appearance order.
  const uniqueKeys: string[] = [];
  const uniqueRequests: ModelRequest[] = [];
  const seen = new Set<string>();
  specKeys.forEach((key, index) => {
    if (seen.has(key)) return;
    seen.add(key);
    uniqueKeys.push(key);
    uniqueRequests.push(specs[index]!.request);
  });

  const stored = store.resultsOfRun(runId);
  const results = new Map<string, CellResult>();
  const toRun: number[] = [];
  let cachedCount = 0;
  uniqueKeys.forEach((key, index) => {
    const result = stored.get(key)!;
    const final =
      result.status === 'done' ||
      (result.status === 'empty' && !options.retryEmpty) ||
      (result.status === 'failed' && options.retryFailed === false);
    results.set(key, result);
    if (final) cachedCount += 1;
    else toRun.push(index);
  });

  if (options.maxCostUsd !== undefined) checkPricesKnown(uniqueRequests, toRun, costOf);

  const stats = {
    done: 0,
    empty: 0,
    failed: 0,
    calls: 0,
    spendUsd: 0,
    unpriced: 0,
    inFlight: 0,
    tokens: { ...ZERO_USAGE } as TokenUsage,
  };
  let reservedUsd = 0;
  let stopReason: StopReason | null = null;
  let stopMessage: string | null = null;
  let stopHint: string | undefined;
  let fatalKind = '';
  let internalError: unknown;
  let burst = { signature: '', count: 0 };

  const stopController = new AbortController();
  const stop = (reason: StopReason, message: string) => {
    if (stopReason === null) {
      stopReason = reason;
      stopMessage = message;
    }
    if (!stopController.signal.aborted) stopController.abort(new Error(message));
  };
  const onExternalAbort = () => stop('interrupted', 'interrupted: no new cells started; finished cells are stored');
  if (options.signal?.aborted) onExternalAbort();
  options.signal?.addEventListener('abort', onExternalAbort, { once: true });

  const snapshot = (last?: ProgressSnapshot['last']): ProgressSnapshot => ({
    total: uniqueKeys.length,
    finished: cachedCount + stats.done + stats.empty + stats.failed,
    cached: cachedCount,
    done: stats.done,
    empty: stats.empty,
    failed: stats.failed,
    inFlight: stats.inFlight,
    calls: stats.calls,
    tokens: { ...stats.tokens },
    spendUsd: stats.spendUsd,
    elapsedMs: now() - startedAt,
    ...(last ? { last } : {}),
  });
  options.onProgress?.(snapshot());

  const lanes = new Map<string, ProviderLane>();
  const laneFor = (model: string): ProviderLane => {
    const provider = providerOf(model);
    let lane = lanes.get(provider);
    if (!lane) {
      const limits = options.limits?.[provider] ?? options.limits?.['*'];
      lane = {
        queue: new WorkLane(concurrencyFor(options.concurrency, provider)),
        ...(limits?.requestsPerMinute ? { requests: new TokenBucket(limits.requestsPerMinute, { now, sleep }) } : {}),
        ...(limits?.tokensPerMinute ? { tokens: new TokenBucket(limits.tokensPerMinute, { now, sleep }) } : {}),
      };
      lanes.set(provider, lane);
    }
    return lane;
  };

  const adapters = new Map<string, Promise<ModelAdapter>>();
  const adapterOf = (ref: string): Promise<ModelAdapter> => {
    let adapter = adapters.get(ref);
    if (!adapter) {
      adapter = Promise.resolve().then(() => adapterFor(ref));
      adapters.set(ref, adapter);
    }
    return adapter;
  };

  const schedule =
    options.schedule === 'plan'
      ? { initial: toRun, followersOf: new Map<number, number[]>() }
      : (() => {
          const plan = schedulePrefixGroups(
            toRun.map((index) => uniqueRequests[index]!),
            options.prefixMinChars ?? DEFAULT_PREFIX_MIN_CHARS,
          );
          const followersOf = new Map<number, number[]>();
          for (const [leader, followers] of plan.followersOf) {
            followersOf.set(toRun[leader]!, followers.map((position) => toRun[position]!));
          }
          return { initial: plan.initial.map((position) => toRun[position]!), followersOf };
        })();

  const runOne = async (index: number): Promise<void> => {
    if (stopReason !== null) return;
    const key = uniqueKeys[index]!;
    const request = uniqueRequests[index]!;
    const lane = laneFor(request.model);
    const inputEstimate = estimateInputTokens(request);
    const outputCeiling = request.params?.maxTokens ?? assumedOutput;
    try {
      await lane.requests?.take(1, stopController.signal);
      await lane.tokens?.take(inputEstimate + outputCeiling, stopController.signal);
    } catch {
      return; // stopped while waiting for the rate limit: the cell stays pending
    }
    if (stopReason !== null) return;

    let reservation = 0;
    if (options.maxCostUsd !== undefined) {
      reservation = costOf(request.model, { ...ZERO_USAGE, inputTokens: inputEstimate, outputTokens: outputCeiling }) ?? 0;
      const before = options.spentBeforeUsd ?? 0;
      if (before + stats.spendUsd + reservedUsd + reservation > options.maxCostUsd) {
        stop(
          'budget',
          `stopped before exceeding --max-cost $${options.maxCostUsd}: spent $${(before + stats.spendUsd).toFixed(4)}, ` +
            `next cell could cost up to $${reservation.toFixed(4)}`,
        );
        return;
      }
      reservedUsd += reservation;
    }

    stats.inFlight += 1;
    const cellStarted = new Date().toISOString();
    let outcome: CellOutcome | undefined;
    try {
      outcome = await callCell(request, cellStarted);
    } finally {
      stats.inFlight -= 1;
      reservedUsd -= reservation;
    }
    if (outcome === undefined) return;

    if (lane.tokens) {
      const spent = outcome.usage.inputTokens + outcome.usage.outputTokens;
      if (spent > 0) lane.tokens.adjust(spent - (inputEstimate + outputCeiling));
    }
    addUsage(stats.tokens, outcome.usage);
    if (outcome.costUsd !== null) stats.spendUsd += outcome.costUsd;
    else if (outcome.usage.inputTokens + outcome.usage.outputTokens > 0) stats.unpriced += 1;
    stats.calls += outcome.attempts;

    const previous = results.get(key)!;
    if (await writeResult(key, outcome)) {
      results.set(key, resultOf(key, outcome, previous.attempts + outcome.attempts));
    } else {
      // Another process finished this cell first; its answer stands.
      results.set(key, { ...store.getCell(key)!, cached: true });
    }
    if (outcome.status === 'done') stats.done += 1;
    else if (outcome.status === 'empty') stats.empty += 1;
    else stats.failed += 1;

    if (outcome.status === 'failed') {
      const signature = `${outcome.errorClass}\u0000${outcome.errorMessage}`;
      burst = burst.signature === signature ? { signature, count: burst.count + 1 } : { signature, count: 1 };
      if (burst.count >= fatalBurst) {
        fatalKind = outcome.errorClass ?? 'unknown';
        stopHint = fatalHint(fatalKind);
        stop('fatal', `stopped after ${burst.count} consecutive cells failed with the same error: ${outcome.errorMessage}`);
      }
    } else {
      burst = { signature: '', count: 0 };
    }
    options.onProgress?.(snapshot({ key, status: outcome.status, cached: false }));
  };

  /** One call under the retry policy; undefined when a stop cut it (the cell stays pending). */
  const callCell = async (request: ModelRequest, cellStarted: string): Promise<CellOutcome | undefined> => {
    const base = { startedAt: cellStarted, reasoning: null, responseModel: null, finishReason: null };
    let adapter: ModelAdapter;
    try {
      adapter = await adapterOf(request.model);
    } catch (error) {
      return failure(error, 0, base);
    }
    try {
      const { response, attempts, usage } = await callWithRetryCounting(adapter, request);
      return {
        ...base,
        status: 'done',
        attempts,
        text: response.text,
        reasoning: response.reasoning ?? null,
        ...(response.toolCalls === undefined ? {} : { toolCalls: response.toolCalls }),
        finishReason: response.finishReason,
        responseModel: response.responseModel ?? null,
        usage,
        latencyMs: response.latencyMs,
        costUsd: priced(request.model, usage),
        errorClass: null,
        errorMessage: null,
        finishedAt: new Date().toISOString(),
      };
    } catch (error) {
      if (error instanceof CallFailedError && error.kind === 'aborted') return undefined;
      if (options.hardSignal?.aborted) return undefined;
      const attempts = error instanceof CallFailedError ? error.attempts : 1;
      const usage = error instanceof CallFailedError ? error.spentUsage : { ...ZERO_USAGE };
      if (error instanceof ModelCallError && error.kind === 'empty') {
        const last = error instanceof CallFailedError ? error.lastResponse : undefined;
        return {
          ...base,
          status: 'empty',
          attempts,
          text: last?.text ?? '',
          reasoning: last?.reasoning ?? null,
          finishReason: last?.finishReason ?? null,
          responseModel: last?.responseModel ?? null,
          usage,
          latencyMs: last?.latencyMs ?? null,
          costUsd: priced(request.model, usage),
          errorClass: 'empty',
          errorMessage: error.message,
          finishedAt: new Date().toISOString(),
        };
      }
      return { ...failure(error, attempts, base), usage, costUsd: priced(request.model, usage) };
    }
  };

  const callWithRetryCounting = (adapter: ModelAdapter, request: ModelRequest) =>
    callWithRetry(adapter, request, {
      ...(options.retry ? { policy: options.retry } : {}),
      signal: stopController.signal,
      requestSignal: options.hardSignal ?? null,
      sleep,
      ...(options.random ? { random: options.random } : {}),
    });

  const priced = (model: string, usage: TokenUsage): number | null => {
    if (!costOf) return null;
    const cost = costOf(model, usage);
    return cost === undefined || cost === null || !Number.isFinite(cost) ? null : cost;
  };

  // Group commit: results that arrive in the same turn of the event loop are written in
  // one transaction. A cell counts as finished (progress, summary) only once committed,
  // so a kill loses at most the calls of the last turn, which a resume repeats.
  let batch: Array<{ key: string; outcome: CellOutcome; resolve: (written: boolean) => void; reject: (error: unknown) => void }> = [];
  const flush = () => {
    const items = batch;
    batch = [];
    try {
      const written = store.recordResults(items);
      for (const [index, item] of items.entries()) item.resolve(written[index]!);
    } catch (error) {
      for (const item of items) item.reject(error);
    }
  };
  const writeResult = (key: string, outcome: CellOutcome) =>
    new Promise<boolean>((resolve, reject) => {
      if (batch.length === 0) setImmediate(flush);
      batch.push({ key, outcome, resolve, reject });
    });

  // Every task is counted until it settles; followers are added before their leader settles.
  let outstanding = 0;
  let resolveAll!: () => void;
  const allSettled = new Promise<void>((resolve) => {
    resolveAll = resolve;
  });
  const enqueue = (index: number, urgent: boolean) => {
    outstanding += 1;
    const lane = laneFor(uniqueRequests[index]!.model);
    lane.queue.add(async () => {
      try {
        await runOne(index);
        const followers = schedule.followersOf.get(index);
        if (followers) for (const follower of followers) enqueue(follower, true);
      } catch (error) {
        internalError ??= error;
        stop('fatal', `internal error: ${(error as Error).message}`);
      } finally {
        outstanding -= 1;
        if (outstanding === 0) resolveAll();
      }
    }, urgent);
  };

  try {
    if (schedule.initial.length === 0) resolveAll();
    for (const index of schedule.initial) enqueue(index, false);
    await allSettled;
  } finally {
    options.signal?.removeEventListener('abort', onExternalAbort);
  }

  const pending = toRun.length - (stats.done + stats.empty + stats.failed);
  const status: RunStatus =
    stopReason === 'fatal' ? 'failed' : stopReason === 'budget' ? 'stopped' : stopReason === 'interrupted' ? 'interrupted' : 'done';
  const summary: RunSummary = {
    runId,
    status,
    planned: specs.length,
    total: uniqueKeys.length,
    done: stats.done,
    cached: cachedCount,
    empty: stats.empty,
    failed: stats.failed,
    pending,
    interrupted: stopReason === 'interrupted',
    stopReason,
    stopMessage,
    calls: stats.calls,
    spendUsd: stats.spendUsd,
    unpricedCells: stats.unpriced,
    tokens: stats.tokens,
    wallMs: now() - startedAt,
  };
  store.setRunStatus(runId, status, summary);
  const full: RunCellsResult = { ...summary, results: specKeys.map((key) => results.get(key)!) };
  if (internalError !== undefined) throw internalError;
  if (stopReason === 'fatal') throw new FatalBurstError(stopMessage ?? 'run stopped', fatalKind, full, stopHint);
  return full;
}

function resultOf(key: string, outcome: CellOutcome, attempts: number): CellResult {
  return {
    key,
    status: outcome.status,
    attempts,
    text: outcome.text,
    reasoning: outcome.reasoning,
    finishReason: outcome.finishReason,
    usage: outcome.usage,
    latencyMs: outcome.latencyMs,
    costUsd: outcome.costUsd,
    errorClass: outcome.errorClass,
    errorMessage: outcome.errorMessage,
    startedAt: outcome.startedAt,
    finishedAt: outcome.finishedAt,
    cached: false,
    ...(outcome.toolCalls ? { toolCalls: outcome.toolCalls } : {}),
  };
}

function failure(
  error: unknown,
  attempts: number,
  base: Pick<CellOutcome, 'startedAt' | 'reasoning' | 'responseModel' | 'finishReason'>,
): CellOutcome {
  const kind = error instanceof ModelCallError ? error.kind : 'internal';
  const message = error instanceof Error ? error.message : String(error);
  return {
    ...base,
    status: 'failed',
    attempts,
    text: null,
    usage: { ...ZERO_USAGE },
    latencyMs: null,
    costUsd: null,
    errorClass: kind,
    errorMessage: message,
    finishedAt: new Date().toISOString(),
  };
}

function fatalHint(kind: string): string | undefined {
  switch (kind) {
    case 'auth':
      return 'check the API key environment variable for this provider';
    case 'not_found':
      return 'check the model name (provider:model) and the base URL';
    case 'config':
      return 'check the model reference and its provider settings';
    case 'connection':
      return 'is the server running and reachable?';
    default:
      return undefined;
  }
}

function addUsage(total: TokenUsage, usage: TokenUsage): void {
  total.inputTokens += usage.inputTokens;
  total.outputTokens += usage.outputTokens;
  total.cachedInputTokens += usage.cachedInputTokens;
  total.cacheWriteTokens += usage.cacheWriteTokens;
  total.reasoningTokens += usage.reasoningTokens;
}

/** The provider part of a model ref (`openai:gpt-4.1` → `openai`). */
export function providerOf(model: string): string {
  const colon = model.indexOf(':');
  return colon > 0 ? model.slice(0, colon) : model;
}

function concurrencyFor(concurrency: RunCellsOptions['concurrency'], provider: string): number {
  if (concurrency === undefined) return DEFAULT_CONCURRENCY;
  if (typeof concurrency === 'number') return concurrency;
  return concurrency[provider] ?? concurrency['*'] ?? DEFAULT_CONCURRENCY;
}

function validateOptions(options: RunCellsOptions): void {
  const positiveInt = (name: string, value: unknown) => {
    if (!Number.isInteger(value) || (value as number) < 1) {
      throw new InvalidArgumentError(name, `must be an integer ≥ 1, got ${String(value)}`);
    }
  };
  if (typeof options.concurrency === 'number') positiveInt('concurrency', options.concurrency);
  else if (options.concurrency) {
    for (const [name, value] of Object.entries(options.concurrency)) positiveInt(`concurrency.${name}`, value);
  }
  if (options.fatalBurst !== undefined) positiveInt('fatalBurst', options.fatalBurst);
  if (options.assumedMaxOutputTokens !== undefined) positiveInt('assumedMaxOutputTokens', options.assumedMaxOutputTokens);
  if (options.maxCostUsd !== undefined && (!Number.isFinite(options.maxCostUsd) || options.maxCostUsd < 0)) {
    throw new InvalidArgumentError('maxCostUsd', `must be a finite number ≥ 0, got ${options.maxCostUsd}`);
  }
  for (const [provider, limits] of Object.entries(options.limits ?? {})) {
    for (const field of ['requestsPerMinute', 'tokensPerMinute'] as const) {
      const value = limits[field];
      if (value !== undefined && (!Number.isFinite(value) || value <= 0)) {
        throw new InvalidArgumentError(`limits.${provider}.${field}`, `must be a positive number, got ${value}`);
      }
    }
  }
  if (options.schedule !== undefined && options.schedule !== 'prefix' && options.schedule !== 'plan') {
    throw new InvalidArgumentError('schedule', `must be prefix or plan, got ${String(options.schedule)}`);
  }
}

/** With a budget, every model about to be called needs a known price, or the budget means nothing. */
function checkPricesKnown(requests: readonly ModelRequest[], toRun: readonly number[], costOf: CostFn | undefined): void {
  const models = new Set(toRun.map((index) => requests[index]!.model));
  for (const model of models) {
    const probe = costOf?.(model, { ...ZERO_USAGE, inputTokens: 1_000_000, outputTokens: 1_000_000 });
    if (probe === undefined || probe === null || !Number.isFinite(probe)) {
      throw new ConfigError(`no price is known for ${model}, so --max-cost cannot be enforced`, { field: 'maxCostUsd' }, {
        hint: 'add a price for the model or run without --max-cost',
      });
    }
  }
}

// Adapters and prices live in src/models; load them only when a run needs them, so
// the store does not pull every provider SDK in at import time.
const defaultAdapterFactory: AdapterFactory = async (ref) => {
  const models = await import('../models/index.js');
  return models.createAdapter(ref);
};

async function defaultCostOf(): Promise<CostFn> {
  const models = await import('../models/index.js');
  const unparseable = new Set<string>();
  return (model, usage) => {
    if (unparseable.has(model)) return null;
    try {
      return models.costOf(model, usage);
    } catch {
      // A ref the price table cannot parse has no known price; remember it, throwing is slow.
      unparseable.add(model);
      return null;
    }
  };
}
