import type { SleepFn } from '../models/retry.js';
import type { ModelRequest } from '../models/types.js';
import { promptCacheKeyOf } from '../store/cache-schedule.js';
import type { PgRunStore } from '../store/postgres/pg-store.js';
import type { ClaimedCell } from '../store/postgres/shared-work.js';
import type { CellOutcome } from '../store/run-store-common.js';
import { type Committed, attemptRecorder, batchedCommitter } from '../store/runner-commit.js';
import { providerOf } from '../store/runner-options.js';
import type { BudgetRefusal, CellSource, RunPolicy, SourcedCell } from './cell-source.js';
import { runPolicyOf } from './options.js';

/**
 * Claims from a shared PostgreSQL store as a cell source (`echolens worker`, and a run
 * command on such a store). Cells are claimed with a lease (`FOR UPDATE SKIP LOCKED`:
 * claimers never wait on each other's rows), renewed every third of it while held,
 * written with the lease cleared, and given back on a graceful stop (a killed process's
 * leases lapse). A claim takes a whole prefix group: its first cell runs alone and the
 * rest are handed out once it answered (the provider's prompt cache is then warm), the
 * cache scheduler's leader-first rule. Claims run ahead of the free slots; announced work
 * (LISTEN/NOTIFY) wakes an idle source at once, the poll only catches lapsed leases.
 * Rate buckets and the budget are the store's, shared by every worker on every machine.
 */

export interface ClaimSourceOptions {
  owner: string;
  /** Claim only this run's cells (the run command); default: every running run. */
  runId?: string;
  leaseMs: number;
  /** Largest claim. */
  claimMax: number;
  /**
   * Cells at hand (claimed, not yet started) below which this source claims more; a claim
   * tops them up to twice this. Small claims near the slots' appetite keep workers even at
   * the end of a run (a worker never sits on cells another worker could call).
   */
  readyTarget: number;
  /** Longest wait between claims when there is nothing to do. */
  pollMs: number;
  /** Return after this long with no pending cell left (default: never, unless `runId` is over). */
  idleExitMs?: number;
  /** Unsettled attempts at which a claim fails a cell. */
  maxOpenAttempts: number;
  /** Requests by key to call instead of the stored form (the run command's own plan objects). */
  requests?: ReadonlyMap<string, ModelRequest>;
  sleep: SleepFn;
}

export class ClaimSource implements CellSource {
  private readonly shared: PgRunStore['shared'];
  private readonly ready: SourcedCell[] = [];
  /** Followers of a group waiting for their leader's answer. */
  private readonly followers = new Map<string, SourcedCell[]>();
  /** Group of each cell handed out as a leader. */
  private readonly leaderOf = new Map<string, string>();
  /** Groups whose leader answered in this process (their provider cache is warm): a later part of one needs no leader. */
  private readonly warm = new Set<string>();
  /** Keys this source holds a lease on (claimed and not yet written or given back). */
  private readonly held = new Set<string>();
  /**
   * Keys whose results this source wrote lately: a claim sent before such a write committed
   * may still answer with the cell (its lease had lapsed), and it must not be called again.
   */
  private readonly written = new Set<string>();
  private readonly settings = new Map<string, { at: number; value: Promise<RunPolicy> }>();
  private readonly commitMany: (item: { key: string; runId: string; outcome: CellOutcome }) => Promise<Committed>;
  private readonly recordAttempt: (key: string) => Promise<void>;
  private readonly pendingWork = new Set<Promise<unknown>>();
  private readonly heartbeat: NodeJS.Timeout;
  private readonly stopListening: () => Promise<void>;
  private readonly stopper = new AbortController();
  private claiming = false;
  private exhausted = false;
  private checking = false;
  private waking = false;
  private announced = false;
  private wakeIdle: AbortController | undefined;
  private idleSince = Date.now();
  private isDrained = false;
  private renewing = false;
  private wake: () => void = () => {};

  constructor(
    private readonly store: PgRunStore,
    private readonly options: ClaimSourceOptions,
  ) {
    this.shared = store.shared;
    // Group commit: results in one statement, with the spend per run; at most two such writes
    // (and two counts of attempts) on their way at once, later ones join the next statement.
    this.commitMany = batchedCommitter((items) => this.shared.recordMany(items), { maxInFlight: WRITES_IN_FLIGHT });
    this.recordAttempt = attemptRecorder((keys) => store.beginAttempts(keys), { maxInFlight: WRITES_IN_FLIGHT });
    this.heartbeat = setInterval(() => this.renew(), Math.max(50, Math.floor(options.leaseMs / 3)));
    this.heartbeat.unref();
    this.stopListening = this.shared.listen(() => {
      this.announced = true;
      this.wakeIdle?.abort();
    });
  }

  providers(): Iterable<string> {
    return new Set(this.ready.map((cell) => cell.provider));
  }

  next(provider: string): SourcedCell | null {
    const index = this.ready.findIndex((cell) => cell.provider === provider);
    if (index < 0) return null;
    this.idleSince = Date.now();
    this.exhausted = false;
    return this.ready.splice(index, 1)[0]!;
  }

  finished(cell: SourcedCell, result: { ok: boolean }): void {
    this.held.delete(cell.key);
    const group = this.leaderOf.get(cell.key);
    if (group === undefined) return;
    this.leaderOf.delete(cell.key);
    if (result.ok) {
      if (this.warm.size >= WARM_GROUPS_KEPT) this.warm.delete(this.warm.values().next().value!);
      this.warm.add(group);
    }
    // The leader is over: its group's cache is warm (or the next member warms it); release the followers.
    const waiting = this.followers.get(group);
    if (waiting) {
      this.followers.delete(group);
      this.ready.unshift(...waiting);
    }
  }

  get drained(): boolean {
    return this.isDrained;
  }

  refill(state: { active: number }, wake: () => void): void {
    this.wake = wake;
    if (this.stopper.signal.aborted || this.isDrained) return;
    // Claim ahead: the next cells are at hand before the slots free up.
    if (this.ready.length < this.options.readyTarget && this.unstarted() < this.options.readyTarget + this.options.claimMax && !this.exhausted) {
      this.claimMore();
    }
    if (state.active > 0 || this.ready.length > 0 || this.claiming || this.waking || this.checking) return;
    // Nothing in hand and the last claim found nothing: finished, or wait and look again.
    this.checking = true;
    this.track(
      this.idleCheck().finally(() => {
        this.checking = false;
      }),
    );
  }

  policyOf(runId: string): Promise<RunPolicy> {
    // Re-read now and then (a run's budget does not change while it runs). A known policy is
    // answered at once while it is re-read in the background: no cell waits for that round trip.
    const cached = this.settings.get(runId);
    if (cached && Date.now() - cached.at < 5_000) return cached.value;
    const value = this.shared.settingsOf(runId).then(runPolicyOf);
    value.then(
      () => this.settings.set(runId, { at: Date.now(), value }),
      () => {
        // Unreachable: a known policy stays in use; an unknown one is asked again by the next cell.
        if (!cached && this.settings.get(runId) === entry) this.settings.delete(runId);
      },
    );
    const entry = cached ? { at: Date.now(), value: cached.value } : { at: Date.now(), value };
    this.settings.set(runId, entry);
    return entry.value;
  }

  async takeRates(cell: SourcedCell, limits: RunPolicy['limits'], tokens: number, signal: AbortSignal): Promise<boolean> {
    const limit = limits?.[cell.provider] ?? limits?.['*'];
    for (const [kind, perMinute, amount] of [
      ['requests', limit?.requestsPerMinute, 1],
      ['tokens', limit?.tokensPerMinute, tokens],
    ] as const) {
      if (!perMinute) continue;
      for (;;) {
        if (signal.aborted) return false;
        const wait = await this.shared.takeRate(`${kind}:${cell.provider}`, perMinute, amount);
        if (wait === 0) break;
        try {
          await this.options.sleep(Math.min(wait, 5_000), signal);
        } catch {
          return false;
        }
      }
    }
    return true;
  }

  /** The shared buckets are not corrected after the call (a take is one statement; the next refill evens it out). */
  adjustTokens(): void {}

  async reserve(cell: SourcedCell, usd: number, policy: RunPolicy): Promise<true | BudgetRefusal> {
    if (await this.shared.reserve(this.options.owner, cell.key, cell.runId, usd, policy.maxCostUsd!)) return true;
    return { spentUsd: await this.shared.spentOf(cell.runId) };
  }

  /** A reservation is on the cell's lease: writing the result or giving the cell back clears it. */
  unreserve(): void {}

  beginAttempt(cell: SourcedCell): Promise<void> {
    return this.recordAttempt(cell.key);
  }

  async commit(cell: SourcedCell, outcome: CellOutcome): Promise<Committed> {
    const committed = await this.commitMany({ key: cell.key, runId: cell.runId, outcome });
    if (this.written.size >= WRITTEN_KEPT) this.written.delete(this.written.values().next().value!);
    this.written.add(cell.key);
    this.held.delete(cell.key);
    return committed;
  }

  giveBack(cell: SourcedCell, how: { cut?: boolean; uncount?: boolean } = {}): Promise<void> {
    return this.release([cell.key], how);
  }

  endRun(runId: string, status: 'stopped' | 'failed', message: string): Promise<void> {
    return this.shared.endRun(runId, status, message);
  }

  stop(): void {
    if (this.stopper.signal.aborted) return;
    this.stopper.abort();
    this.wakeIdle?.abort();
    const keys = [...this.ready.map((c) => c.key), ...[...this.followers.values()].flat().map((c) => c.key)];
    this.ready.length = 0;
    this.followers.clear();
    this.track(this.release(keys));
  }

  async close(): Promise<void> {
    this.stop();
    while (this.pendingWork.size > 0) await Promise.all([...this.pendingWork]);
    clearInterval(this.heartbeat);
    await this.stopListening().catch(() => {});
  }

  /** Gives cells back (their leases); an unreachable database lets the leases lapse instead. */
  private release(keys: readonly string[], how: { cut?: boolean; uncount?: boolean } = {}): Promise<void> {
    for (const key of keys) this.held.delete(key);
    if (keys.length === 0) return Promise.resolve();
    return this.shared.release(this.options.owner, keys, how).catch(() => {});
  }

  /** Claimed cells not handed out yet (ready, and followers waiting for their leader). */
  private unstarted(): number {
    let count = this.ready.length;
    for (const waiting of this.followers.values()) count += waiting.length;
    return count;
  }

  private track(work: Promise<unknown>): void {
    this.pendingWork.add(work);
    void work.finally(() => this.pendingWork.delete(work)).catch(() => {});
  }

  private renew(): void {
    if (this.renewing || this.held.size === 0) return;
    this.renewing = true;
    this.shared
      .renew(this.options.owner, this.options.leaseMs, [...this.held])
      .catch(() => {
        // The database is unreachable right now; the next beat tries again (leases are long enough).
      })
      .finally(() => {
        this.renewing = false;
      });
  }

  private sourced(cell: ClaimedCell): SourcedCell {
    return {
      key: cell.key,
      runId: cell.runId,
      request: this.options.requests?.get(cell.key) ?? cell.request,
      provider: providerOf(cell.model),
      ...(cell.group === null ? {} : { cacheKey: promptCacheKeyOf(cell.group) }),
    };
  }

  /** Claims more cells in the background (one round trip); wakes the engine when they arrive. */
  private claimMore(): void {
    if (this.claiming || this.stopper.signal.aborted) return;
    this.claiming = true;
    const { owner, claimMax, readyTarget, leaseMs, maxOpenAttempts } = this.options;
    // Top the cells at hand up to twice the target (a whole group when it fits in `claimMax`).
    const max = Math.max(1, Math.min(claimMax, 2 * readyTarget - this.ready.length));
    this.track(
      this.shared
        .claim(owner, { max, leaseMs, runId: this.options.runId ?? null, maxOpenAttempts })
        .then(
          (all) => {
            this.exhausted = all.length === 0;
            if (this.stopper.signal.aborted) {
              return this.release(all.filter((c) => !this.held.has(c.key)).map((c) => c.key));
            }
            // A lease of this process that lapsed (a renewal late under load) is claimed back by
            // this process: the claim renewed it, and the cell is already in hand — not a second call.
            // So is a cell whose result this process wrote while the claim travelled (given back at
            // once: harmless on a written cell, and a cell reopened since is free for others).
            const late = all.filter((c) => !this.held.has(c.key) && this.written.has(c.key)).map((c) => c.key);
            if (late.length > 0) this.track(this.release(late));
            const claimed = all.filter((c) => !this.held.has(c.key) && !this.written.has(c.key));
            for (const cell of claimed) this.held.add(cell.key);
            if (claimed.length === 0) return;
            const cells = claimed.map((cell) => this.sourced(cell));
            // One claim is one prefix group (or cells without one). Its first cell leads unless the
            // group's cache is warm already (an earlier part's leader answered here); the part of a
            // group whose leader is still running waits with that leader's followers.
            const group = claimed[0]!.group;
            const waiting = group === null ? undefined : this.followers.get(group);
            if (waiting !== undefined) waiting.push(...cells);
            else if (group !== null && cells.length > 1 && !this.warm.has(group)) {
              this.ready.push(cells[0]!);
              this.leaderOf.set(cells[0]!.key, group);
              this.followers.set(group, cells.slice(1));
            } else {
              this.ready.push(...cells);
            }
          },
          (error: unknown) => {
            this.exhausted = true;
            process.emitWarning(`echolens: claim failed: ${(error as Error).message}`);
          },
        )
        .finally(() => {
          this.claiming = false;
          this.wake();
        }),
    );
  }

  /** With nothing to do: drained when the work is over, else waits (`pollMs`, or until work is announced) and claims again. */
  private async idleCheck(): Promise<void> {
    const { runId, idleExitMs } = this.options;
    if (runId !== undefined) {
      try {
        const open = await this.shared.openWork(runId);
        const status = (await this.store.getRun(runId))?.status;
        if (open.pending === 0 || status !== 'running') return this.drain();
      } catch {
        // Unreachable now; look again after the poll.
      }
    }
    if (this.followers.size > 0) return; // a leader is still running in this process
    if (idleExitMs !== undefined && Date.now() - this.idleSince >= idleExitMs) {
      // Idle means no pending cell at all: cells another (perhaps dead) worker leases return when its lease lapses.
      let pending = 0;
      try {
        pending = await this.shared.pendingWork(runId ?? null);
      } catch {
        pending = 1; // unreachable database: not idle, wait for it
      }
      if (pending === 0) return this.drain();
      this.idleSince = Date.now();
    }
    this.waking = true;
    this.wakeIdle = new AbortController();
    if (this.announced || this.stopper.signal.aborted) this.wakeIdle.abort();
    this.announced = false;
    try {
      await this.options.sleep(this.options.pollMs, this.wakeIdle.signal);
    } catch {
      // woken by work or stopped
    }
    this.wakeIdle = undefined;
    this.waking = false;
    this.exhausted = false;
    setImmediate(() => this.wake());
  }

  private drain(): void {
    this.isDrained = true;
    this.wake();
  }
}

/**
 * Group writes of results (and of attempt counts) travelling at once. Unbounded, a worker
 * sends a statement per event-loop turn: under load two workers at +10 ms each way took every
 * connection of their pools with writes of a few cells each.
 */
const WRITES_IN_FLIGHT = 2;

/** Written keys remembered against late claims (the oldest forgotten first). */
const WRITTEN_KEPT = 4_096;

/** Warm groups remembered (the oldest forgotten first). */
const WARM_GROUPS_KEPT = 1_000;
