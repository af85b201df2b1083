import { definedFields } from '../core/copy-defined.js';
import { InputError } from '../core/errors.js';
import type { PgRunStore } from '../store/postgres/pg-store.js';
import type { RunStore } from '../store/run-store-common.js';
import { prepareCells } from '../store/runner-cells.js';
import { checkPricesKnown, defaultCostOf, validateOptions } from '../store/runner-options.js';
import { RunTally } from '../store/runner-state.js';
import { FatalBurstError, type RunCellsOptions, type RunCellsResult, type RunSummary, type StopReason } from '../store/runner-types.js';
import type { CellSpec } from '../store/types.js';
import { workCells } from './worker.js';

/**
 * `runCells` on a PostgreSQL store: the run command registers the plan (the requests
 * are in the store, so workers elsewhere need no config), records the budget and rate
 * limits workers must share, then works the run's cells itself with the execution engine
 * fed by claims (the same engine and source as `echolens worker`, restricted to the run);
 * other machines join with `echolens worker`. It returns when no cell of the run is
 * pending (whoever answered it), and writes the run's status and summary like a local
 * run. One process drives a run at a time (an advisory lock: the PostgreSQL form of the
 * SQLite store's lock file).
 */
export async function runCellsShared(anyStore: RunStore, runId: string, specs: readonly CellSpec[], options: RunCellsOptions = {}): Promise<RunCellsResult> {
  if (anyStore.backend !== 'postgres') throw new Error('runCellsShared needs a PostgreSQL store');
  const store = anyStore as PgRunStore;
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
      ...definedFields(options, ['limits', 'fatalBurst', 'assumedMaxOutputTokens']),
    });
    await store.setRunStatus(runId, 'running');

    // This process's tally: progress (in flight, failed) and the fatal-burst watch, as a local run's.
    const tally = new RunTally(cells.uniqueKeys.length, cells.cachedCount, options.fatalBurst ?? 3, now, startedAt);
    options.onProgress?.(tally.snapshot());
    const work = await workCells(store, {
      runId,
      requests: new Map(cells.toRun.map((index) => [cells.uniqueKeys[index]!, cells.uniqueRequests[index]!])),
      ...definedFields(options, ['concurrency', 'adapterFor', 'retry', 'signal', 'hardSignal', 'sleep', 'leaseMs']),
      costOf,
      ...definedFields(options.cache ?? {}, ['cacheTtl', 'openaiCacheRetention']),
      tallyOf: () => tally,
      onCell: (event) => {
        options.onProgress?.(tally.snapshot({ key: event.key, status: event.outcome.status, cached: false }));
      },
    });

    // The run's outcome from the store: cells other workers answered count as answered in this run.
    const results = await store.getCells(cells.uniqueKeys);
    const byStatus = { done: 0, empty: 0, failed: 0, pending: 0 };
    let allCalls = 0;
    for (const key of toRunKeys) {
      const { status, attempts } = results.get(key)!;
      allCalls += attempts - (attemptsBefore.get(key) ?? 0);
      byStatus[status === 'done' || status === 'empty' || status === 'failed' ? status : 'pending'] += 1;
    }
    const run = await store.requireRun(runId);
    const ended = run.status === 'stopped' || run.status === 'failed' ? (run.summary as { stopMessage?: string } | null) : null;
    const stopReason: StopReason | null =
      run.status === 'failed' ? 'fatal' : run.status === 'stopped' ? 'budget' : options.signal?.aborted && byStatus.pending > 0 ? 'interrupted' : null;
    const stopMessage =
      stopReason === 'interrupted' ? 'interrupted: no new cells started; finished cells are stored' : (ended?.stopMessage ?? work.ended[0]?.message ?? null);
    const status = stopReason === 'fatal' ? 'failed' : stopReason === 'budget' ? 'stopped' : stopReason === 'interrupted' ? 'interrupted' : 'done';
    const mine = tally.summary(runId, specs.length, cells.toRun.length);
    const summary: RunSummary = {
      ...mine,
      status,
      ...byStatus,
      interrupted: stopReason === 'interrupted',
      stopReason,
      stopMessage,
      // Calls and spend of every process that worked the run (naive cost, cache reads and tokens: this process's).
      calls: Math.max(allCalls, mine.calls),
      spendUsd: (await store.shared.spentOf(runId)) - spentBefore,
      wallMs: now() - startedAt,
    };
    await store.setRunStatus(runId, status, summary);
    const full: RunCellsResult = { ...summary, results: cells.specKeys.map((key) => results.get(key)!) };
    if (stopReason === 'fatal') throw new FatalBurstError(stopMessage ?? 'run stopped', tally.fatalKind || 'fatal', full, tally.stopHint);
    return full;
  } finally {
    await store.shared.releaseRunLock(runId);
  }
}
