import { type TokenUsage, ZERO_USAGE } from '../models/types.js';
import type { CellOutcome, RunStatus } from './run-store.js';
import { addTokenCounts } from '../core/token-counts.js';
import { FATAL_HINTS } from './runner-call.js';
import type { ProgressSnapshot, RunSummary, StopReason } from './runner-types.js';

/** The running tally of one `runCells` call: counts, spend, the stop state and the fatal-burst watch. */
export class RunTally {
  done = 0;
  empty = 0;
  failed = 0;
  calls = 0;
  spendUsd = 0;
  /** What the priced calls would have cost online without any prompt cache (from their usage). */
  naiveUsd = 0;
  /** Answered cells whose usage reports prompt-cache reads. */
  cacheReadCells = 0;
  unpriced = 0;
  inFlight = 0;
  reservedUsd = 0;
  readonly tokens: TokenUsage = { ...ZERO_USAGE };

  stopReason: StopReason | null = null;
  stopMessage: string | null = null;
  stopHint: string | undefined;
  fatalKind = '';
  internalError: unknown;
  private burst = { signature: '', count: 0 };
  private readonly controller = new AbortController();

  constructor(
    private readonly total: number,
    private readonly cachedCount: number,
    private readonly fatalBurst: number,
    private readonly now: () => number,
    private readonly startedAt: number,
  ) {}

  /** Aborted on the first stop: rate-limit waits and retries end, no new cell starts. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get stopped(): boolean {
    return this.stopReason !== null;
  }

  /** The first stop's reason and message stand; later stops only make sure the signal is aborted. */
  stop(reason: StopReason, message: string): void {
    if (this.stopReason === null) {
      this.stopReason = reason;
      this.stopMessage = message;
    }
    if (!this.controller.signal.aborted) this.controller.abort(new Error(message));
  }

  /**
   * A stop that outranks a budget stop: after `budget` the batch runner still collects what it
   * submitted, and an interrupt or a fatal error during that becomes the run's reason.
   */
  escalate(reason: Exclude<StopReason, 'budget'>, message: string, fatalKind = ''): void {
    if (this.stopReason === 'budget') this.stopReason = null;
    if (this.stopReason === null && reason === 'fatal') this.fatalKind = fatalKind;
    this.stop(reason, message);
  }

  /** Counts a finished call (usage, spend); `calls` defaults to its attempts (a batch counts calls at submission). */
  record(outcome: CellOutcome, calls = outcome.attempts, naiveUsd: number | null = null): void {
    addTokenCounts(this.tokens, outcome.usage);
    if (outcome.costUsd !== null) {
      this.spendUsd += outcome.costUsd;
      this.naiveUsd += naiveUsd ?? outcome.costUsd;
    } else if (outcome.usage.inputTokens + outcome.usage.outputTokens > 0) this.unpriced += 1;
    if (outcome.usage.cachedInputTokens > 0) this.cacheReadCells += 1;
    this.calls += calls;
  }

  /** Adds the counts of a run of part of the plan made elsewhere (the batch runner's online cells). */
  absorb(part: RunSummary): void {
    this.done += part.done;
    this.empty += part.empty;
    this.failed += part.failed;
    this.calls += part.calls;
    this.spendUsd += part.spendUsd;
    this.naiveUsd += part.naiveUsd;
    this.cacheReadCells += part.cacheReadCells;
    this.unpriced += part.unpricedCells;
    addTokenCounts(this.tokens, part.tokens);
  }

  /** Counts the committed outcome's status and watches for a burst of the same failure. */
  finish(outcome: CellOutcome): void {
    if (outcome.status === 'done') this.done += 1;
    else if (outcome.status === 'empty') this.empty += 1;
    else this.failed += 1;
    if (outcome.status !== 'failed') {
      this.burst = { signature: '', count: 0 };
      return;
    }
    const signature = `${outcome.errorClass}\u0000${outcome.errorMessage}`;
    this.burst = this.burst.signature === signature ? { signature, count: this.burst.count + 1 } : { signature, count: 1 };
    if (this.burst.count >= this.fatalBurst) {
      this.fatalKind = outcome.errorClass ?? 'unknown';
      this.stopHint = FATAL_HINTS.get(this.fatalKind);
      this.stop('fatal', `stopped after ${this.burst.count} consecutive cells failed with the same error: ${outcome.errorMessage}`);
    }
  }

  snapshot(last?: ProgressSnapshot['last']): ProgressSnapshot {
    return {
      total: this.total,
      finished: this.cachedCount + this.done + this.empty + this.failed,
      cached: this.cachedCount,
      done: this.done,
      empty: this.empty,
      failed: this.failed,
      inFlight: this.inFlight,
      calls: this.calls,
      tokens: { ...this.tokens },
      spendUsd: this.spendUsd,
      unpricedCells: this.unpriced,
      elapsedMs: this.now() - this.startedAt,
      ...(last ? { last } : {}),
    };
  }

  status(): RunStatus {
    const reason = this.stopReason;
    return reason === 'fatal' ? 'failed' : reason === 'budget' ? 'stopped' : reason === 'interrupted' ? 'interrupted' : 'done';
  }

  summary(runId: string, planned: number, toRun: number): RunSummary {
    return {
      runId,
      status: this.status(),
      planned,
      total: this.total,
      done: this.done,
      cached: this.cachedCount,
      empty: this.empty,
      failed: this.failed,
      pending: toRun - (this.done + this.empty + this.failed),
      interrupted: this.stopReason === 'interrupted',
      stopReason: this.stopReason,
      stopMessage: this.stopMessage,
      calls: this.calls,
      spendUsd: this.spendUsd,
      naiveUsd: this.naiveUsd,
      cacheReadCells: this.cacheReadCells,
      unpricedCells: this.unpriced,
      tokens: this.tokens,
      wallMs: this.now() - this.startedAt,
    };
  }
}
