import type { SleepFn } from '../models/retry.js';
import type { ModelRequest } from '../models/types.js';
import { type CacheSettings, CacheScheduler, cachePolicyFor } from '../store/cache-schedule.js';
import type { CellOutcome, RunStore } from '../store/run-store-common.js';
import { attemptRecorder, groupCommitter } from '../store/runner-commit.js';
import { providerLanes } from '../store/runner-lanes.js';
import { concurrencyFor, providerOf } from '../store/runner-options.js';
import type { RunTally } from '../store/runner-state.js';
import type { RunCellsOptions } from '../store/runner-types.js';
import { DEFAULT_PREFIX_MIN_CHARS } from '../store/schedule.js';
import type { BudgetRefusal, CellSource, RunPolicy, SourcedCell } from './cell-source.js';

/**
 * The local plan as a cell source: the cells of one run this process works alone, in the
 * cache scheduler's order (leaders warm a prefix group, followers follow within the cache
 * lifetime; src/store/cache-schedule.ts), with in-process token buckets and budget.
 */
export class PlanSource implements CellSource {
  private readonly scheduler: CacheScheduler;
  private readonly lanes: ReturnType<typeof providerLanes>;
  private readonly writeResult: (key: string, outcome: CellOutcome) => ReturnType<ReturnType<typeof groupCommitter>>;
  private readonly recordAttempt: (key: string) => Promise<void>;
  private ended = false;

  constructor(
    store: RunStore,
    private readonly runId: string,
    /** The cells to call: key and request, in plan order. */
    private readonly cells: ReadonlyArray<{ key: string; request: ModelRequest }>,
    private readonly policy: RunPolicy,
    options: Pick<RunCellsOptions, 'concurrency' | 'limits' | 'schedule' | 'prefixMinChars'> & { cache?: CacheSettings; now: () => number; sleep: SleepFn },
  ) {
    this.scheduler = new CacheScheduler(
      cells.map((cell) => cell.request),
      {
        mode: options.schedule ?? 'prefix',
        minChars: options.prefixMinChars ?? DEFAULT_PREFIX_MIN_CHARS,
        providerOf,
        concurrencyOf: (provider) => concurrencyFor(options.concurrency, provider),
        policyOf: (provider) => cachePolicyFor(provider, options.cache),
        now: options.now,
      },
    );
    this.lanes = providerLanes(options, { now: options.now, sleep: options.sleep });
    this.writeResult = groupCommitter(store);
    this.recordAttempt = attemptRecorder((keys) => store.beginAttempts(keys));
  }

  providers(): Iterable<string> {
    return this.ended ? [] : this.scheduler.providers;
  }

  next(provider: string): SourcedCell | null {
    if (this.ended) return null;
    const step = this.scheduler.next(provider);
    if (step === null) return null;
    const cell = this.cells[step.position]!;
    return {
      key: cell.key,
      runId: this.runId,
      request: cell.request,
      provider,
      position: step.position,
      ...(step.cacheKey === undefined ? {} : { cacheKey: step.cacheKey }),
    };
  }

  finished(cell: SourcedCell, result: { ok: boolean; latencyMs: number }): void {
    this.scheduler.finished(cell.position!, result);
  }

  get drained(): boolean {
    return this.ended || this.scheduler.remaining === 0;
  }

  refill(): void {}

  policyOf(): Promise<RunPolicy> {
    return Promise.resolve(this.policy);
  }

  async takeRates(cell: SourcedCell, _limits: RunPolicy['limits'], tokens: number, signal: AbortSignal): Promise<boolean> {
    const lane = this.lanes(cell.request.model);
    try {
      await lane.requests?.take(1, signal);
      await lane.tokens?.take(tokens, signal);
      return true;
    } catch {
      return false;
    }
  }

  adjustTokens(cell: SourcedCell, _limits: RunPolicy['limits'], delta: number): void {
    this.lanes(cell.request.model).tokens?.adjust(delta);
  }

  reserve(_cell: SourcedCell, usd: number, policy: RunPolicy, tally: RunTally): Promise<true | BudgetRefusal> {
    const before = policy.spentBeforeUsd ?? 0;
    if (before + tally.spendUsd + tally.reservedUsd + usd > policy.maxCostUsd!) return Promise.resolve({ spentUsd: before + tally.spendUsd });
    tally.reservedUsd += usd;
    return Promise.resolve(true);
  }

  unreserve(_cell: SourcedCell, usd: number, tally: RunTally): void {
    tally.reservedUsd -= usd;
  }

  beginAttempt(cell: SourcedCell): Promise<void> {
    return this.recordAttempt(cell.key);
  }

  commit(cell: SourcedCell, outcome: CellOutcome) {
    return this.writeResult(cell.key, outcome);
  }

  /** A cell not called stays pending in the store: a later run resumes it. */
  async giveBack(): Promise<void> {}

  /** The plan has one run: its end is the source's. */
  async endRun(): Promise<void> {
    this.ended = true;
  }

  stop(): void {
    this.ended = true;
  }

  async close(): Promise<void> {}
}
