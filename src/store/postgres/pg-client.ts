import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
import { ConfigError } from '../../core/errors.js';
import { isMissingPackage, missingPackageMessage } from '../../models/optional-packages.js';

/**
 * An asynchronous PostgreSQL connection pool for the store (`pg.Pool`): no call ever
 * holds the event loop, so model responses, lease renewals and Ctrl-C go on while a
 * statement travels to a distant server.
 *
 * Transactions: `transaction(fn)` takes one connection of the pool for itself and
 * carries it in an AsyncLocalStorage, so every store call made inside `fn` (in its
 * async context) runs on that connection and joins the transaction; a nested call
 * becomes a savepoint. Calls outside any transaction take any free connection.
 *
 * Lost connections (a server restart, the network) are retried with backoff for
 * `retryForMs` outside a transaction, so a worker rides out a database restart; inside
 * a transaction the error surfaces (the server rolled the transaction back). `close()`
 * ends waiting retries at once.
 */

export interface Statement {
  sql: string;
  params?: readonly unknown[];
}

export interface StatementResult {
  rows: Array<Record<string, unknown>>;
  rowCount: number;
}

export class PgError extends Error {
  readonly code: string | undefined;
  constructor(message: string, code: string | undefined) {
    super(message);
    this.name = 'PgError';
    this.code = code;
  }
}

export interface PgClientOptions {
  /** How long lost connections are retried outside a transaction (default 60 s). */
  retryForMs?: number;
  /** Connections in the pool (default 10). */
  max?: number;
}

/** Driver and server codes of a connection that is gone or refused (the statement itself was fine). */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);

export function isConnectionLost(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
  return /Connection terminated|connection is closed|Client has encountered a connection error|not queryable|terminating connection|timeout exceeded when trying to connect/i.test(
    error.message,
  );
}

/**
 * The parts of the `pg` driver the store uses, typed here so that echolens's published types
 * do not name the optional package (`@types/pg` is a development dependency only).
 */
interface PgResult {
  rows: Array<Record<string, unknown>>;
  rowCount: number | null;
}

/** A connection taken from the pool; `release(error)` discards a broken one. */
export interface PoolClient {
  query(sql: string, params?: unknown[]): Promise<PgResult>;
  release(error?: Error | boolean): void;
  on(event: 'notification' | 'error', listener: (...args: unknown[]) => void): unknown;
}

interface Pool {
  query(sql: string, params?: unknown[]): Promise<PgResult>;
  connect(): Promise<PoolClient>;
  end(): Promise<void>;
  on(event: 'error', listener: (...args: unknown[]) => void): unknown;
}

interface PgModule {
  Pool: new (config: Record<string, unknown>) => Pool;
}

let pgModule: PgModule | undefined;

/** The `pg` driver: an optional dependency, only a postgres:// store needs it. */
export function loadPg(): PgModule {
  if (pgModule !== undefined) return pgModule;
  const require = createRequire(import.meta.url);
  try {
    pgModule = require('pg') as PgModule;
  } catch (error) {
    if (isMissingPackage(error, 'pg')) throw new ConfigError(missingPackageMessage('pg', 'a postgres:// run store'), { field: 'db' });
    throw error;
  }
  return pgModule;
}

interface TxState {
  client: PoolClient;
  depth: number;
  /** Statements of one transaction run one after another (the connection is one). */
  chain: Promise<unknown>;
}

interface Shared {
  pool: Pool;
  tx: AsyncLocalStorage<TxState>;
  retryForMs: number;
  closed: boolean;
  wakeClosed: Set<() => void>;
}

export class PgClient {
  private readonly shared: Shared;
  /** Waited for by every call (the schema check of a store being opened); null for the raw view. */
  private gate: Promise<void> | null = null;

  constructor(url: string, options: PgClientOptions = {}, shared?: Shared) {
    if (shared !== undefined) {
      this.shared = shared;
      return;
    }
    const { Pool: PoolClass } = loadPg();
    const pool = new PoolClass({
      connectionString: url,
      application_name: 'echolens',
      max: options.max ?? 10,
      idleTimeoutMillis: 30_000,
      connectionTimeoutMillis: 15_000,
      // The store's tables live in the `echolens` schema; set on every connection without a round trip.
      options: '-c search_path=echolens,public',
    });
    // An idle connection cut by a server restart: the next query takes a fresh one.
    pool.on('error', () => {});
    this.shared = { pool, tx: new AsyncLocalStorage(), retryForMs: options.retryForMs ?? 60_000, closed: false, wakeClosed: new Set() };
  }

  /** A view of the same pool that does not wait for the gate (the schema check itself uses it). */
  raw(): PgClient {
    return new PgClient('', {}, this.shared);
  }

  /** Every later call waits for `ready` first (and fails with its error). */
  setGate(ready: Promise<void>): void {
    this.gate = ready;
    ready.catch(() => {});
  }

  get inTransaction(): boolean {
    return this.shared.tx.getStore() !== undefined;
  }

  get closed(): boolean {
    return this.shared.closed;
  }

  async query(sql: string, params: readonly unknown[] = []): Promise<StatementResult> {
    return (await this.batch([{ sql, params }], false))[0]!;
  }

  /**
   * Runs statements; `atomic` (default): in order, all or none, in one transaction unless one is
   * open. Not atomic: independent statements, sent at once outside a transaction.
   */
  async batch(statements: readonly Statement[], atomic = true): Promise<StatementResult[]> {
    if (statements.length === 0) return [];
    if (this.gate !== null) await this.gate;
    const tx = this.shared.tx.getStore();
    if (tx !== undefined) return this.onTx(tx, (client) => runAll(client, statements));
    if (atomic && statements.length > 1) return this.transaction(() => this.batch(statements, false));
    // Independent statements (reads) go out at once on several connections: one round trip, not one each.
    return this.retrying(() => Promise.all(statements.map(async (s) => toResult(await this.shared.pool.query(s.sql, [...(s.params ?? [])])))));
  }

  /** Runs `fn` in one transaction on one connection; store calls inside it join; nested calls are savepoints. */
  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.gate !== null) await this.gate;
    const outer = this.shared.tx.getStore();
    const savepoint = outer === undefined ? undefined : `echolens_sp${outer.depth}`;
    const client =
      outer?.client ??
      (await this.retrying(async () => {
        const c = await this.shared.pool.connect();
        try {
          await c.query('BEGIN');
        } catch (error) {
          c.release(error as Error);
          throw error;
        }
        return c;
      }));
    // A savepoint's statements queue behind the outer transaction's; a transaction's own go straight to its connection.
    const control = (sql: string) => (outer === undefined ? client.query(sql) : this.onTx(outer, (c) => c.query(sql)));
    if (savepoint !== undefined) await control(`SAVEPOINT ${savepoint}`);
    const state: TxState = { client, depth: (outer?.depth ?? 0) + 1, chain: Promise.resolve() };
    let broken: Error | undefined;
    try {
      const result = await this.shared.tx.run(state, fn);
      await state.chain.catch(() => {});
      await control(savepoint === undefined ? 'COMMIT' : `RELEASE SAVEPOINT ${savepoint}`);
      return result;
    } catch (error) {
      await state.chain.catch(() => {});
      try {
        await control(savepoint === undefined ? 'ROLLBACK' : `ROLLBACK TO SAVEPOINT ${savepoint}`);
      } catch (rollbackError) {
        broken = rollbackError as Error; // the connection is gone: the server rolled back already
      }
      if (isConnectionLost(error)) broken ??= error as Error;
      throw error;
    } finally {
      // A savepoint's connection belongs to the outer transaction.
      if (outer === undefined) client.release(broken);
    }
  }

  /** A step on the transaction's connection, after the steps issued before it. */
  private onTx<T>(tx: TxState, step: (client: PoolClient) => Promise<T>): Promise<T> {
    const next = tx.chain.catch(() => {}).then(() => step(tx.client));
    tx.chain = next;
    return next;
  }

  private async retrying<T>(attempt: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.shared.retryForMs;
    let wait = 100;
    for (;;) {
      if (this.shared.closed) throw new PgError('the PostgreSQL store is closed', undefined);
      try {
        return await attempt();
      } catch (error) {
        if (!isConnectionLost(error) || Date.now() >= deadline || this.shared.closed) throw error;
        await this.pause(wait);
        wait = Math.min(wait * 2, 2_000);
      }
    }
  }

  /** Waits between retries; `close()` ends the wait at once. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.shared.wakeClosed.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.shared.wakeClosed.add(done);
    });
  }

  /** A connection of its own, outside the pool's rotation (LISTEN); the caller releases it. */
  async dedicated(): Promise<PoolClient> {
    if (this.gate !== null) await this.gate;
    return this.retrying(() => this.shared.pool.connect());
  }

  async close(): Promise<void> {
    if (this.shared.closed) return;
    this.shared.closed = true;
    for (const wake of [...this.shared.wakeClosed]) wake();
    await this.shared.pool.end().catch(() => {});
  }
}

async function runAll(client: PoolClient, statements: readonly Statement[]): Promise<StatementResult[]> {
  const out: StatementResult[] = [];
  for (const s of statements) out.push(toResult(await client.query(s.sql, [...(s.params ?? [])])));
  return out;
}

function toResult(result: { rows: Array<Record<string, unknown>>; rowCount: number | null }): StatementResult {
  return { rows: result.rows, rowCount: result.rowCount ?? 0 };
}
