import { hostname } from 'node:os';
import { definedFields } from '../core/copy-defined.js';
import { randomBytes } from 'node:crypto';
import { defaultSleep } from '../models/retry.js';
import type { ModelRequest } from '../models/types.js';
import type { PgRunStore } from '../store/postgres/pg-store.js';
import { DEFAULT_MAX_OPEN_ATTEMPTS } from '../store/postgres/shared-work.js';
import type { CellOutcome } from '../store/run-store-common.js';
import { concurrencyFor, defaultAdapterFactory, defaultCostOf } from '../store/runner-options.js';
import { RunTally } from '../store/runner-state.js';
import type { RunPolicy } from './cell-source.js';
import { ClaimSource } from './claim-source.js';
import { type EngineOptions, executeCells } from './engine.js';

/**
 * `echolens worker`, and the run command on a PostgreSQL store (restricted to its run):
 * the execution engine (engine.ts) fed by claims on the shared store (claim-source.ts).
 * Cells are claimed with a lease, called under the retry policy, written as they arrive
 * (clearing the lease), and their leases renewed while held. Rate limits and the budget
 * come from the run's settings in the store and are taken from shared counters, so every
 * worker on every machine obeys the same limits.
 */

export interface WorkOptions
  extends Partial<Pick<EngineOptions, 'adapterFor' | 'costOf' | 'retry' | 'hardSignal' | 'sleep' | 'cacheTtl' | 'openaiCacheRetention' | 'onInFlight'>> {
  /** This worker's name in leases (default host:pid:random). */
  owner?: string;
  /** Work only this run's cells (the run command); default: every running run. */
  runId?: string;
  /** Calls in flight at once (default 8). */
  concurrency?: number | Record<string, number>;
  /** Lease length; renewed every third of it (default 30 s). */
  leaseMs?: number;
  /** Return after this long with no pending cell left in any running run (default: never, unless `runId` is done). */
  idleExitMs?: number;
  /** Longest wait between claims when there is nothing to do (default 1 s): announced work (LISTEN/NOTIFY) wakes the worker at once. */
  pollMs?: number;
  /** Largest claim (a prefix group larger than this is claimed in parts). Default 2 × concurrency. */
  claimMax?: number;
  /**
   * Calls whose results may still be on their way to the store while their slots serve new
   * calls (write-behind; default the concurrency: a result's write takes a round trip and the
   * server's time, and with half of it two workers at +10 ms each way left slots idle waiting for
   * writes, bench/pg-latency.bench.ts). A killed worker's repeated calls are at most its calls in
   * flight plus these.
   */
  writeBehind?: number;
  /** Requests by cell key to call instead of the stored form (the run command's own plan objects). */
  requests?: ReadonlyMap<string, ModelRequest>;
  /** Graceful stop: no new claims, calls in flight finish and are stored, unstarted claims are released. */
  signal?: AbortSignal;
  onCell?: (event: { key: string; runId: string; model: string; status: CellOutcome['status'] | 'refused'; outcome: CellOutcome }) => void;
  /** The tally of a run (the run command's own, for progress and summary); default: one per run, made here. */
  tallyOf?: (runId: string, policy: RunPolicy) => RunTally;
}

export interface WorkResult {
  owner: string;
  /** Cells this worker wrote (done, empty, failed). */
  written: number;
  done: number;
  empty: number;
  failed: number;
  /** Calls (attempts) this worker made. */
  calls: number;
  /** Dollars over priced calls; `unpricedCells` answered without a known price (cost unknown). */
  spendUsd: number;
  unpricedCells: number;
  /** Results refused because another worker's answer stood already. */
  refused: number;
  /** Runs this worker stopped (budget) or failed (fatal burst), with the message. */
  ended: Array<{ runId: string; status: 'stopped' | 'failed'; message: string }>;
}

export function workerName(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

export async function workCells(store: PgRunStore, options: WorkOptions = {}): Promise<WorkResult> {
  const owner = options.owner ?? workerName();
  // A number caps the calls in flight; a map caps each provider (the part of the ref before ":"; "*" for the rest), as runCells does.
  const total = typeof options.concurrency === 'number' ? Math.max(1, Math.floor(options.concurrency)) : undefined;
  const slotsOf = (provider: string) => total ?? Math.max(1, Math.floor(concurrencyFor(options.concurrency, provider)));
  const largestLimit = typeof options.concurrency === 'object' ? Math.max(1, ...Object.values(options.concurrency)) : slotsOf('*');
  const claimMax = options.claimMax ?? Math.floor(largestLimit) * 2;
  const sleep = options.sleep ?? defaultSleep;
  const costOf = options.costOf ?? (await defaultCostOf());
  const result: WorkResult = { owner, written: 0, done: 0, empty: 0, failed: 0, calls: 0, spendUsd: 0, unpricedCells: 0, refused: 0, ended: [] };

  const source = new ClaimSource(store, {
    owner,
    ...definedFields(options, ['runId', 'idleExitMs', 'requests']),
    leaseMs: options.leaseMs ?? 30_000,
    claimMax,
    readyTarget: Math.max(1, Math.min(total ?? largestLimit, largestLimit)),
    pollMs: options.pollMs ?? 1_000,
    maxOpenAttempts: options.retry?.maxAttempts ?? DEFAULT_MAX_OPEN_ATTEMPTS,
    sleep,
  });
  // One tally per run this worker touches (its fatal-burst watch); a run that ended gets a fresh one if it runs again.
  const tallies = new Map<string, RunTally>();
  const tallyOf =
    options.tallyOf ??
    ((runId: string, policy: RunPolicy) => {
      let tally = tallies.get(runId);
      if (tally === undefined || tally.stopReason === 'budget' || tally.stopReason === 'fatal') {
        tally = new RunTally(0, 0, policy.fatalBurst, Date.now, Date.now());
        tallies.set(runId, tally);
      }
      return tally;
    });
  const engine = await executeCells(source, {
    slotsOf,
    ...(total === undefined ? {} : { totalSlots: total }),
    prepareAhead: true,
    // Calls whose results may still be on their way to the store while their slots serve new calls.
    writeBehind: (slots) => Math.max(0, Math.floor(options.writeBehind ?? slots)),
    tallyOf,
    adapterFor: options.adapterFor ?? defaultAdapterFactory,
    costOf,
    ...definedFields(options, ['retry', 'signal', 'hardSignal', 'cacheTtl', 'openaiCacheRetention', 'onInFlight']),
    sleep,
    now: Date.now,
    onInternalError: 'warn',
    onCell: ({ cell, outcome, written }) => {
      result.calls += outcome.attempts;
      result.spendUsd += outcome.costUsd ?? 0;
      if (outcome.costUsd === null && outcome.usage.inputTokens + outcome.usage.outputTokens > 0) result.unpricedCells += 1;
      if (!written) result.refused += 1;
      else {
        result.written += 1;
        result[outcome.status] += 1;
      }
      options.onCell?.({ key: cell.key, runId: cell.runId, model: cell.request.model, status: written ? outcome.status : 'refused', outcome });
    },
  });
  result.ended.push(...engine.ended);
  return result;
}
