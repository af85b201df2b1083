import { InvalidArgumentError } from '../../core/errors.js';
import { DEFAULT_RETRY_POLICY } from '../../models/retry.js';
import type { ModelRequest } from '../../models/types.js';
import type { CellOutcome } from '../run-store-common.js';
import type { ProviderLimits } from '../runner-types.js';
import type { Statement, SyncPgClient } from './sync-client.js';

/**
 * What several processes working one PostgreSQL store share, all through the store:
 *
 * - Leases. A worker claims pending cells of running runs with
 *   `SELECT … FOR UPDATE SKIP LOCKED` (claimers never wait on each other's rows) and
 *   marks them leased until a server-clock deadline it renews while it works. A
 *   SIGKILLed worker stops renewing; its leases lapse and the cells are claimable
 *   again. Writing a result clears the lease in the same statement.
 * - Prefix groups. Cells whose cacheable prefix is long carry its signature; a claim
 *   takes a whole group (up to `max` cells), so one worker holds the group while its
 *   provider cache is warm.
 * - The budget. A run's `--max-cost` and spend live in its `runs` row; before a call a
 *   worker reserves the call's worst case on its leased cell under a lock on that row
 *   (refused when spend + live reservations + this one would pass the budget), and the
 *   cost is added to the spend in the transaction that writes the result.
 *   Reservations are lease-bound, so a killed worker's reservations lapse with it.
 * - Rate limits. One token bucket per provider and kind in `rate_buckets`, refilled by
 *   the server clock; every worker takes from the same bucket.
 */

/** Unsettled attempts (counted before calls, with no written outcome) at which a claim fails a cell: the retry policy's attempts. */
export const DEFAULT_MAX_OPEN_ATTEMPTS = DEFAULT_RETRY_POLICY.maxAttempts;

export interface RunSettings {
  maxCostUsd?: number;
  limits?: Record<string, ProviderLimits>;
  fatalBurst?: number;
  assumedMaxOutputTokens?: number;
}

export interface ClaimedCell {
  key: string;
  runId: string;
  model: string;
  group: string | null;
  request: ModelRequest;
}

/** The parts of the PostgreSQL store that shared work uses (PgRunStore has them). */
export interface SharedWorkStore {
  readonly client: SyncPgClient;
  decode(json: string): ModelRequest;
  outcomeStatement(key: string, outcome: CellOutcome): Statement;
  checkWritten(items: ReadonlyArray<{ key: string }>, counts: readonly number[]): boolean[];
}

export class SharedWork {
  constructor(private readonly store: SharedWorkStore) {}

  private get client() {
    return this.store.client;
  }

  /** Records what workers need to know about a run (never secrets: limits and budget only). */
  setSettings(runId: string, settings: RunSettings): void {
    this.client.query('UPDATE runs SET settings = $1 WHERE id = $2', [JSON.stringify(settings), runId]);
  }

  settingsOf(runId: string): RunSettings {
    const row = this.client.query('SELECT settings FROM runs WHERE id = $1', [runId]).rows[0] as { settings: string | null } | undefined;
    return row?.settings ? (JSON.parse(row.settings) as RunSettings) : {};
  }

  /**
   * Claims up to `max` claimable cells: a whole prefix group when the first claimable
   * cell has one, else cells without a group. `runId` restricts the claim to one run.
   */
  claim(owner: string, options: { max: number; leaseMs: number; runId?: string | null; maxOpenAttempts?: number }): ClaimedCell[] {
    if (!(options.max >= 1)) throw new InvalidArgumentError('max', 'must be at least 1');
    const runFilter = `EXISTS (SELECT 1 FROM run_cells rc JOIN runs r ON r.id = rc.run_id
                        WHERE rc.key = c.key AND r.status = 'running' AND ($2::text IS NULL OR r.id = $2))`;
    const claimable = `c.status = 'pending' AND (c.lease_until IS NULL OR c.lease_until < now()) AND ${runFilter}`;
    const maxOpen = Math.max(1, Math.floor(options.maxOpenAttempts ?? DEFAULT_MAX_OPEN_ATTEMPTS));
    // One statement (one round trip): a cell whose calls kept ending without a written outcome
    // (killed workers, results the database refused even as a failure) is failed instead of
    // being called once more (`exhausted`); the claim takes only the others.
    const claimed = this.client.query(
      `WITH exhausted AS (
         UPDATE cells x SET status = 'failed', error_class = 'storage', open_attempts = 0,
           error_message = 'storage: ' || x.open_attempts || ' calls of this cell ended without a stored result (the worker was killed or the result could not be written); not called again',
           finished_at = to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           lease_owner = NULL, lease_until = NULL, lease_run = NULL, lease_reserved_usd = 0
         WHERE x.key IN (SELECT c.key FROM cells c WHERE ${claimable} AND c.open_attempts > 0 AND c.open_attempts >= $5 FOR UPDATE OF c SKIP LOCKED)
       ), first AS (
         SELECT c.key, c.prefix_group FROM cells c WHERE ${claimable} AND c.open_attempts < $5
         ORDER BY c.prefix_group, c.key LIMIT 1 FOR UPDATE OF c SKIP LOCKED
       ), picked AS (
         SELECT c.key FROM cells c, first f
         WHERE ${claimable} AND c.open_attempts < $5 AND c.prefix_group IS NOT DISTINCT FROM f.prefix_group
         ORDER BY c.prefix_group, c.key LIMIT $3 FOR UPDATE OF c SKIP LOCKED
       )
       UPDATE cells SET lease_owner = $1, lease_until = now() + make_interval(secs => $4::double precision / 1000),
         lease_reserved_usd = 0,
         lease_run = (SELECT rc.run_id FROM run_cells rc JOIN runs r ON r.id = rc.run_id
                      WHERE rc.key = cells.key AND r.status = 'running' AND ($2::text IS NULL OR r.id = $2)
                      ORDER BY r.started_at, r.id LIMIT 1)
       FROM picked WHERE cells.key = picked.key
       RETURNING cells.key, cells.request, cells.model, cells.prefix_group, cells.lease_run`,
      [owner, options.runId ?? null, Math.floor(options.max), options.leaseMs, maxOpen],
    );
    const rows = claimed.rows as Array<{ key: string; request: string; model: string; prefix_group: string | null; lease_run: string }>;
    rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return rows.map((row) => ({ key: row.key, runId: row.lease_run, model: row.model, group: row.prefix_group, request: this.store.decode(row.request) }));
  }

  /**
   * Extends the owner's leases on the cells it holds in memory; returns how many it still
   * holds. Only those: a claim whose answer was lost with the connection leased cells the
   * worker never saw, and those must lapse back to the pool, not be renewed forever.
   */
  renew(owner: string, leaseMs: number, keys: readonly string[]): number {
    if (keys.length === 0) return 0;
    return this.client.query(
      "UPDATE cells SET lease_until = now() + make_interval(secs => $2::double precision / 1000) WHERE lease_owner = $1 AND status = 'pending' AND key = ANY($3::text[])",
      [owner, leaseMs, [...keys]],
    ).rowCount;
  }

  /**
   * Gives cells back to the pool at once (a graceful stop; a killed worker's leases lapse instead).
   * `cut`: their calls were sent and then cancelled by the stop — the attempt stays counted, but
   * no longer counts toward the unsettled attempts that fail a cell.
   */
  release(owner: string, keys?: readonly string[], options: { cut?: boolean } = {}): void {
    if (options.cut === true && keys !== undefined && keys.length > 0) {
      this.client.query(
        `UPDATE cells SET lease_owner = NULL, lease_until = NULL, lease_run = NULL, lease_reserved_usd = 0, open_attempts = greatest(open_attempts - 1, 0)
         WHERE lease_owner = $1 AND key = ANY($2::text[])`,
        [owner, [...keys]],
      );
    } else if (keys === undefined) {
      this.client.query('UPDATE cells SET lease_owner = NULL, lease_until = NULL, lease_run = NULL, lease_reserved_usd = 0 WHERE lease_owner = $1', [owner]);
    } else if (keys.length > 0) {
      this.client.query(
        'UPDATE cells SET lease_owner = NULL, lease_until = NULL, lease_run = NULL, lease_reserved_usd = 0 WHERE lease_owner = $1 AND key = ANY($2::text[])',
        [owner, [...keys]],
      );
    }
  }

  /** Reserves a call's worst-case cost against the run's budget; false when it would pass it. */
  reserve(owner: string, key: string, runId: string, usd: number, maxUsd: number): boolean {
    const [, update] = this.client.batch([
      { sql: 'SELECT 1 FROM runs WHERE id = $1 FOR UPDATE', params: [runId] },
      {
        sql: `UPDATE cells SET lease_reserved_usd = $3 WHERE key = $2 AND lease_owner = $4 AND
                (SELECT spent_usd FROM runs WHERE id = $1)
                + (SELECT coalesce(sum(lease_reserved_usd), 0) FROM cells WHERE lease_run = $1 AND lease_until > now() AND key <> $2)
                + $3 <= $5`,
        params: [runId, key, usd, owner, maxUsd],
      },
    ]);
    return update!.rowCount > 0;
  }

  /** Spend so far of a run (every call's cost, whoever made it). */
  spentOf(runId: string): number {
    return Number(this.client.query('SELECT spent_usd FROM runs WHERE id = $1', [runId]).rows[0]?.spent_usd ?? 0);
  }

  /**
   * Writes a claimed cell's outcome and adds its cost to the run's spend in one
   * transaction (the cost counts even when another worker's answer already stands:
   * the call was paid for). Returns false when the cell was already done.
   */
  record(key: string, runId: string, outcome: CellOutcome): boolean {
    return this.recordMany([{ key, runId, outcome }])[0]!;
  }

  /** Several outcomes in one transaction (the work loop's group commit); spend added per run. */
  recordMany(items: ReadonlyArray<{ key: string; runId: string; outcome: CellOutcome }>): boolean[] {
    if (items.length === 0) return [];
    const spend = new Map<string, number>();
    for (const item of items) spend.set(item.runId, (spend.get(item.runId) ?? 0) + (item.outcome.costUsd ?? 0));
    const results = this.client.batch([
      ...items.map((item) => this.store.outcomeStatement(item.key, item.outcome)),
      ...[...spend].map(([runId, usd]) => ({ sql: 'UPDATE runs SET spent_usd = spent_usd + $2 WHERE id = $1', params: [runId, usd] })),
    ]);
    return this.store.checkWritten(
      items,
      results.slice(0, items.length).map((r) => r.rowCount),
    );
  }

  /**
   * Takes `amount` from a shared bucket refilled at `perMinute` (capacity: 10 s of rate,
   * at least 1; a take larger than the capacity waits for a full bucket, as TokenBucket).
   * Returns 0 when taken, else the milliseconds to wait before trying again.
   */
  takeRate(name: string, perMinute: number, amount: number): number {
    const capacity = Math.max(1, perMinute / 6);
    const perMs = perMinute / 60_000;
    const need = Math.min(amount, capacity);
    const [, update] = this.client.batch([
      { sql: 'INSERT INTO rate_buckets (name, level, updated_at) VALUES ($1, $2, clock_timestamp()) ON CONFLICT (name) DO NOTHING', params: [name, capacity] },
      {
        sql: `UPDATE rate_buckets b SET level = CASE WHEN x.lvl >= $4 THEN x.lvl - $5 ELSE x.lvl END, updated_at = x.t
              FROM (SELECT least($2::double precision, level + extract(epoch FROM clock_timestamp() - updated_at) * 1000 * $3) AS lvl, clock_timestamp() AS t
                    FROM rate_buckets WHERE name = $1 FOR UPDATE) x
              WHERE b.name = $1 RETURNING x.lvl AS before`,
        params: [name, capacity, perMs, need, amount],
      },
    ]);
    const before = Number(update!.rows[0]?.before ?? 0);
    return before >= need ? 0 : Math.ceil((need - before) / perMs);
  }

  /** Ends a running run for everyone (budget or fatal burst): no worker claims its cells any more. */
  endRun(runId: string, status: 'stopped' | 'failed', message: string): void {
    const now = new Date().toISOString();
    this.client.query("UPDATE runs SET status = $2, updated_at = $3, ended_at = $3, summary = coalesce(summary, $4) WHERE id = $1 AND status = 'running'", [
      runId,
      status,
      now,
      JSON.stringify({ runId, status, stopReason: status === 'stopped' ? 'budget' : 'fatal', stopMessage: message }),
    ]);
  }

  /** Cells of a run still to do: pending ones, and how many of those a live lease holds. */
  openWork(runId: string): { pending: number; leased: number } {
    const row = this.client.query(
      `SELECT count(*)::int AS pending, count(*) FILTER (WHERE c.lease_until > now())::int AS leased
       FROM cells c WHERE c.status = 'pending' AND c.key IN (SELECT key FROM run_cells WHERE run_id = $1)`,
      [runId],
    ).rows[0] as { pending: number; leased: number };
    return row;
  }

  /**
   * Pending cells of running runs (or of one run), claimable now or not: cells a dead
   * worker still holds come back when its leases lapse, so a worker waiting to go idle
   * keeps waiting while any exist.
   */
  pendingWork(runId?: string | null): number {
    const row = this.client.query(
      `SELECT count(*)::int AS n FROM cells c WHERE c.status = 'pending' AND EXISTS (
         SELECT 1 FROM run_cells rc JOIN runs r ON r.id = rc.run_id WHERE rc.key = c.key AND r.status = 'running' AND ($1::text IS NULL OR r.id = $1))`,
      [runId ?? null],
    ).rows[0] as { n: number };
    return row.n;
  }

  /** Puts cells of a run back to pending so that workers take them (a resume re-running failed/empty cells). */
  reopen(keys: readonly string[]): void {
    if (keys.length === 0) return;
    this.client.query("UPDATE cells SET status = 'pending' WHERE key = ANY($1::text[]) AND status IN ('failed', 'empty')", [[...keys]]);
  }

  /**
   * The run lock: one process drives (registers, finalizes) a run at a time, like the
   * SQLite store's lock file. A session advisory lock, so a killed process's lock ends
   * with its connection. Workers never take it.
   */
  tryRunLock(runId: string): boolean {
    return this.client.query("SELECT pg_try_advisory_lock(hashtextextended('echolens-run:' || $1, 0)) AS ok", [runId]).rows[0]?.ok === true;
  }

  releaseRunLock(runId: string): void {
    this.client.query("SELECT pg_advisory_unlock(hashtextextended('echolens-run:' || $1, 0))", [runId]);
  }
}
