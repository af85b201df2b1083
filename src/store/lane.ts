import { InvalidArgumentError } from '../core/errors.js';

type Task = () => Promise<void>;

/** A FIFO queue with amortised O(1) shift (a head index instead of Array#shift). */
class Fifo {
  private items: Array<Task | undefined> = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(task: Task): void {
    this.items.push(task);
  }

  shift(): Task | undefined {
    if (this.head === this.items.length) return undefined;
    const task = this.items[this.head];
    this.items[this.head] = undefined;
    this.head += 1;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return task;
  }
}

/**
 * Runs tasks with at most `concurrency` in flight. Urgent tasks (a prefix
 * group's followers, whose provider cache is warm now) go before normal ones;
 * each class is FIFO. Deliberately minimal: the runner's per-cell overhead sits
 * on this path, and tasks handle their own errors.
 */
export class WorkLane {
  readonly concurrency: number;
  private active = 0;
  private readonly urgent = new Fifo();
  private readonly normal = new Fifo();

  constructor(concurrency: number) {
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new InvalidArgumentError('concurrency', `must be an integer ≥ 1, got ${concurrency}`);
    }
    this.concurrency = concurrency;
  }

  get running(): number {
    return this.active;
  }

  get waiting(): number {
    return this.urgent.size + this.normal.size;
  }

  /** Queues a task that must not reject. */
  add(task: Task, urgent = false): void {
    (urgent ? this.urgent : this.normal).push(task);
    this.pump();
  }

  private pump(): void {
    while (this.active < this.concurrency) {
      const task = this.urgent.shift() ?? this.normal.shift();
      if (task === undefined) return;
      this.active += 1;
      void task().finally(() => {
        this.active -= 1;
        this.pump();
      });
    }
  }
}
