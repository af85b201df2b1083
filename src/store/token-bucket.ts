import { InvalidArgumentError } from '../core/errors.js';
import type { SleepFn } from '../models/retry.js';

/**
 * A token bucket refilled continuously at `perMinute / 60000` per ms, holding at
 * most `capacity` (default: 10 s worth, at least 1). Takers are served in FIFO
 * order. A take larger than the capacity waits for a full bucket and then
 * drives the level negative, so one huge request still goes through and the
 * debt is paid by later takers. Clock and sleep are injectable for tests.
 */
export class TokenBucket {
  readonly perMinute: number;
  readonly capacity: number;
  private level: number;
  private last: number;
  private tail: Promise<void> = Promise.resolve();
  private readonly now: () => number;
  private readonly sleep: SleepFn;

  constructor(perMinute: number, options: { capacity?: number; now: () => number; sleep: SleepFn }) {
    if (!Number.isFinite(perMinute) || perMinute <= 0) {
      throw new InvalidArgumentError('perMinute', `must be a positive number, got ${perMinute}`);
    }
    this.perMinute = perMinute;
    this.capacity = options.capacity ?? Math.max(1, perMinute / 6);
    if (!Number.isFinite(this.capacity) || this.capacity <= 0) {
      throw new InvalidArgumentError('capacity', `must be a positive number, got ${this.capacity}`);
    }
    this.now = options.now;
    this.sleep = options.sleep;
    this.level = this.capacity;
    this.last = this.now();
  }

  /** Resolves when `amount` may be spent; rejects if the signal aborts while waiting. */
  take(amount: number, signal?: AbortSignal): Promise<void> {
    if (!Number.isFinite(amount) || amount < 0) {
      return Promise.reject(new InvalidArgumentError('amount', `must be a finite number ≥ 0, got ${amount}`));
    }
    const turn = this.tail.then(() => this.waitFor(amount, signal));
    this.tail = turn.catch(() => undefined);
    return turn;
  }

  /** Corrects the level after the real cost is known (positive = more was spent than taken). */
  adjust(extraSpent: number): void {
    if (!Number.isFinite(extraSpent)) return;
    this.refill();
    this.level = Math.min(this.capacity, this.level - extraSpent);
  }

  /** Current level after refill (for tests and progress). */
  available(): number {
    this.refill();
    return this.level;
  }

  private async waitFor(amount: number, signal?: AbortSignal): Promise<void> {
    const needed = Math.min(amount, this.capacity);
    for (;;) {
      if (signal?.aborted) throw signal.reason ?? new Error('aborted');
      this.refill();
      if (this.level >= needed) {
        this.level -= amount;
        return;
      }
      const waitMs = ((needed - this.level) * 60_000) / this.perMinute;
      await this.sleep(Math.max(1, Math.ceil(waitMs)), signal);
    }
  }

  private refill(): void {
    const now = this.now();
    const elapsed = now - this.last;
    if (elapsed > 0) {
      this.level = Math.min(this.capacity, this.level + (elapsed * this.perMinute) / 60_000);
      this.last = now;
    }
  }
}
