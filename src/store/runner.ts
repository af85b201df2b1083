import { defaultSleep } from '../models/retry.js';
import { executeCells } from '../execution/engine.js';
import { engineOptionsOf, runPolicyOf } from '../execution/options.js';
import { PlanSource } from '../execution/plan-source.js';
import type { RunStore } from './run-store.js';
import { resultOf } from './runner-call.js';
import { prepareCells } from './runner-cells.js';
import { checkPricesKnown, concurrencyFor, defaultCostOf, validateOptions } from './runner-options.js';
import { RunTally } from './runner-state.js';
import { FatalBurstError, type RunCellsOptions, type RunCellsResult } from './runner-types.js';
import type { CellSpec } from './types.js';

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
 * The cells are worked by the execution engine (src/execution/engine.ts): from the
 * local plan (a SQLite store) or from claims on a shared PostgreSQL store
 * (src/execution/shared-run.ts), through the same scheduler, lanes, budget and tally.
 * Here: registering the plan and reading what is finished (runner-cells.ts), the
 * tally (runner-state.ts), the run's status and summary.
 */
export async function runCells(store: RunStore, runId: string, specs: readonly CellSpec[], options: RunCellsOptions = {}): Promise<RunCellsResult> {
  // A PostgreSQL store is shared by worker processes: the run claims cells with leases.
  if (store.backend === 'postgres') {
    const { runCellsShared } = await import('../execution/shared-run.js');
    return runCellsShared(store, runId, specs, options);
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

  const policy = runPolicyOf(options);
  const source = new PlanSource(
    store,
    runId,
    cells.toRun.map((index) => ({ key: cells.uniqueKeys[index]!, request: cells.uniqueRequests[index]! })),
    policy,
    { ...options, now, sleep },
  );
  try {
    const engine = await executeCells(source, {
      ...engineOptionsOf(options, { now, sleep, costOf }),
      slotsOf: (provider) => concurrencyFor(options.concurrency, provider),
      prepareAhead: false,
      writeBehind: () => 0,
      tallyOf: () => tally,
      onInternalError: 'stop',
      onCell: async ({ cell, outcome, written }) => {
        const key = cell.key;
        if (written) {
          const previous = cells.results.get(key)!;
          cells.results.set(key, resultOf(key, outcome, previous.attempts + outcome.attempts));
        } else {
          // Another process finished this cell first; its answer stands.
          cells.results.set(key, { ...(await store.getCell(key))!, cached: true });
        }
        options.onProgress?.(tally.snapshot({ key, status: outcome.status, cached: false }));
      },
    });
    if (engine.internalError !== undefined) tally.internalError ??= engine.internalError;
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
