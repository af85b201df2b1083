import type { ModelRequest } from '../models/types.js';
import type { CellOutcome } from '../store/run-store-common.js';
import type { Committed } from '../store/runner-commit.js';
import type { RunTally } from '../store/runner-state.js';
import type { ProviderLimits } from '../store/runner-types.js';

/**
 * Where the execution engine (engine.ts) gets its cells from, and the few things that
 * differ between a run worked by this process alone and a run shared through the store.
 *
 * - `PlanSource` (plan-source.ts): the local plan, ordered by the cache scheduler
 *   (leaders before followers), with in-process token buckets and budget. SQLite runs.
 * - `ClaimSource` (claim-source.ts): cells claimed from a PostgreSQL store with leases
 *   (`FOR UPDATE SKIP LOCKED`, renewed while held, released on a stop), woken by
 *   LISTEN/NOTIFY; rate buckets and the budget are the store's, shared by every worker.
 *
 * The engine does the rest the same way for both: per-provider slots, preparing cells
 * while the slots are busy, the call under the retry policy, group commit, the tally
 * with the fatal-burst stop, and progress.
 */

/** One cell handed to the engine. */
export interface SourcedCell {
  key: string;
  runId: string;
  /** What to call. */
  request: ModelRequest;
  /** The part of the model ref before ":" (the unit of concurrency and rate limits). */
  provider: string;
  /** OpenAI `prompt_cache_key` of the cell's prefix group. */
  cacheKey?: string;
  /** The source's own handle (the scheduler position of a planned cell). */
  position?: number;
}

/** A run's limits as the engine applies them. */
export interface RunPolicy {
  maxCostUsd?: number;
  /** Spend counted against `maxCostUsd` before this engine started (in-process budget only). */
  spentBeforeUsd?: number;
  limits?: Record<string, ProviderLimits>;
  fatalBurst: number;
  assumedMaxOutputTokens: number;
}

/** A reservation refused: what was spent, for the stop message. */
export interface BudgetRefusal {
  spentUsd: number;
}

export interface CellSource {
  /** Providers that may have a cell to hand out now, in the order they are served. */
  providers(): Iterable<string>;
  /** The next cell of `provider` to start, or null (none now; `wake` tells when that changes). */
  next(provider: string): SourcedCell | null;
  /** A started cell settled (called or not): `ok` when its provider answered (its prompt cache is warm). */
  finished(cell: SourcedCell, result: { ok: boolean; latencyMs: number }): void;
  /** No cell will come any more: the engine ends once nothing is in flight. */
  readonly drained: boolean;
  /**
   * Called at the end of every pass of the engine with the cells it holds: a source that
   * fetches cells in the background (claims) fetches ahead or, when idle, looks for work.
   * `wake` is the engine's pass, for when cells arrive or `drained` changes.
   */
  refill(state: { active: number }, wake: () => void): void;
  /** The run's limits (a shared run's are in the store). */
  policyOf(runId: string): Promise<RunPolicy>;
  /** Waits for the provider's rate buckets; false when `signal` stopped the wait. */
  takeRates(cell: SourcedCell, limits: RunPolicy['limits'], tokens: number, signal: AbortSignal): Promise<boolean>;
  /** Corrects the token bucket by what the call really used minus what was taken. */
  adjustTokens(cell: SourcedCell, limits: RunPolicy['limits'], delta: number): void;
  /** Reserves a call's worst-case cost; a refusal stops the run (budget). */
  reserve(cell: SourcedCell, usd: number, policy: RunPolicy, tally: RunTally): Promise<true | BudgetRefusal>;
  /** The call is over (or never sent): its reservation ends. */
  unreserve(cell: SourcedCell, usd: number, tally: RunTally): void;
  /** Counts an attempt before the call is sent. */
  beginAttempt(cell: SourcedCell): Promise<void>;
  /** Writes a result (group commit); `written` false when another process finished the cell first. */
  commit(cell: SourcedCell, outcome: CellOutcome): Promise<Committed>;
  /**
   * A cell handed out that will not be called after all (a stop). `cut`: its call was sent
   * and cancelled; `uncount`: its attempt was counted but the call never sent.
   */
  giveBack(cell: SourcedCell, how?: { cut?: boolean; uncount?: boolean }): Promise<void>;
  /** A run ended for everyone that works it (budget, fatal burst). */
  endRun(runId: string, status: 'stopped' | 'failed', message: string): Promise<void>;
  /** Graceful stop: hand out nothing more, give back what is held and not started. */
  stop(): void;
  /** After the engine's last cell: waits for background work (claims, releases) and lets go of resources. */
  close(): Promise<void>;
}
