import { InputError } from '../../core/errors.js';
import { addTokenCounts } from '../../core/token-counts.js';
import { type TokenUsage, ZERO_USAGE } from '../../models/types.js';
import { naiveCostOf } from '../runner-call.js';
import { prepareCells } from '../runner-cells.js';
import { checkPricesKnown, defaultCostOf, validateOptions } from '../runner-options.js';
import { FatalBurstError, type RunCellsOptions, type RunCellsResult, type RunSummary, type StopReason } from '../runner-types.js';
import type { CellSpec } from '../types.js';
import type { PgRunStore } from './pg-store.js';
import { workCells } from './work-loop.js';

/**
 * `runCells` on a PostgreSQL store: the run command registers the plan (the requests
 * are in the store, so workers elsewhere need no config), records the budget and rate
 * limits workers must share, then works the run's cells itself through the same
 * claim/lease loop as `echolens worker`; other machines join with `echolens worker`.
 * It returns when no cell of the run is pending (whoever answered it), and writes the
 * run's status and summary like the single-process runner. One process drives a run
 * at a time (an advisory lock: the Postgres form of the SQLite store's lock file).
 */
export async function runCellsShared(store: PgRunStore, runId: string, specs: readonly CellSpec[], options: RunCellsOptions = {}): Promise<RunCellsResult> {
  validateOptions(options);
  const now = options.now ?? Date.now;
  const startedAt = now();
  const costOf = options.costOf ?? (await defaultCostOf());
  await store.requireRun(runId);
  if (!(await store.shared.tryRunLock(runId))) {
    throw new InputError(`run ${runId} is being run by another process on this store; join it with \`echolens worker --db …\` instead`, { file: store.file });
  }
  try {
    const cells = await prepareCells(store, runId, specs, options);
    if (options.maxCostUsd !== undefined) checkPricesKnown(cells.uniqueRequests, cells.toRun, costOf);
    const toRunKeys = cells.toRun.map((index) => cells.uniqueKeys[index]!);
    // Failed (and, when asked, empty) cells are retried by putting them back in the pool.
    await store.shared.reopen(toRunKeys);
    const attemptsBefore = new Map(toRunKeys.map((key) => [key, cells.results.get(key)?.attempts ?? 0]));
    const spentBefore = await store.shared.spentOf(runId);
    await store.shared.setSettings(runId, {
      ...(options.maxCostUsd === undefined ? {} : { maxCostUsd: options.maxCostUsd + spentBefore - (options.spentBeforeUsd ?? 0) }),
      ...(options.limits === undefined ? {} : { limits: options.limits }),
      ...(options.fatalBurst === undefined ? {} : { fatalBurst: options.fatalBurst }),
      ...(options.assumedMaxOutputTokens === undefined ? {} : { assumedMaxOutputTokens: options.assumedMaxOutputTokens }),
    });
    await store.setRunStatus(runId, 'running');

    const total = cells.uniqueKeys.length;
    let finished = cells.cachedCount;
    let inFlight = 0;
    let doneNow = 0;
    let emptyNow = 0;
    let failedNow = 0;
    const tokens: TokenUsage = { ...ZERO_USAGE };
    let calls = 0;
    let spend = 0;
    let naive = 0;
    let cacheReadCells = 0;
    let unpriced = 0;
    options.onProgress?.(snapshot());
    const work = await workCells(store, {
      runId,
      requests: new Map(cells.toRun.map((index) => [cells.uniqueKeys[index]!, cells.uniqueRequests[index]!])),
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
      ...(options.adapterFor ? { adapterFor: options.adapterFor } : {}),
      costOf,
      ...(options.retry ? { retry: options.retry } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.hardSignal ? { hardSignal: options.hardSignal } : {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
      ...(options.cache?.cacheTtl === undefined ? {} : { cacheTtl: options.cache.cacheTtl }),
      ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
      onInFlight: (n) => {
        inFlight = n;
      },
      onCell: (event) => {
        calls += event.outcome.attempts;
        const { usage, costUsd } = event.outcome;
        if (costUsd !== null) {
          spend += costUsd;
          naive += naiveCostOf(costOf, event.model, usage) ?? costUsd;
        } else if (usage.inputTokens + usage.outputTokens > 0) unpriced += 1;
        if (usage.cachedInputTokens > 0) cacheReadCells += 1;
        addTokenCounts(tokens, usage);
        if (event.status !== 'refused') {
          finished += 1;
          if (event.status === 'done') doneNow += 1;
          else if (event.status === 'empty') emptyNow += 1;
          else failedNow += 1;
        }
        options.onProgress?.(snapshot({ key: event.key, status: event.outcome.status, cached: false }));
      },
    });

    // The run's outcome from the store: cells other workers answered count as answered in this run.
    const results = await store.getCells(cells.uniqueKeys);
    let done = 0;
    let empty = 0;
    let failed = 0;
    let pending = 0;
    let allCalls = 0;
    for (const key of toRunKeys) {
      const result = results.get(key)!;
      allCalls += result.attempts - (attemptsBefore.get(key) ?? 0);
      if (result.status === 'done') done += 1;
      else if (result.status === 'empty') empty += 1;
      else if (result.status === 'failed') failed += 1;
      else pending += 1;
    }
    const run = await store.requireRun(runId);
    const ended = run.status === 'stopped' || run.status === 'failed' ? (run.summary as { stopMessage?: string } | null) : null;
    const stopReason: StopReason | null =
      run.status === 'failed' ? 'fatal' : run.status === 'stopped' ? 'budget' : options.signal?.aborted && pending > 0 ? 'interrupted' : null;
    const stopMessage =
      stopReason === 'interrupted' ? 'interrupted: no new cells started; finished cells are stored' : (ended?.stopMessage ?? work.ended[0]?.message ?? null);
    const status = stopReason === 'fatal' ? 'failed' : stopReason === 'budget' ? 'stopped' : stopReason === 'interrupted' ? 'interrupted' : 'done';
    const summary: RunSummary = {
      runId,
      status,
      planned: specs.length,
      total,
      done,
      cached: cells.cachedCount,
      empty,
      failed,
      pending,
      interrupted: stopReason === 'interrupted',
      stopReason,
      stopMessage,
      calls: Math.max(allCalls, calls),
      spendUsd: (await store.shared.spentOf(runId)) - spentBefore,
      // What this process saw (workers elsewhere report their own).
      naiveUsd: naive,
      cacheReadCells,
      unpricedCells: unpriced,
      tokens,
      wallMs: now() - startedAt,
    };
    await store.setRunStatus(runId, status, summary);
    const full: RunCellsResult = { ...summary, results: cells.specKeys.map((key) => results.get(key)!) };
    if (stopReason === 'fatal') throw new FatalBurstError(stopMessage ?? 'run stopped', 'fatal', full);
    return full;

    function snapshot(last?: { key: string; status: 'pending' | 'done' | 'empty' | 'failed'; cached: boolean }) {
      return {
        total,
        finished,
        cached: cells.cachedCount,
        done: doneNow,
        empty: emptyNow,
        failed: failedNow,
        inFlight,
        calls,
        tokens: { ...tokens },
        spendUsd: spend,
        unpricedCells: unpriced,
        elapsedMs: now() - startedAt,
        ...(last ? { last } : {}),
      };
    }
  } finally {
    await store.shared.releaseRunLock(runId);
  }
}
