import { InvalidArgumentError } from '../../core/errors.js';
import { DEFAULT_RETRY_POLICY } from '../../models/retry.js';
import type { ModelRequest } from '../../models/types.js';
import type { CellOutcome } from '../run-store-common.js';
import type { ProviderLimits } from '../runner-types.js';
import type { PgClient, PoolClient } from './pg-client.js';

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
 *   Reservations count while the cell's lease is live, so a killed worker's reservations
 *   lapse with its leases. A claim of a cell whose lease lapsed keeps the reservation on it
 *   (the earlier holder's call may still be in flight: a lease also lapses when its holder
 *   merely could not renew it) and the new holder's own reservation adds to it; writing the
 *   result or giving the cell back clears it.
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
  readonly client: PgClient;
  decodeAll(jsons: readonly string[]): Promise<ModelRequest[]>;
  writeOutcomes(items: ReadonlyArray<{ key: string; outcome: CellOutcome }>, spend?: ReadonlyMap<string, number>): Promise<boolean[]>;
}

export class SharedWork {
  /** Run locks held, each on its own connection. */
  private readonly runLocks = new Map<string, PoolClient>();

  constructor(private readonly store: SharedWorkStore) {}

  private get client() {
    return this.store.client;
  }

  /** The first row a statement answers with. */
  private async firstRow<T>(sql: string, params: readonly unknown[]): Promise<T | undefined> {
    return (await this.client.query(sql, params)).rows[0] as T | undefined;
  }

  /** Records what workers need to know about a run (never secrets: limits and budget only). */
  async setSettings(runId: string, settings: RunSettings): Promise<void> {
    await this.client.query('UPDATE runs SET settings = $1 WHERE id = $2', [JSON.stringify(settings), runId]);
  }

  async settingsOf(runId: string): Promise<RunSettings> {
    const row = await this.firstRow<{ settings: string | null }>('SELECT settings FROM runs WHERE id = $1', [runId]);
    return row?.settings ? (JSON.parse(row.settings) as RunSettings) : {};
  }

  /**
   * Claims up to `max` claimable cells: a whole prefix group when the first claimable
   * cell has one, else cells without a group. `runId` restricts the claim to one run.
   */
  async claim(owner: string, options: { max: number; leaseMs: number; runId?: string | null; maxOpenAttempts?: number }): Promise<ClaimedCell[]> {
    if (!(options.max >= 1)) throw new InvalidArgumentError('max', 'must be at least 1');
    const runFilter = `EXISTS (SELECT 1 FROM run_cells rc JOIN runs r ON r.id = rc.run_id
                        WHERE rc.key = c.key AND r.status = 'running' AND ($2::text IS NULL OR r.id = $2))`;
    const claimable = `c.status = 'pending' AND (c.lease_until IS NULL OR c.lease_until < now()) AND ${runFilter}`;
    const maxOpen = Math.max(1, Math.floor(options.maxOpenAttempts ?? DEFAULT_MAX_OPEN_ATTEMPTS));
    // One statement (one round trip): a cell whose calls kept ending without a written outcome
    // (killed workers, results the database refused even as a failure) is failed instead of
    // being called once more (`exhausted`); the claim takes only the others.
    const claimed = await this.client.query(
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
         lease_run = (SELECT rc.run_id FROM run_cells rc JOIN runs r ON r.id = rc.run_id
                      WHERE rc.key = cells.key AND r.status = 'running' AND ($2::text IS NULL OR r.id = $2)
                      ORDER BY r.started_at, r.id LIMIT 1)
       FROM picked WHERE cells.key = picked.key
       RETURNING cells.key, cells.request, cells.model, cells.prefix_group, cells.lease_run`,
      [owner, options.runId ?? null, Math.floor(options.max), options.leaseMs, maxOpen],
    );
    const rows = claimed.rows as Array<{ key: string; request: string; model: string; prefix_group: string | null; lease_run: string }>;
    rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const requests = await this.store.decodeAll(rows.map((row) => row.request));
    return rows.map((row, index) => ({ key: row.key, runId: row.lease_run, model: row.model, group: row.prefix_group, request: requests[index]! }));
  }

  /**
   * Extends the owner's leases on the cells it holds in memory; returns how many it still
   * holds. Only those: a claim whose answer was lost with the connection leased cells the
   * worker never saw, and those must lapse back to the pool, not be renewed forever.
   */
  async renew(owner: string, leaseMs: number, keys: readonly string[]): Promise<number> {
    if (keys.length === 0) return 0;
    return (
      await this.client.query(
        "UPDATE cells SET lease_until = now() + make_interval(secs => $2::double precision / 1000) WHERE lease_owner = $1 AND status = 'pending' AND key = ANY($3::text[])",
        [owner, leaseMs, [...keys]],
      )
    ).rowCount;
  }

  /**
   * Gives cells back to the pool at once (a graceful stop; a killed worker's leases lapse instead).
   * `cut`: their calls were sent and then cancelled by the stop — the attempt stays counted, but
   * no longer counts toward the unsettled attempts that fail a cell.
   */
  async release(owner: string, keys?: readonly string[], options: { cut?: boolean; uncount?: boolean } = {}): Promise<void> {
    const clear = 'lease_owner = NULL, lease_until = NULL, lease_run = NULL, lease_reserved_usd = 0';
    if (keys === undefined) {
      await this.client.query(`UPDATE cells SET ${clear} WHERE lease_owner = $1`, [owner]);
      return;
    }
    if (keys.length === 0) return;
    const settle = options.cut === true ? ', open_attempts = greatest(open_attempts - 1, 0)' : '';
    // `uncount`: the attempt was counted but the call never sent (stopped while waiting for a slot).
    const uncount = options.uncount === true ? ', attempts = greatest(attempts - 1, 0)' : '';
    await this.client.query(`UPDATE cells SET ${clear}${settle}${uncount} WHERE lease_owner = $1 AND key = ANY($2::text[])`, [owner, [...keys]]);
  }

  /**
   * Reserves a call's worst-case cost against the run's budget; false when it would pass it.
   * One statement: the run's row is locked for the sum (reservations serialize per run). The
   * reservation adds to what the cell carries already: a call of an earlier holder whose lease
   * lapsed may still be in flight, and its reservation stays until the cell is written.
   */
  async reserve(owner: string, key: string, runId: string, usd: number, maxUsd: number): Promise<boolean> {
    const update = await this.client.query(
      `WITH locked AS (SELECT spent_usd FROM runs WHERE id = $1 FOR UPDATE)
       UPDATE cells SET lease_reserved_usd = lease_reserved_usd + $3 WHERE key = $2 AND lease_owner = $4 AND
         (SELECT spent_usd FROM locked)
         + (SELECT coalesce(sum(lease_reserved_usd), 0) FROM cells WHERE lease_run = $1 AND lease_until > now())
         + $3 <= $5`,
      [runId, key, usd, owner, maxUsd],
    );
    return update.rowCount > 0;
  }

  /** Spend so far of a run (every call's cost, whoever made it). */
  async spentOf(runId: string): Promise<number> {
    return Number((await this.firstRow<{ spent_usd: unknown }>('SELECT spent_usd FROM runs WHERE id = $1', [runId]))?.spent_usd ?? 0);
  }

  /**
   * Writes claimed cells' outcomes and adds their costs to each run's spend in one statement (the
   * work loop's group commit; a cost counts even when another worker's answer already stands: the
   * call was paid for). False for a cell that was already done.
   */
  async recordMany(items: ReadonlyArray<{ key: string; runId: string; outcome: CellOutcome }>): Promise<boolean[]> {
    if (items.length === 0) return [];
    // Only runs with a cost to add: a spend update locks the run's row until the statement commits,
    // and every worker's results would queue on it for nothing (free or unpriced calls).
    const spend = new Map<string, number>();
    for (const item of items) {
      const usd = item.outcome.costUsd ?? 0;
      if (usd !== 0) spend.set(item.runId, (spend.get(item.runId) ?? 0) + usd);
    }
    return this.store.writeOutcomes(items, spend);
  }

  /**
   * Takes `amount` from a shared bucket refilled at `perMinute` (capacity: 10 s of rate,
   * at least 1; a take larger than the capacity waits for a full bucket, as TokenBucket).
   * Returns 0 when taken, else the milliseconds to wait before trying again.
   */
  async takeRate(name: string, perMinute: number, amount: number): Promise<number> {
    const capacity = Math.max(1, perMinute / 6);
    const perMs = perMinute / 60_000;
    const need = Math.min(amount, capacity);
    // One statement: a missing bucket is created full and taken from; else it is refilled by the server clock and taken from.
    const update = await this.client.query(
      `WITH created AS (
         INSERT INTO rate_buckets (name, level, updated_at) VALUES ($1, CASE WHEN $2::double precision >= $4::double precision THEN $2::double precision - $5::double precision ELSE $2::double precision END, clock_timestamp())
         ON CONFLICT (name) DO NOTHING RETURNING $2::double precision AS lvl
       ), current AS (SELECT level, updated_at FROM rate_buckets WHERE name = $1 FOR UPDATE),
       x AS (SELECT least($2::double precision, level + extract(epoch FROM clock_timestamp() - updated_at) * 1000 * $3) AS lvl, clock_timestamp() AS t FROM current),
       taken AS (UPDATE rate_buckets b SET level = CASE WHEN x.lvl >= $4::double precision THEN x.lvl - $5::double precision ELSE x.lvl END, updated_at = x.t FROM x WHERE b.name = $1)
       SELECT coalesce((SELECT lvl FROM created), (SELECT lvl FROM x), 0) AS before`,
      [name, capacity, perMs, need, amount],
    );
    const before = Number(update.rows[0]?.before ?? 0);
    return before >= need ? 0 : Math.ceil((need - before) / perMs);
  }

  /** Ends a running run for everyone (budget or fatal burst): no worker claims its cells any more. */
  async endRun(runId: string, status: 'stopped' | 'failed', message: string): Promise<void> {
    const now = new Date().toISOString();
    await this.client.query(
      "UPDATE runs SET status = $2, updated_at = $3, ended_at = $3, summary = coalesce(summary, $4) WHERE id = $1 AND status = 'running'",
      [runId, status, now, JSON.stringify({ runId, status, stopReason: status === 'stopped' ? 'budget' : 'fatal', stopMessage: message })],
    );
  }

  /** Cells of a run still to do: pending ones, and how many of those a live lease holds. */
  async openWork(runId: string): Promise<{ pending: number; leased: number }> {
    return (await this.firstRow<{ pending: number; leased: number }>(
      `SELECT count(*)::int AS pending, count(*) FILTER (WHERE c.lease_until > now())::int AS leased
       FROM cells c WHERE c.status = 'pending' AND c.key IN (SELECT key FROM run_cells WHERE run_id = $1)`,
      [runId],
    ))!;
  }

  /**
   * Pending cells of running runs (or of one run), claimable now or not: cells a dead
   * worker still holds come back when its leases lapse, so a worker waiting to go idle
   * keeps waiting while any exist.
   */
  async pendingWork(runId?: string | null): Promise<number> {
    const row = await this.firstRow<{ n: number }>(
      `SELECT count(*)::int AS n FROM cells c WHERE c.status = 'pending' AND EXISTS (
         SELECT 1 FROM run_cells rc JOIN runs r ON r.id = rc.run_id WHERE rc.key = c.key AND r.status = 'running' AND ($1::text IS NULL OR r.id = $1))`,
      [runId ?? null],
    );
    return row!.n;
  }

  /** Puts cells of a run back to pending so that workers take them (a resume re-running failed/empty cells). */
  async reopen(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.client.query("UPDATE cells SET status = 'pending' WHERE key = ANY($1::text[]) AND status IN ('failed', 'empty')", [[...keys]]);
    await this.client.query("SELECT pg_notify('echolens_work', 'reopened')");
  }

  /**
   * Calls `onWork` whenever a process announces claimable work (NOTIFY on `echolens_work`),
   * on a connection of its own; a lost connection listens again after a pause. Returns the
   * function that stops listening.
   */
  listen(onWork: () => void): () => Promise<void> {
    let stopped = false;
    let connection: PoolClient | undefined;
    let retry: NodeJS.Timeout | undefined;
    const connect = async () => {
      if (stopped) return;
      try {
        const c = await this.client.dedicated();
        c.on('notification', () => onWork());
        c.on('error', () => {
          if (connection !== c) return;
          connection = undefined;
          c.release(new Error('listen connection lost'));
          if (!stopped) retry = setTimeout(() => void connect(), 1_000);
        });
        await c.query('LISTEN echolens_work');
        if (stopped) {
          c.release();
          return;
        }
        connection = c;
        onWork(); // work announced while this was not listening
      } catch {
        if (!stopped) retry = setTimeout(() => void connect(), 1_000);
      }
      retry?.unref();
    };
    void connect();
    return async () => {
      stopped = true;
      if (retry) clearTimeout(retry);
      const c = connection;
      connection = undefined;
      if (c === undefined) return;
      try {
        await c.query('UNLISTEN *');
        c.release();
      } catch (error) {
        c.release(error as Error);
      }
    };
  }

  /**
   * The run lock: one process drives (registers, finalizes) a run at a time, like the
   * SQLite store's lock file. A session advisory lock, so a killed process's lock ends
   * with its connection. Workers never take it.
   */
  async tryRunLock(runId: string): Promise<boolean> {
    if (this.runLocks.has(runId)) return false;
    // A session lock lives on one connection: the lock holds that connection out of the pool until released.
    const connection = await this.client.dedicated();
    let ok = false;
    try {
      ok = (await connection.query("SELECT pg_try_advisory_lock(hashtextextended('echolens-run:' || $1, 0)) AS ok", [runId])).rows[0]?.ok === true;
    } finally {
      if (ok) this.runLocks.set(runId, connection);
      else connection.release();
    }
    return ok;
  }

  async releaseRunLock(runId: string): Promise<void> {
    const connection = this.runLocks.get(runId);
    if (connection === undefined) return;
    this.runLocks.delete(runId);
    let broken: Error | undefined;
    try {
      await connection.query("SELECT pg_advisory_unlock(hashtextextended('echolens-run:' || $1, 0))", [runId]);
    } catch (error) {
      broken = error as Error; // the connection is gone, and the lock with it
    } finally {
      connection.release(broken);
    }
  }
}
