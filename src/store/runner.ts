import { defaultSleep } from '../models/retry.js';
import { ZERO_USAGE } from '../models/types.js';
import type { CellOutcome, RunStore } from './run-store.js';
import { callCell, naiveCostOf, resultOf } from './runner-call.js';
import { CacheScheduler, cachePolicyFor } from './cache-schedule.js';
import { type PreparedCells, prepareCells } from './runner-cells.js';
import { attemptRecorder, groupCommitter } from './runner-commit.js';
import { adapterCache, providerLanes } from './runner-lanes.js';
import { checkPricesKnown, concurrencyFor, defaultAdapterFactory, defaultCostOf, providerOf, validateOptions } from './runner-options.js';
import { RunTally } from './runner-state.js';
import type { PgRunStore } from './postgres/pg-store.js';
import { type CostFn, FatalBurstError, type RunCellsOptions, type RunCellsResult } from './runner-types.js';
import { DEFAULT_PREFIX_MIN_CHARS, estimateInputTokens } from './schedule.js';
import type { CellResult, CellSpec } from './types.js';

export { providerOf } from './runner-options.js';
export { FatalBurstError } from './runner-types.js';
export type {
  AdapterFactory,
  CostFn,
  ProgressSnapshot,
  ProviderLimits,
  RunCellsOptions,
  RunCellsResult,
  RunSummary,
  StopReason,
} from './runner-types.js';

/**
 * Runs a plan against the store: cells already finished are returned from the
 * store without a call; identical keys run once; every result is written the
 * moment it arrives, so a killed run resumes where it stopped.
 *
 * The sections live in their own modules: registering the plan and reading
 * what is finished (runner-cells.ts), provider lanes and adapters
 * (runner-lanes.ts), one call under the retry policy (runner-call.ts), group
 * commit (runner-commit.ts), and the tally with the stop state (runner-state.ts).
 */
export async function runCells(store: RunStore, runId: string, specs: readonly CellSpec[], options: RunCellsOptions = {}): Promise<RunCellsResult> {
  // A PostgreSQL store is shared by worker processes: the run claims cells with leases (src/store/postgres/).
  if (store.backend === 'postgres') {
    const { runCellsShared } = await import('./postgres/shared-runner.js');
    return runCellsShared(store as PgRunStore, runId, specs, options);
  }
  validateOptions(options);
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? defaultSleep;
  const startedAt = now();
  const costOf = options.costOf ?? (await defaultCostOf());

  await store.requireRun(runId);
  const cells = await prepareCells(store, runId, specs, options);
  await store.setRunStatus(runId, 'running');
  if (options.maxCostUsd !== undefined) checkPricesKnown(cells.uniqueRequests, cells.toRun, costOf);

  const tally = new RunTally(cells.uniqueKeys.length, cells.cachedCount, options.fatalBurst ?? 3, now, startedAt);
  const onExternalAbort = () => tally.stop('interrupted', 'interrupted: no new cells started; finished cells are stored');
  if (options.signal?.aborted) onExternalAbort();
  options.signal?.addEventListener('abort', onExternalAbort, { once: true });
  options.onProgress?.(tally.snapshot());

  try {
    await executeCells(store, cells, tally, { ...options, now, sleep, costOf });
  } finally {
    options.signal?.removeEventListener('abort', onExternalAbort);
  }

  const summary = tally.summary(runId, specs.length, cells.toRun.length);
  await store.setRunStatus(runId, summary.status, summary);
  const full: RunCellsResult = { ...summary, results: cells.specKeys.map((key) => cells.results.get(key)!) };
  if (tally.internalError !== undefined) throw tally.internalError;
  if (tally.stopReason === 'fatal') throw new FatalBurstError(tally.stopMessage ?? 'run stopped', tally.fatalKind, full, tally.stopHint);
  return full;
}

type ExecuteOptions = RunCellsOptions & Required<Pick<RunCellsOptions, 'now' | 'sleep'>> & { costOf: CostFn };

/**
 * Asks the cache-aware scheduler for a cell whenever a provider has a free slot (leaders
 * warm a prefix group, followers follow within the cache lifetime) and waits for all.
 */
async function executeCells(store: RunStore, cells: PreparedCells, tally: RunTally, options: ExecuteOptions): Promise<void> {
  const laneFor = providerLanes(options, { now: options.now, sleep: options.sleep });
  const runOne = cellRunner(store, cells, tally, laneFor, options);
  const { now } = options;
  const scheduler = new CacheScheduler(
    cells.toRun.map((index) => cells.uniqueRequests[index]!),
    {
      mode: options.schedule ?? 'prefix',
      minChars: options.prefixMinChars ?? DEFAULT_PREFIX_MIN_CHARS,
      providerOf,
      concurrencyOf: (provider) => concurrencyFor(options.concurrency, provider),
      policyOf: (provider) => cachePolicyFor(provider, options.cache),
      now,
    },
  );

  // Every task is counted until it settles.
  let outstanding = 0;
  const busy = new Map<string, number>();
  let resolveAll!: () => void;
  const allSettled = new Promise<void>((resolve) => {
    resolveAll = resolve;
  });
  const dispatch = (position: number, cacheKey: string | undefined, provider: string) => {
    const index = cells.toRun[position]!;
    outstanding += 1;
    busy.set(provider, (busy.get(provider) ?? 0) + 1);
    laneFor(cells.uniqueRequests[index]!.model).queue.add(async () => {
      const started = now();
      let status: CellResult['status'] | undefined;
      try {
        status = await runOne(index, cacheKey);
      } catch (error) {
        tally.internalError ??= error;
        tally.stop('fatal', `internal error: ${(error as Error).message}`);
      } finally {
        scheduler.finished(position, { ok: status === 'done', latencyMs: now() - started });
        outstanding -= 1;
        busy.set(provider, busy.get(provider)! - 1);
        pump();
      }
    });
  };
  const pump = () => {
    if (!tally.stopped) {
      for (const provider of scheduler.providers) {
        const slots = concurrencyFor(options.concurrency, provider);
        while ((busy.get(provider) ?? 0) < slots) {
          const step = scheduler.next(provider);
          if (step === null) break;
          dispatch(step.position, step.cacheKey, provider);
        }
      }
    }
    if (outstanding === 0 && (tally.stopped || scheduler.remaining === 0)) resolveAll();
  };
  pump();
  await allSettled;
}

/** The work of one distinct cell: rate limits, budget reservation, the call, the commit, the tally. */
function cellRunner(
  store: RunStore,
  cells: PreparedCells,
  tally: RunTally,
  laneFor: ReturnType<typeof providerLanes>,
  options: ExecuteOptions,
): (index: number, cacheKey?: string) => Promise<CellResult['status'] | undefined> {
  const assumedOutput = options.assumedMaxOutputTokens ?? 4096;
  const adapterOf = adapterCache(options.adapterFor ?? defaultAdapterFactory);
  const writeResult = groupCommitter(store);
  const beginAttempt = attemptRecorder((keys) => store.beginAttempts(keys));
  const { costOf } = options;

  return async (index, cacheKey) => {
    if (tally.stopped) return;
    const key = cells.uniqueKeys[index]!;
    const request = cells.uniqueRequests[index]!;
    const lane = laneFor(request.model);
    const inputEstimate = estimateInputTokens(request);
    const outputCeiling = request.params?.maxTokens ?? assumedOutput;
    try {
      await lane.requests?.take(1, tally.signal);
      await lane.tokens?.take(inputEstimate + outputCeiling, tally.signal);
    } catch {
      return; // stopped while waiting for the rate limit: the cell stays pending
    }
    if (tally.stopped) return;

    let reservation = 0;
    if (options.maxCostUsd !== undefined) {
      reservation = costOf(request.model, { ...ZERO_USAGE, inputTokens: inputEstimate, outputTokens: outputCeiling }) ?? 0;
      const before = options.spentBeforeUsd ?? 0;
      if (before + tally.spendUsd + tally.reservedUsd + reservation > options.maxCostUsd) {
        tally.stop(
          'budget',
          `stopped before exceeding --max-cost $${options.maxCostUsd}: spent $${(before + tally.spendUsd).toFixed(4)}, ` +
            `next cell could cost up to $${reservation.toFixed(4)}`,
        );
        return;
      }
      tally.reservedUsd += reservation;
    }

    tally.inFlight += 1;
    const cellStarted = new Date().toISOString();
    let outcome: CellOutcome | undefined;
    try {
      await beginAttempt(key); // counted before the call is sent: a kill or an unstorable result still counts it
      outcome = await callCell(request, cellStarted, {
        adapterOf,
        ...(options.retry ? { retry: options.retry } : {}),
        signal: tally.signal,
        ...(options.hardSignal ? { hardSignal: options.hardSignal } : {}),
        sleep: options.sleep,
        ...(options.random ? { random: options.random } : {}),
        costOf,
        ...(cacheKey === undefined ? {} : { cacheKey }),
        ...(options.cache?.cacheTtl === undefined ? {} : { cacheTtl: options.cache.cacheTtl }),
      });
    } finally {
      tally.inFlight -= 1;
      tally.reservedUsd -= reservation;
    }
    if (outcome === undefined) return;
    outcome = { ...outcome, attemptsRecorded: 1 };

    if (lane.tokens) {
      const spent = outcome.usage.inputTokens + outcome.usage.outputTokens;
      if (spent > 0) lane.tokens.adjust(spent - (inputEstimate + outputCeiling));
    }
    tally.record(outcome, outcome.attempts, naiveCostOf(costOf, request.model, outcome.usage));

    const previous = cells.results.get(key)!;
    const committed = await writeResult(key, outcome);
    outcome = committed.outcome; // a result the store could not hold is a `storage` failure
    if (committed.written) {
      cells.results.set(key, resultOf(key, outcome, previous.attempts + outcome.attempts));
    } else {
      // Another process finished this cell first; its answer stands.
      cells.results.set(key, { ...(await store.getCell(key))!, cached: true });
    }
    tally.finish(outcome);
    options.onProgress?.(tally.snapshot({ key, status: outcome.status, cached: false }));
    return outcome.status;
  };
}
