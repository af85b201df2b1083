import { getOrInsert } from '../core/get-or-insert.js';
import { definedFields } from '../core/copy-defined.js';
import type { RetryPolicy, SleepFn } from '../models/retry.js';
import { ZERO_USAGE } from '../models/types.js';
import type { CacheSettings } from '../store/cache-schedule.js';
import type { CellOutcome } from '../store/run-store-common.js';
import { callCell, naiveCostOf } from '../store/runner-call.js';
import { adapterCache } from '../store/runner-lanes.js';
import type { RunTally } from '../store/runner-state.js';
import type { AdapterFactory, CostFn } from '../store/runner-types.js';
import { estimateInputTokens } from '../store/schedule.js';
import type { CellSource, RunPolicy, SourcedCell } from './cell-source.js';

/**
 * The one execution loop of echolens: whichever source the cells come from (the local
 * plan or claims on a shared store), each cell goes the same way:
 *
 *   prepare (rate buckets, budget reservation, the attempt counted before the call)
 *   → a call slot of its provider → the call under the retry policy
 *   → the group commit → the run's tally (counts, spend, fatal-burst stop) → progress.
 *
 * Slots are per provider (`slotsOf`), optionally capped over all providers (`totalSlots`).
 * Two pipelining knobs hide a remote store's round trips; both are off for the local plan,
 * where a slot is held from preparation to commit:
 * - `prepareAhead`: cells are prepared while every slot is busy (up to one slot's worth per
 *   provider), so a freed slot is taken at once;
 * - `writeBehind(slots)`: calls whose results are still on their way to the store while
 *   their slots serve new calls (a killed process repeats at most its calls in flight plus these).
 */

export interface EngineOptions {
  slotsOf: (provider: string) => number;
  /** Calls in flight over all providers (default: no cap beyond the providers' own). */
  totalSlots?: number;
  prepareAhead: boolean;
  writeBehind: (slots: number) => number;
  /** The tally of a run (created by the caller; one per run). */
  tallyOf: (runId: string, policy: RunPolicy) => RunTally;
  adapterFor: AdapterFactory;
  costOf: CostFn;
  retry?: Partial<RetryPolicy>;
  /** Graceful stop of everything: no new cells, calls in flight finish and are stored. */
  signal?: AbortSignal;
  /** Cancels calls in flight (a claimed cell returns to the pool). */
  hardSignal?: AbortSignal;
  sleep: SleepFn;
  now: () => number;
  random?: () => number;
  /** Anthropic cache lifetime asked for on breakpoints (the run's `cache.cacheTtl`). */
  cacheTtl?: CacheSettings['cacheTtl'];
  /** OpenAI `prompt_cache_retention` asked for (the run's `cache.openaiCacheRetention`). */
  openaiCacheRetention?: CacheSettings['openaiCacheRetention'];
  /**
   * An unexpected error of one cell (a store write that failed past its retries): `stop`
   * stops the run with it (a local run), `warn` warns and goes on (a shared store: the
   * lease lapses and the cell is called again elsewhere).
   */
  onInternalError: 'stop' | 'warn';
  /** A cell's result was committed (or refused: another process's answer stands). */
  onCell?: (event: { cell: SourcedCell; outcome: CellOutcome; written: boolean; tally: RunTally }) => void | Promise<void>;
  /** The number of calls in flight changed. */
  onInFlight?: (inFlight: number) => void;
}

export interface EngineResult {
  /** Runs this engine ended for everyone (budget, fatal burst), with the message. */
  ended: Array<{ runId: string; status: 'stopped' | 'failed'; message: string }>;
  /** First internal error under `onInternalError: 'stop'`. */
  internalError?: unknown;
}

interface Counts {
  preparing: number;
  calling: number;
  writing: number;
}

export async function executeCells(source: CellSource, options: EngineOptions): Promise<EngineResult> {
  const { now, costOf } = options;
  const adapterOf = adapterCache(options.adapterFor);
  const ended: EngineResult['ended'] = [];
  let internalError: unknown;
  const total: Counts = { preparing: 0, calling: 0, writing: 0 };
  const byProvider = new Map<string, Counts>();
  const countsOf = (provider: string) => getOrInsert(byProvider, provider, () => ({ preparing: 0, calling: 0, writing: 0 }));
  const bump = (provider: string, field: keyof Counts, delta: number) => {
    countsOf(provider)[field] += delta;
    total[field] += delta;
  };
  const totalSlots = options.totalSlots ?? Number.POSITIVE_INFINITY;
  let inFlight = 0;
  let active = 0;

  // The graceful stop of everything (a run's own stop is its tally's).
  const stopper = new AbortController();
  const tallies = new Set<RunTally>();
  const tallyOf = (runId: string, policy: RunPolicy) => {
    const tally = options.tallyOf(runId, policy);
    if (!tallies.has(tally)) {
      tallies.add(tally);
      if (stopper.signal.aborted) tally.stop('interrupted', INTERRUPTED);
    }
    return tally;
  };
  const stopAll = () => {
    if (stopper.signal.aborted) return;
    stopper.abort();
    for (const tally of tallies) tally.stop('interrupted', INTERRUPTED);
    source.stop();
    grantSlots();
    pump();
  };
  if (options.signal?.aborted) stopper.abort();
  options.signal?.addEventListener('abort', stopAll, { once: true });
  if (stopper.signal.aborted) source.stop();

  // Call slots, first come first served per provider.
  const waiters: Array<{ provider: string; signal: AbortSignal; grant: (ok: boolean) => void }> = [];
  // One listener per run's stop signal (not one per waiter): a stop refuses that run's waiters.
  const watched = new WeakSet<AbortSignal>();
  const refuseStopped = () => answerWaiters((waiter) => waiter.signal.aborted, false);
  const fits = (provider: string) => {
    const slots = options.slotsOf(provider);
    const mine = countsOf(provider);
    return (
      mine.calling < slots &&
      mine.calling + mine.writing < slots + options.writeBehind(slots) &&
      (!Number.isFinite(totalSlots) || (total.calling < totalSlots && total.calling + total.writing < totalSlots + options.writeBehind(totalSlots)))
    );
  };
  const acquireSlot = (provider: string, signal: AbortSignal): Promise<boolean> => {
    if (signal.aborted) return Promise.resolve(false);
    if (!waiters.some((w) => w.provider === provider) && fits(provider)) {
      bump(provider, 'calling', 1);
      return Promise.resolve(true);
    }
    if (!watched.has(signal)) {
      watched.add(signal);
      signal.addEventListener('abort', refuseStopped, { once: true });
    }
    return new Promise((grant) => waiters.push({ provider, signal, grant }));
  };
  function grantSlots(): void {
    answerWaiters((waiter) => fits(waiter.provider), true);
  }
  /** Takes the waiters `pick` chooses out of the queue, in order, and grants (ok) or refuses them their slot. */
  function answerWaiters(pick: (waiter: (typeof waiters)[number]) => boolean, ok: boolean): void {
    for (let index = 0; index < waiters.length; ) {
      const waiter = waiters[index]!;
      if (pick(waiter)) {
        waiters.splice(index, 1);
        if (ok) bump(waiter.provider, 'calling', 1);
        waiter.grant(ok);
      } else index += 1;
    }
  }

  /** Ends a run for everyone (once per stop); the tally already holds the reason. */
  const endRun = async (runId: string, tally: RunTally) => {
    if (tally.stopReason !== 'budget' && tally.stopReason !== 'fatal') return;
    const status = tally.stopReason === 'budget' ? 'stopped' : 'failed';
    if (ended.some((e) => e.runId === runId && e.status === status)) return;
    const message = tally.stopMessage ?? 'run stopped';
    ended.push({ runId, status, message });
    await source.endRun(runId, status, message);
  };

  /** One cell from preparation to commit; returns whether it was answered. */
  const runOne = async (cell: SourcedCell, phase: { now: keyof Counts | null }): Promise<CellOutcome['status'] | undefined> => {
    const { provider } = cell;
    const policy = await source.policyOf(cell.runId);
    const tally = tallyOf(cell.runId, policy);
    if (tally.stopped) {
      await source.giveBack(cell);
      return;
    }
    const inputEstimate = estimateInputTokens(cell.request);
    const outputCeiling = cell.request.params?.maxTokens ?? policy.assumedMaxOutputTokens;
    if (!(await source.takeRates(cell, policy.limits, inputEstimate + outputCeiling, tally.signal)) || tally.stopped) {
      await source.giveBack(cell); // stopped while waiting for the rate limit: the cell stays pending
      return;
    }

    let reservation = 0;
    if (policy.maxCostUsd !== undefined) {
      const usd = costOf(cell.request.model, { ...ZERO_USAGE, inputTokens: inputEstimate, outputTokens: outputCeiling }) ?? 0;
      const reserved = await source.reserve(cell, usd, policy, tally);
      if (reserved !== true) {
        tally.stop(
          'budget',
          `stopped before exceeding --max-cost $${policy.maxCostUsd}: spent $${reserved.spentUsd.toFixed(4)}, ` +
            `next cell could cost up to $${usd.toFixed(4)}`,
        );
        await endRun(cell.runId, tally);
        await source.giveBack(cell);
        return;
      }
      reservation = usd;
    }

    let outcome: CellOutcome | undefined;
    try {
      if (tally.stopped) {
        await source.giveBack(cell);
        return;
      }
      await source.beginAttempt(cell); // counted before the call is sent: a kill or an unstorable result still counts it
      // A call slot (a cell of the local plan finds one free: it started within its provider's slots).
      // The cell counts as preparing while it waits, so preparation never runs further ahead.
      const holding = await acquireSlot(provider, tally.signal);
      if (!holding) {
        // Stopped before the call was sent: the attempt counted for it is taken back.
        await source.giveBack(cell, { cut: true, uncount: true });
        return;
      }
      bump(provider, 'preparing', -1); // the grant counted the call
      phase.now = 'calling';
      pump();
      inFlight += 1;
      tally.inFlight += 1;
      options.onInFlight?.(inFlight);
      try {
        outcome = await callCell(cell.request, new Date().toISOString(), {
          adapterOf,
          ...definedFields(options, ['retry', 'hardSignal', 'random', 'cacheTtl', 'openaiCacheRetention']),
          signal: tally.signal,
          sleep: options.sleep,
          costOf,
          ...(cell.cacheKey === undefined ? {} : { cacheKey: cell.cacheKey }),
        });
      } finally {
        inFlight -= 1;
        tally.inFlight -= 1;
        options.onInFlight?.(inFlight);
      }
    } finally {
      source.unreserve(cell, reservation, tally);
    }
    // The call is over: with write-behind its slot serves the next cell while the result is written.
    bump(provider, 'calling', -1);
    bump(provider, 'writing', 1);
    phase.now = 'writing';
    grantSlots();
    pump();
    if (outcome === undefined) {
      await source.giveBack(cell, { cut: true }); // a stop cut the call: the cell stays pending
      return;
    }
    outcome = { ...outcome, attemptsRecorded: 1 };
    const spent = outcome.usage.inputTokens + outcome.usage.outputTokens;
    if (spent > 0) source.adjustTokens(cell, policy.limits, spent - (inputEstimate + outputCeiling));
    tally.record(outcome, outcome.attempts, naiveCostOf(costOf, cell.request.model, outcome.usage));
    const committed = await source.commit(cell, outcome);
    outcome = committed.outcome; // a result the store could not hold is a `storage` failure
    tally.finish(outcome);
    await options.onCell?.({ cell, outcome, written: committed.written, tally });
    if (tally.stopReason === 'fatal') await endRun(cell.runId, tally);
    return outcome.status;
  };

  let resolveAll!: () => void;
  const allSettled = new Promise<void>((resolve) => {
    resolveAll = resolve;
  });
  let settled = false;

  const start = (cell: SourcedCell) => {
    active += 1;
    const phase: { now: keyof Counts | null } = { now: 'preparing' };
    bump(cell.provider, 'preparing', 1);
    const started = now();
    let status: CellOutcome['status'] | undefined;
    void runOne(cell, phase)
      .then(
        (result) => {
          status = result;
        },
        async (error: unknown) => {
          if (options.onInternalError === 'stop') {
            internalError ??= error;
            const policy = await source.policyOf(cell.runId).catch(() => undefined);
            if (policy) tallyOf(cell.runId, policy).stop('fatal', `internal error: ${(error as Error).message}`);
            stopAll();
          } else {
            process.emitWarning(`echolens: cell ${cell.key.slice(0, 12)}…: ${(error as Error).message}`);
          }
        },
      )
      .finally(() => {
        if (phase.now !== null) bump(cell.provider, phase.now, -1);
        phase.now = null;
        active -= 1;
        source.finished(cell, { ok: status === 'done', latencyMs: now() - started });
        grantSlots();
        pump();
      });
  };

  /** May `provider` start preparing another cell? */
  const canStart = (provider: string) => {
    const slots = options.slotsOf(provider);
    const mine = countsOf(provider);
    if (mine.preparing >= slots) return false;
    if (!options.prepareAhead && mine.preparing + mine.calling + mine.writing >= slots) return false;
    return total.preparing < totalSlots;
  };

  function pump(): void {
    if (settled) return;
    if (!stopper.signal.aborted) {
      for (const provider of source.providers()) {
        while (canStart(provider)) {
          const cell = source.next(provider);
          if (cell === null) break;
          start(cell);
        }
      }
      source.refill({ active }, pump);
    }
    if (active === 0 && (stopper.signal.aborted || source.drained)) {
      settled = true;
      resolveAll();
    }
  }

  try {
    pump();
    await allSettled;
  } finally {
    options.signal?.removeEventListener('abort', stopAll);
    await source.close();
  }
  return { ended, ...(internalError === undefined ? {} : { internalError }) };
}

const INTERRUPTED = 'interrupted: no new cells started; finished cells are stored';
