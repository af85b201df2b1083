import { InvalidArgumentError } from '../core/errors.js';
import type { BatchProvider } from '../models/batch/index.js';
import { openaiRetentionFor } from '../models/cache-retention.js';
import { parseModelRef } from '../models/ref.js';
import type { ModelRequest } from '../models/types.js';
import { BatchCacheWatch, envAdapterFactory, followerGroups } from './batch-cache-watch.js';
import { cancelJobs } from './batch-cancel.js';
import { pollUntilCollected } from './batch-poll.js';
import { resumeOpenJobs } from './batch-resume.js';
import type { BatchModule, BatchSession, RunCellsBatchOptions } from './batch-session.js';
import { type CacheOptionsOf, submitBatches } from './batch-submit.js';
import { batchWaves, cachePolicyFor } from './cache-schedule.js';
import type { RunStore } from './run-store.js';
import { runCells } from './runner.js';
import { type PreparedCells, prepareCells } from './runner-cells.js';
import { checkPricesKnown, defaultCostOf, providerOf, validateOptions } from './runner-options.js';
import { RunTally } from './runner-state.js';
import { type CostFn, FatalBurstError, type RunCellsResult, type RunSummary } from './runner-types.js';
import type { CellResult, CellSpec } from './types.js';

export type { RunCellsBatchOptions } from './batch-session.js';

/** A run that stopped because a batch's results stayed unreadable; the valid lines were stored. */
export class BatchResultsError extends FatalBurstError {
  constructor(message: string, summary: RunCellsResult) {
    // Code `fatal_burst`: like a burst of failed calls online, the command exits 1.
    super(message, 'batch_unreadable', summary, 're-run the same command: the cells without a readable result are submitted again');
  }
}

/**
 * Runs a plan through the providers' batch APIs (OpenAI Batch, Anthropic Message
 * Batches) at half price: the same cells, keys and store rows as `runCells`, and the
 * same tally (runner-state.ts), but each model's pending cells go out as provider
 * batches that are polled until they end. The parts: resuming open jobs
 * (batch-resume.ts), submitting (batch-submit.ts), polling (batch-poll.ts), collecting
 * strictly (batch-collect.ts, batch-lines.ts) and cancelling (batch-cancel.ts). Cells of
 * providers without a batch API run online through `runCells`.
 */
export async function runCellsBatch(store: RunStore, runId: string, specs: readonly CellSpec[], options: RunCellsBatchOptions = {}): Promise<RunCellsResult> {
  const pollIntervalMs = options.pollIntervalMs ?? 30_000;
  if (!Number.isFinite(pollIntervalMs) || pollIntervalMs < 0) {
    throw new InvalidArgumentError('pollIntervalMs', `must be a finite number ≥ 0, got ${pollIntervalMs}`);
  }
  validateOptions(options);
  const batch: BatchModule = await import('../models/batch/index.js');
  const now = options.now ?? Date.now;
  const startedAt = now();
  const onlineCostOf = options.costOf ?? (await defaultCostOf());

  await store.requireRun(runId);
  const cells = await prepareCells(store, runId, specs, options);
  await store.setRunStatus(runId, 'running');
  // A batch's failed lines are independent answers, not a burst of one failing call: no burst stop.
  const tally = new RunTally(cells.uniqueKeys.length, cells.cachedCount, Number.POSITIVE_INFINITY, now, startedAt);
  const session = openSession(store, runId, cells, tally, batch, onlineCostOf, options);

  // First Ctrl-C: submit nothing more, stop polling (the jobs stay recorded). Second: cancel them at the provider.
  let cancelling: Promise<void> | undefined;
  const cancelOpenBatches = () => {
    cancelling ??= cancelActive(session);
    return cancelling;
  };
  const onInterrupt = () => session.halt('interrupted', 'interrupted: submitted batch jobs are recorded; re-run the same command to collect them');
  const onHardInterrupt = () => void cancelOpenBatches();
  let watch: BatchCacheWatch | null = null;
  if (options.signal?.aborted) onInterrupt();
  options.signal?.addEventListener('abort', onInterrupt, { once: true });
  options.hardSignal?.addEventListener('abort', onHardInterrupt, { once: true });
  try {
    await resumeOpenJobs(session);
    const toRun = cells.toRun.map((index) => cells.uniqueKeys[index]!).filter((key) => !session.heldKeys.has(key));
    const batchable = toRun.filter((key) => batch.batchProviderOf(session.requestOf.get(key)!.model) !== null);
    const online = toRun.filter((key) => batch.batchProviderOf(session.requestOf.get(key)!.model) === null);
    if (options.maxCostUsd !== undefined) {
      checkPricesKnown(
        cells.uniqueRequests,
        cells.toRun.filter((index) => batchable.includes(cells.uniqueKeys[index]!)),
        onlineCostOf,
      );
    }
    options.onProgress?.(tally.snapshot());
    const waves = cacheWaves(session, batchable);
    const groups = followerGroups(waves.leaders, waves.followers, waves.signatureOf, session.requestOf, waves.cacheOf);
    watch =
      groups.length > 0 && options.followerRoute !== 'batch'
        ? new BatchCacheWatch(session, groups, batchCacheTtl(options), (provider) => onlineCostFor(provider, options, onlineCostOf))
        : null;
    session.onCollected = watch?.onCollected;
    const leadersAt = now();
    const reservedUsd = tally.stopped ? 0 : await submitBatches(session, waves.leaders, waves.cacheOf);
    if (online.length > 0 && !tally.stopped) await runOnline(session, specs, cells, online, reservedUsd);
    await pollUntilCollected(session);
    // The followers go once their leaders' batch has ended and written the cache, by the rule of
    // cache-schedule.ts `followerRoute`: in a batch, in a batch kept warm, or online.
    if (waves.followers.length > 0 && !tally.stopped) {
      const route = watch?.plan(leadersAt, now()) ?? { batch: waves.followers, online: [], rewarm: [] };
      if (route.online.length > 0) {
        const result = await runOnline(
          session,
          specs,
          cells,
          route.online,
          // What the leaders were billed counts against --max-cost, as a reservation would.
          tally.spendUsd,
          `batch: running ${route.online.length} followers online, reading the cache their leaders wrote`,
        );
        if (result !== null) watch?.onlineFollowers(result.done + result.empty, result.cacheReadCells);
      }
      if (route.batch.length > 0 && !tally.stopped) {
        await watch?.tick();
        watch?.followersSubmitted(now());
        session.notify(`batch: leaders answered; submitting ${route.batch.length} cells that read their prompt cache`);
        // Not inside `watch?.…(…)`: without a watch, optional chaining would skip the submission too.
        const followersReservedUsd = await submitBatches(session, route.batch, waves.cacheOf);
        watch?.followersReserved(followersReservedUsd);
        session.onPollTick = watch === null ? undefined : () => watch!.tick();
        await pollUntilCollected(session);
        session.onPollTick = undefined;
      }
    }
    if (options.hardSignal?.aborted) {
      await cancelOpenBatches();
      await cancelCutCreates(session);
    }
  } finally {
    options.signal?.removeEventListener('abort', onInterrupt);
    options.hardSignal?.removeEventListener('abort', onHardInterrupt);
  }

  const summary: RunSummary = tally.summary(runId, specs.length, cells.toRun.length);
  if (watch !== null) summary.batchCache = watch.report(now());
  await store.setRunStatus(runId, summary.status, summary);
  const finalCells = await store.getCells(cells.uniqueKeys);
  const toRunKeys = new Set(cells.toRun.map((index) => cells.uniqueKeys[index]!));
  const results = new Map<string, CellResult>();
  for (const key of cells.uniqueKeys) results.set(key, { ...finalCells.get(key)!, cached: !toRunKeys.has(key) });
  const full: RunCellsResult = { ...summary, results: cells.specKeys.map((key) => results.get(key)!) };
  if (tally.stopReason === 'fatal') {
    const message = tally.stopMessage ?? 'run stopped';
    if (tally.fatalKind === 'batch_unreadable') throw new BatchResultsError(message, full);
    throw new FatalBurstError(message, tally.fatalKind || 'batch', full);
  }
  return full;
}

function openSession(
  store: RunStore,
  runId: string,
  cells: PreparedCells,
  tally: RunTally,
  batch: BatchModule,
  onlineCostOf: CostFn,
  options: RunCellsBatchOptions,
): BatchSession {
  const env = options.env ?? process.env;
  const clientFor = options.batchClientFor ?? batch.createBatchClient;
  const requestOf = new Map<string, ModelRequest>(cells.uniqueKeys.map((key, index) => [key, cells.uniqueRequests[index]!]));
  const pollController = new AbortController();
  return {
    store,
    runId,
    jobs: store.batchJobs(),
    batch,
    env,
    options,
    notify: options.notify ?? (() => {}),
    tally,
    onlineCostOf,
    requestOf,
    heldKeys: new Set(),
    active: [],
    pollSignal: pollController.signal,
    halt(reason, message, kind = '') {
      tally.escalate(reason, message, kind);
      if (!pollController.signal.aborted) pollController.abort(new Error(message));
    },
    openClient(model) {
      const endpoint = batch.batchEndpointOf(model, env);
      return { client: clientFor(endpoint), provider: endpoint.provider };
    },
    batchCostOf: (provider: BatchProvider): CostFn => {
      const online = onlineCostFor(provider, options, onlineCostOf);
      return (model, usage) => batch.batchCost(provider, online(model, usage));
    },
  };
}

/**
 * The batchable cells in two waves (cache-schedule.ts `batchWaves`): leaders of prefix groups
 * and ungrouped cells first, followers once those ended. Anthropic breakpoints get the 1-hour
 * lifetime unless the config chose one: a batch may wait in the provider's queue for longer
 * than five minutes. `schedule: 'plan'` sends everything in one wave, as before.
 */
function cacheWaves(
  session: BatchSession,
  keys: readonly string[],
): { leaders: string[]; followers: string[]; cacheOf: CacheOptionsOf; signatureOf: (key: string) => string | undefined } {
  const { options, requestOf } = session;
  const cacheTtl = batchCacheTtl(options);
  const configured = options.cache?.openaiCacheRetention;
  // OpenAI retention: the config's on every line; else 24 h on a prefix group's lines where the model takes it.
  const retentionOf = (key: string, grouped: boolean) => {
    const request = requestOf.get(key)!;
    if (session.batch.batchProviderOf(request.model) !== 'openai') return {};
    const retention = openaiRetentionFor(parseModelRef(request.model).model, configured, grouped);
    return retention === undefined ? {} : { promptCacheRetention: retention };
  };
  if (options.schedule === 'plan') {
    return { leaders: [...keys], followers: [], cacheOf: (key) => ({ cacheTtl, ...retentionOf(key, false) }), signatureOf: () => undefined };
  }
  const waves = batchWaves(
    keys.map((key) => requestOf.get(key)!),
    {
      ...(options.prefixMinChars === undefined ? {} : { minChars: options.prefixMinChars }),
      providerOf,
      policyOf: (provider) => cachePolicyFor(provider, options.cache),
    },
  );
  const position = new Map(keys.map((key, index) => [key, index]));
  return {
    leaders: waves.leaders.map((index) => keys[index]!),
    followers: waves.followers.map((index) => keys[index]!),
    signatureOf: (key) => waves.signatureOf(position.get(key)!),
    cacheOf: (key) => {
      const at = position.get(key)!;
      const cacheKey = waves.cacheKeyOf(at);
      const retention = retentionOf(key, waves.signatureOf(at) !== undefined);
      return cacheKey === undefined ? { cacheTtl, ...retention } : { cacheTtl, promptCacheKey: cacheKey, ...retention };
    },
  };
}

/** The Anthropic cache lifetime of batch lines: the config's, else 1 hour when followers wait for leaders (5 minutes in one wave). */
function batchCacheTtl(options: RunCellsBatchOptions): '5m' | '1h' {
  return options.cache?.cacheTtl ?? (options.schedule === 'plan' ? '5m' : '1h');
}

/**
 * Second Ctrl-C during a create call: the call was cut, so the job has no batch id, but the
 * provider may have made the batch. Found by its tag, it is cancelled too.
 */
async function cancelCutCreates(session: BatchSession): Promise<void> {
  const cut = (await session.jobs.open()).filter((job) => job.runId === session.runId && job.batchId === null);
  if (cut.length === 0) return;
  await cancelJobs(session.jobs, cut, (job) => session.openClient(job.model).client, { notify: session.notify });
}

/** The online price of a provider's calls in this stage: Anthropic 1-hour writes at their price. */
function onlineCostFor(provider: string, options: RunCellsBatchOptions, onlineCostOf: CostFn): CostFn {
  return provider === 'anthropic' && batchCacheTtl(options) === '1h' ? withHourWrites(onlineCostOf) : onlineCostOf;
}

/**
 * Anthropic bills a 1-hour cache write at twice the input price (the price table's
 * `cacheWrite` is the 5-minute price). Derived from the cost function alone: the written
 * tokens priced as plain input, counted twice.
 */
function withHourWrites(costOf: CostFn): CostFn {
  return (model, usage) => {
    if (usage.cacheWriteTokens <= 0) return costOf(model, usage);
    const asInput = costOf(model, { ...usage, cacheWriteTokens: 0 });
    const without = costOf(model, { ...usage, inputTokens: usage.inputTokens - usage.cacheWriteTokens, cacheWriteTokens: 0 });
    if (asInput === null || asInput === undefined || without === null || without === undefined) return costOf(model, usage);
    return asInput + (asInput - without);
  };
}

/** Cells no provider batches run online, under what is left of the budget; their counts join the tally. */
async function runOnline(
  session: BatchSession,
  specs: readonly CellSpec[],
  cells: PreparedCells,
  online: readonly string[],
  reservedUsd: number,
  notice?: string,
): Promise<RunCellsResult | null> {
  const { options, tally, requestOf } = session;
  const models = [...new Set(online.map((key) => requestOf.get(key)!.model))];
  session.notify(notice ?? `--batch: ${models.join(', ')} ${models.length === 1 ? 'has' : 'have'} no batch API; running ${online.length} cells online`);
  const onlineKeys = new Set(online);
  const onlineSpecs = specs.filter((_spec, index) => onlineKeys.has(cells.specKeys[index]!));
  const { pollIntervalMs: _p, env: _e, batchClientFor: _b, notify: _n, maxResultReads: _m, followerRoute: _f, ...rest } = options;
  // Followers sent online read their keys where their batch would have (the run's `env`).
  if (notice !== undefined && rest.adapterFor === undefined) rest.adapterFor = envAdapterFactory(session.env);
  let result: RunCellsResult;
  try {
    result = await runCells(session.store, session.runId, onlineSpecs, {
      ...rest,
      ...(options.maxCostUsd !== undefined ? { maxCostUsd: Math.max(0, options.maxCostUsd - reservedUsd) } : {}),
    });
  } catch (error) {
    if (!(error instanceof FatalBurstError)) throw error;
    tally.absorb(error.summary);
    session.halt('fatal', error.message, error.errorKind);
    return null;
  }
  tally.absorb(result);
  if (result.stopReason === 'budget') tally.stop('budget', result.stopMessage ?? 'stopped');
  else if (result.stopReason !== null) session.halt(result.stopReason, result.stopMessage ?? 'stopped');
  return result;
}

/** Second Ctrl-C: the open batches this run waits for are cancelled at the provider. */
async function cancelActive(session: BatchSession): Promise<void> {
  const open = [...session.active];
  const message = 'interrupted: open batches were cancelled at the provider; re-run the same command to collect what they finished and submit the rest again';
  session.halt('interrupted', message);
  if (session.tally.stopReason === 'interrupted' && open.length > 0) session.tally.stopMessage = message;
  if (open.length === 0) return;
  session.notify(`batch: cancelling ${open.length} open batch(es) at the provider`);
  const clients = new Map(open.map((o) => [o.job.id, o.client]));
  await cancelJobs(
    session.jobs,
    open.map((o) => o.job),
    (job) => clients.get(job.id)!,
    { notify: session.notify },
  );
}
