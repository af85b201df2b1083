import type { CacheSettings } from './cache-schedule.js';
import { EcholensError } from '../core/errors.js';
import type { RetryPolicy, SleepFn } from '../models/retry.js';
import type { ModelAdapter, TokenUsage } from '../models/types.js';
import type { RunStatus } from './run-store-common.js';
import type { CellResult } from './types.js';

/** The runner's public types (re-exported by runner.ts, which is where callers import them from). */

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
  /** Cells answered by a model without a known price: their cost is unknown, not $0. */
  unpricedCells?: number;
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
  /**
   * `prefix`: cells sharing a long prefix run leader first, followers within the cache lifetime
   * (default; src/store/cache-schedule.ts); `plan`: plan order; `prefix-fifo`: the earlier
   * prefix order, kept for benchmarks that compare the two.
   */
  schedule?: 'prefix' | 'plan' | 'prefix-fifo';
  prefixMinChars?: number;
  /** Prompt-cache settings: Anthropic cache lifetime, OpenAI `prompt_cache_key` per prefix group (src/store/cache-schedule.ts). */
  cache?: CacheSettings;
  /** PostgreSQL stores: how long a claimed cell stays this process's without a renewal (default 30 s; a killed run's cells come back after it). */
  leaseMs?: number;
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
  /**
   * What the same priced calls would have cost online with no prompt cache (their usage at the
   * plain input price): `spendUsd / naiveUsd` is what caching and batch saved.
   */
  naiveUsd: number;
  /** Cells answered in this run whose usage reports prompt-cache reads. */
  cacheReadCells: number;
  /** Cells whose cost is unknown (no price for their model). */
  unpricedCells: number;
  tokens: TokenUsage;
  wallMs: number;
  /** `--batch` stages with prefix groups: the followers' prompt cache, expected against billed (src/store/batch-cache-watch.ts). */
  batchCache?: BatchCacheReport;
}

/** How a `--batch` stage's followers fared with the prompt cache their leaders wrote. */
export interface BatchCacheReport {
  /** Followers answered (each expected to read its group's cache). */
  expectedReads: number;
  /** Followers whose usage reports prompt-cache reads. */
  billedReads: number;
  /** Fewer than half the expected reads were billed. */
  lost: boolean;
  /** Submission to collection of the leaders' batch, and of the followers' (ms). */
  leadersTurnaroundMs: number;
  followersTurnaroundMs: number;
  /** Per provider: `batch`, `rewarm` (a batch kept warm by short online calls) or `online`. */
  routes: Record<string, 'batch' | 'rewarm' | 'online'>;
  rewarmCalls: number;
  /** Re-warm calls whose usage reports cache reads. */
  rewarmHits: number;
  rewarmUsd: number;
  /** Re-warm calls skipped because their worst case would not fit under --max-cost. */
  rewarmSkipped: number;
}

export interface RunCellsResult extends RunSummary {
  /** One result per spec, in spec order (shared cells share a result). */
  results: CellResult[];
}

/** The run stopped because the same error kept happening; the message says which. */
export class FatalBurstError extends EcholensError {
  readonly summary: RunCellsResult;
  readonly errorKind: string;

  constructor(message: string, errorKind: string, summary: RunCellsResult, hint?: string, code = 'fatal_burst') {
    super(code, message, hint === undefined ? undefined : { hint });
    this.summary = summary;
    this.errorKind = errorKind;
  }
}
