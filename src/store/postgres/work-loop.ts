import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { defaultSleep, type RetryPolicy, type SleepFn } from '../../models/retry.js';
import { type ModelRequest, ZERO_USAGE } from '../../models/types.js';
import type { CellOutcome } from '../run-store.js';
import { callCell } from '../runner-call.js';
import { attemptRecorder, batchedCommitter } from '../runner-commit.js';
import { adapterCache } from '../runner-lanes.js';
import { concurrencyFor, defaultAdapterFactory, defaultCostOf, providerOf } from '../runner-options.js';
import type { AdapterFactory, CostFn } from '../runner-types.js';
import { type CacheSettings, promptCacheKeyOf } from '../cache-schedule.js';
import { estimateInputTokens } from '../schedule.js';
import type { PgRunStore } from './pg-store.js';
import { type ClaimedCell, DEFAULT_MAX_OPEN_ATTEMPTS, type RunSettings } from './shared-work.js';

/**
 * The loop every process working a PostgreSQL store runs: `echolens worker`, and the
 * run command itself (restricted to its run). It claims cells with a lease, calls
 * them under the retry policy, writes each result as it arrives (clearing the lease),
 * and renews its leases while calls are in flight. Rate limits and the budget come
 * from the run's settings in the store and are taken from shared counters, so every
 * worker on every machine obeys the same limits.
 *
 * Cache-aware order: a claim takes a whole prefix group; its first cell runs alone
 * and the rest are released when it answered (the provider's prompt cache is then
 * warm for them), the same leader-first rule as the single-process runner.
 */

export interface WorkOptions {
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
  /** Largest claim (a prefix group larger than this is claimed in parts). Default 4 × concurrency. */
  claimMax?: number;
  /**
   * Calls whose results may still be on their way to the store while their slots serve new
   * calls (write-behind; default a quarter of the concurrency, at least 1). A killed worker's
   * repeated calls are at most its calls in flight plus these.
   */
  writeBehind?: number;
  /** Requests by cell key to call instead of the stored form (the run command's own plan objects). */
  requests?: ReadonlyMap<string, ModelRequest>;
  adapterFor?: AdapterFactory;
  costOf?: CostFn;
  retry?: Partial<RetryPolicy>;
  /** Graceful stop: no new claims, calls in flight finish and are stored, unstarted claims are released. */
  signal?: AbortSignal;
  /** Cancels calls in flight (their cells return to the pool). */
  hardSignal?: AbortSignal;
  sleep?: SleepFn;
  /** Anthropic cache lifetime asked for on breakpoints (the run's `cache.cacheTtl`). */
  cacheTtl?: CacheSettings['cacheTtl'];
  /** Called whenever the number of this worker's calls in flight changes (progress). */
  onInFlight?: (inFlight: number) => void;
  onCell?: (event: { key: string; runId: string; model: string; status: CellOutcome['status'] | 'refused'; outcome: CellOutcome }) => void;
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
  const concurrency = typeof options.concurrency === 'number' ? Math.max(1, Math.floor(options.concurrency)) : Number.POSITIVE_INFINITY;
  const limitOf = (provider: string) =>
    typeof options.concurrency === 'number' ? concurrency : Math.max(1, Math.floor(concurrencyFor(options.concurrency, provider)));
  const largestLimit = typeof options.concurrency === 'object' ? Math.max(1, ...Object.values(options.concurrency)) : limitOf('*');
  const leaseMs = options.leaseMs ?? 30_000;
  const pollMs = options.pollMs ?? 1_000;
  const claimMax = options.claimMax ?? Math.floor(largestLimit) * 4;
  const writeBehindOf = (slots: number) => Math.max(0, Math.floor(options.writeBehind ?? Math.max(1, Math.ceil(slots / 4))));
  const sleep = options.sleep ?? defaultSleep;
  const costOf = options.costOf ?? (await defaultCostOf());
  const adapterOf = adapterCache(options.adapterFor ?? defaultAdapterFactory);
  const shared = store.shared;
  const result: WorkResult = { owner, written: 0, done: 0, empty: 0, failed: 0, calls: 0, spendUsd: 0, unpricedCells: 0, refused: 0, ended: [] };

  const stopper = new AbortController();
  const stopNow = () => stopper.abort();
  if (options.signal?.aborted) stopNow();
  options.signal?.addEventListener('abort', stopNow, { once: true });

  // Settings per run, re-read now and then (cheap; a run's budget does not change while it runs).
  const settings = new Map<string, { at: number; value: Promise<RunSettings> }>();
  const settingsOf = (runId: string): Promise<RunSettings> => {
    const cached = settings.get(runId);
    if (cached && Date.now() - cached.at < 5_000) return cached.value;
    const value = shared.settingsOf(runId);
    settings.set(runId, { at: Date.now(), value });
    value.catch(() => settings.delete(runId));
    return value;
  };
  const bursts = new Map<string, { signature: string; count: number }>();

  // Group commit: results that arrive in one event-loop turn are written in one statement;
  // a result the store cannot hold fails its cell with a `storage: …` error (runner-commit.ts).
  const commit = batchedCommitter<{ key: string; runId: string; outcome: CellOutcome }>((items) => shared.recordMany(items));
  // Attempts are counted before the calls are sent (one statement for the calls of a turn).
  const beginAttempt = attemptRecorder((keys) => store.beginAttempts(keys));
  const maxOpenAttempts = options.retry?.maxAttempts ?? DEFAULT_MAX_OPEN_ATTEMPTS;

  const ready: ClaimedCell[] = [];
  /** Keys this worker holds a lease on (claimed and not yet written or given back). */
  const held = new Set<string>();
  const followers = new Map<string, ClaimedCell[]>();
  /** Cells started and not yet settled (their slot may be free already: the call ended, the write is on its way). */
  let active = 0;
  /**
   * Cells being prepared (rate limits, budget reservation, the attempt counted) while every
   * slot is busy: up to one slot's worth per provider, so a freed slot is taken at once and the
   * round trips of preparing never add to a call's time.
   */
  let preparing = 0;
  const preparingBy = new Map<string, number>();
  /** Calls in flight: what concurrency caps. */
  let calling = 0;
  let inFlight = 0;
  const callingBy = new Map<string, number>();
  /** Calls that ended and whose results are not yet written (their slots may serve new calls). */
  let unwritten = 0;
  const unwrittenBy = new Map<string, number>();
  const slotWaiters: Array<{ provider: string; grant: (ok: boolean) => void }> = [];
  const fits = (provider: string) => {
    const mine = callingBy.get(provider) ?? 0;
    const limit = limitOf(provider);
    return (
      calling < concurrency &&
      mine < limit &&
      mine + (unwrittenBy.get(provider) ?? 0) < limit + writeBehindOf(limit) &&
      (!Number.isFinite(concurrency) || calling + unwritten < concurrency + writeBehindOf(concurrency))
    );
  };
  const take = (provider: string) => {
    calling += 1;
    callingBy.set(provider, (callingBy.get(provider) ?? 0) + 1);
  };
  /** Waits for a call slot of the provider (first come, first served); false when stopped meanwhile. */
  const acquireSlot = (provider: string): Promise<boolean> => {
    if (stopper.signal.aborted) return Promise.resolve(false);
    if (!slotWaiters.some((w) => w.provider === provider) && fits(provider)) {
      take(provider);
      return Promise.resolve(true);
    }
    return new Promise((grant) => slotWaiters.push({ provider, grant }));
  };
  const grantSlots = () => {
    for (let index = 0; index < slotWaiters.length; ) {
      const waiter = slotWaiters[index]!;
      if (stopper.signal.aborted) {
        slotWaiters.splice(index, 1);
        waiter.grant(false);
      } else if (fits(waiter.provider)) {
        slotWaiters.splice(index, 1);
        take(waiter.provider);
        waiter.grant(true);
      } else index += 1;
    }
  };
  const freeSlot = (provider: string) => {
    calling -= 1;
    callingBy.set(provider, callingBy.get(provider)! - 1);
    grantSlots();
  };
  stopper.signal.addEventListener('abort', grantSlots, { once: true });
  let idleSince = Date.now();
  let renewing = false;
  const heartbeat = setInterval(
    () => {
      if (renewing || held.size === 0) return;
      renewing = true;
      shared
        .renew(owner, leaseMs, [...held])
        .catch(() => {
          // The database is unreachable right now; the next beat tries again (leases are long enough).
        })
        .finally(() => {
          renewing = false;
        });
    },
    Math.max(50, Math.floor(leaseMs / 3)),
  );
  heartbeat.unref();

  // Woken when a process announces work (LISTEN/NOTIFY); the poll only catches leases that lapsed.
  let wakeIdle: AbortController | undefined;
  /** Work announced since the last claim (a claim that raced the announcement must not wait a whole poll). */
  let announced = false;
  const stopListening = shared.listen(() => {
    announced = true;
    wakeIdle?.abort();
  });

  const waitFor = async (ms: number) => {
    try {
      await sleep(ms, stopper.signal);
    } catch {
      // stopped while waiting
    }
  };

  /** Gives cells back (their leases); an unreachable database lets the leases lapse instead. */
  const giveBack = (keys: readonly string[], how: { cut?: boolean; uncount?: boolean } = {}) => {
    for (const key of keys) held.delete(key);
    if (keys.length === 0) return Promise.resolve();
    return shared.release(owner, keys, how).catch(() => {});
  };

  /** Waits for the shared rate buckets of the cell's provider; false when stopped meanwhile. */
  const takeRates = async (cell: ClaimedCell, limits: RunSettings['limits'], tokens: number): Promise<boolean> => {
    const provider = providerOf(cell.model);
    const limit = limits?.[provider] ?? limits?.['*'];
    for (const [kind, perMinute, amount] of [
      ['requests', limit?.requestsPerMinute, 1],
      ['tokens', limit?.tokensPerMinute, tokens],
    ] as const) {
      if (!perMinute) continue;
      for (;;) {
        if (stopper.signal.aborted) return false;
        const wait = await shared.takeRate(`${kind}:${provider}`, perMinute, amount);
        if (wait === 0) break;
        await waitFor(Math.min(wait, 5_000));
      }
    }
    return true;
  };

  /**
   * One cell: rates, budget and the attempt (prepared while the slots are busy), then a slot,
   * the call, and the write. `prepared` is called once the cell holds a slot or gave up.
   */
  const runOne = async (cell: ClaimedCell, prepared: () => void): Promise<void> => {
    const provider = providerOf(cell.model);
    let holding = false;
    let writing = false;
    let preparedOnce = false;
    const donePreparing = () => {
      if (!preparedOnce) {
        preparedOnce = true;
        prepared();
      }
    };
    const free = () => {
      if (holding) {
        holding = false;
        freeSlot(provider);
      }
    };
    try {
      const run = await settingsOf(cell.runId);
      const assumedOutput = run.assumedMaxOutputTokens ?? 4096;
      const inputEstimate = estimateInputTokens(cell.request);
      const outputCeiling = cell.request.params?.maxTokens ?? assumedOutput;
      if (!(await takeRates(cell, run.limits, inputEstimate + outputCeiling))) {
        await giveBack([cell.key]);
        return;
      }
      if (run.maxCostUsd !== undefined) {
        const reservation = costOf(cell.model, { ...ZERO_USAGE, inputTokens: inputEstimate, outputTokens: outputCeiling }) ?? 0;
        if (!(await shared.reserve(owner, cell.key, cell.runId, reservation, run.maxCostUsd))) {
          const spent = await shared.spentOf(cell.runId);
          const message =
            `stopped before exceeding --max-cost $${run.maxCostUsd}: spent $${spent.toFixed(4)}, ` + `next cell could cost up to $${reservation.toFixed(4)}`;
          await shared.endRun(cell.runId, 'stopped', message);
          result.ended.push({ runId: cell.runId, status: 'stopped', message });
          await giveBack([cell.key]);
          return;
        }
      }
      if (stopper.signal.aborted) {
        await giveBack([cell.key]);
        return;
      }
      await beginAttempt(cell.key);
      holding = await acquireSlot(provider);
      donePreparing();
      if (!holding) {
        // Stopped before the call was sent: the attempt counted for it is taken back.
        await giveBack([cell.key], { cut: true, uncount: true });
        return;
      }
      inFlight += 1;
      options.onInFlight?.(inFlight);
      let outcome: CellOutcome | undefined;
      try {
        outcome = await callCell(options.requests?.get(cell.key) ?? cell.request, new Date().toISOString(), {
          adapterOf,
          ...(options.retry ? { retry: options.retry } : {}),
          signal: stopper.signal,
          ...(options.hardSignal ? { hardSignal: options.hardSignal } : {}),
          sleep,
          costOf,
          ...(cell.group === null ? {} : { cacheKey: promptCacheKeyOf(cell.group) }),
          ...(options.cacheTtl === undefined ? {} : { cacheTtl: options.cacheTtl }),
        });
      } finally {
        inFlight -= 1;
        options.onInFlight?.(inFlight);
      }
      // The call is over: its slot goes to the next cell while the result is written (up to `writeBehind` results at once).
      unwritten += 1;
      unwrittenBy.set(provider, (unwrittenBy.get(provider) ?? 0) + 1);
      writing = true;
      free();
      if (outcome === undefined) {
        await giveBack([cell.key], { cut: true });
        return;
      }
      outcome = { ...outcome, attemptsRecorded: 1 };
      result.calls += outcome.attempts;
      result.spendUsd += outcome.costUsd ?? 0;
      if (outcome.costUsd === null && outcome.usage.inputTokens + outcome.usage.outputTokens > 0) result.unpricedCells += 1;
      const committed = await commit({ key: cell.key, runId: cell.runId, outcome });
      const written = committed.written;
      outcome = committed.outcome;
      if (!written) result.refused += 1;
      else {
        result.written += 1;
        result[outcome.status] += 1;
      }
      options.onCell?.({ key: cell.key, runId: cell.runId, model: cell.model, status: written ? outcome.status : 'refused', outcome });
      await watchBurst(cell.runId, outcome, run.fatalBurst ?? 3);
    } finally {
      if (writing) {
        writing = false;
        unwritten -= 1;
        unwrittenBy.set(provider, unwrittenBy.get(provider)! - 1);
        grantSlots();
      }
      free();
      donePreparing();
    }
  };

  /** The runner's fatal-burst rule per run: the same failure on consecutive cells fails the run for every worker. */
  const watchBurst = async (runId: string, outcome: CellOutcome, limit: number) => {
    if (outcome.status !== 'failed') {
      bursts.delete(runId);
      return;
    }
    const signature = `${outcome.errorClass}\u0000${outcome.errorMessage}`;
    const previous = bursts.get(runId);
    const burst = previous?.signature === signature ? { signature, count: previous.count + 1 } : { signature, count: 1 };
    bursts.set(runId, burst);
    if (burst.count >= limit) {
      const message = `stopped after ${burst.count} consecutive cells failed with the same error: ${outcome.errorMessage}`;
      await shared.endRun(runId, 'failed', message);
      result.ended.push({ runId, status: 'failed', message });
    }
  };

  let resolveDone!: () => void;
  const finished = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  let claiming = false;
  let checking = false;
  let waking = false;
  let exhausted = false;

  const start = (cell: ClaimedCell) => {
    active += 1;
    preparing += 1;
    const provider = providerOf(cell.model);
    preparingBy.set(provider, (preparingBy.get(provider) ?? 0) + 1);
    const prepared = () => {
      preparing -= 1;
      preparingBy.set(provider, preparingBy.get(provider)! - 1);
      pump();
    };
    void runOne(cell, prepared)
      .catch((error: unknown) => {
        // A store error while writing (database gone past the retry window): the lease lapses and another worker repeats the cell.
        process.emitWarning(`echolens worker: cell ${cell.key.slice(0, 12)}…: ${(error as Error).message}`);
      })
      .finally(() => {
        active -= 1;
        held.delete(cell.key);
        if (cell.group !== null) {
          // The leader answered: its group's cache is warm; release the followers.
          const waiting = followers.get(cell.group);
          if (waiting) {
            followers.delete(cell.group);
            ready.unshift(...waiting);
          }
        }
        pump();
      });
  };

  /** Claims more cells in the background (one round trip); pumps when they arrive. */
  const claimMore = () => {
    if (claiming || stopper.signal.aborted) return;
    claiming = true;
    shared
      .claim(owner, { max: claimMax, leaseMs, runId: options.runId ?? null, maxOpenAttempts })
      .then(
        (cells) => {
          exhausted = cells.length === 0;
          if (stopper.signal.aborted) {
            void giveBack(cells.map((c) => c.key));
            return;
          }
          for (const cell of cells) held.add(cell.key);
          if (cells.length === 0) return;
          const group = cells[0]!.group;
          if (group !== null && cells.length > 1 && !followers.has(group)) {
            ready.push(cells[0]!);
            followers.set(group, cells.slice(1));
          } else {
            ready.push(...cells);
          }
        },
        (error: unknown) => {
          exhausted = true;
          process.emitWarning(`echolens worker: claim failed: ${(error as Error).message}`);
        },
      )
      .finally(() => {
        claiming = false;
        pump();
      });
  };

  const settleIfStopped = (): boolean => {
    if (!stopper.signal.aborted) return false;
    if (ready.length > 0 || followers.size > 0) {
      const keys = [...ready.map((c) => c.key), ...[...followers.values()].flat().map((c) => c.key)];
      ready.length = 0;
      followers.clear();
      void giveBack(keys);
    }
    if (active === 0 && !claiming) resolveDone();
    return true;
  };

  const pump = (): void => {
    if (settleIfStopped()) return;
    for (;;) {
      if (preparing >= Math.min(concurrency, claimMax)) break;
      // The first ready cell whose provider can take another cell in preparation (cells of a busy provider wait).
      const index = ready.findIndex((c) => (preparingBy.get(providerOf(c.model)) ?? 0) < limitOf(providerOf(c.model)));
      if (index < 0) break;
      const [cell] = ready.splice(index, 1);
      idleSince = Date.now();
      exhausted = false;
      start(cell!);
    }
    // Claim ahead: the next cells are at hand before the slots free up.
    if (ready.length < 2 * Math.max(1, Math.min(concurrency, largestLimit)) && !exhausted) claimMore();
    if (active > 0 || ready.length > 0 || claiming || waking || checking) return;
    // Nothing in hand and the last claim found nothing: finished, or wait and look again.
    checking = true;
    void idleCheck().finally(() => {
      checking = false;
    });
  };

  /** With nothing to do: ends the loop when its work is over, else waits (`pollMs`) and claims again. */
  const idleCheck = async (): Promise<void> => {
    if (options.runId !== undefined) {
      try {
        const open = await shared.openWork(options.runId);
        const status = (await store.getRun(options.runId))?.status;
        if (open.pending === 0 || status !== 'running') return resolveDone();
      } catch {
        // Unreachable now; look again after the poll.
      }
    }
    if (followers.size > 0) return; // a leader is still running elsewhere in this process
    if (options.idleExitMs !== undefined && Date.now() - idleSince >= options.idleExitMs) {
      // Idle means no pending cell at all: cells another (perhaps dead) worker leases return when its lease lapses.
      let pending = 0;
      try {
        pending = await shared.pendingWork(options.runId ?? null);
      } catch {
        pending = 1; // unreachable database: not idle, wait for it
      }
      if (pending === 0) return resolveDone();
      idleSince = Date.now();
    }
    waking = true;
    wakeIdle = new AbortController();
    if (announced) wakeIdle.abort();
    announced = false;
    const woken = wakeIdle.signal;
    const stopWait = () => wakeIdle?.abort();
    stopper.signal.addEventListener('abort', stopWait, { once: true });
    try {
      await sleep(pollMs, woken);
    } catch {
      // woken by work or stopped
    }
    stopper.signal.removeEventListener('abort', stopWait);
    wakeIdle = undefined;
    waking = false;
    exhausted = false;
    setImmediate(pump);
  };
  pump();
  await finished;
  clearInterval(heartbeat);
  await stopListening().catch(() => {});
  options.signal?.removeEventListener('abort', stopNow);
  return result;
}
