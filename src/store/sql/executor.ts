import { AsyncLocalStorage } from 'node:async_hooks';
import type Database from 'better-sqlite3';
import { InvalidArgumentError } from '../../core/errors.js';
import type { PgClient } from '../postgres/pg-client.js';
import { numberPlaceholders, postgresDialect, type SqlDialect, sqliteDialect } from './dialect.js';

/**
 * Runs the store's SQL (written once, with `?` placeholders; dialect.ts) on either database,
 * asynchronously: over better-sqlite3 (synchronous underneath, one connection) or over a
 * `pg.Pool` (pg-client.ts). `transaction(fn)` runs `fn` in one transaction; every call made
 * inside it, in its async context, joins it (a nested call joins too, or is a savepoint on
 * PostgreSQL). Outside a transaction, a SQLite call waits while another caller's transaction
 * is open (its statements would otherwise land in it); a PostgreSQL call takes any free
 * connection.
 */
export interface SqlExecutor {
  readonly dialect: SqlDialect;
  /** The rows as objects (column name → value). */
  all<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** The first row, or undefined. */
  get<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T | undefined>;
  /**
   * Each row as an array of column values, in the SELECT's order (no object per row), mapped as it
   * is read: on SQLite no array of every row is held while they are mapped (at 28,800 cells that
   * array outlived several young-generation collections, each copying it; issue #44).
   */
  raw<T>(sql: string, params: readonly unknown[], map: (row: unknown[]) => T): Promise<T[]>;
  /** A statement that returns no rows; the number of rows it changed. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
  transaction<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * A value that changes whenever the database may have changed (any connection's commit, this
   * one's writes), for caching reads; null when there is no cheap one (nothing is cached then).
   */
  changeStamp(): string | null;
}

/** Prepared statements (or PostgreSQL texts) kept per executor. */
const MAX_STATEMENTS = 500;

/** better-sqlite3 behind the asynchronous interface; statements are prepared once and kept. */
export class SqliteExecutor implements SqlExecutor {
  readonly dialect = sqliteDialect;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly rawStatements = new Map<string, Database.Statement>();
  private readonly txContext = new AsyncLocalStorage<symbol>();
  private openTx: Promise<void> | null = null;
  private txToken: symbol | null = null;
  private totalChanges: Database.Statement | undefined;

  constructor(readonly db: Database.Database) {}

  /** The prepared statement of this text (kept for the connection's life). */
  prepare(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      // Texts vary only with a query's label filters; a bound keeps an odd caller from growing it.
      if (this.statements.size >= MAX_STATEMENTS) this.statements.clear();
      this.statements.set(sql, statement);
    }
    return statement;
  }

  async all<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    while (this.blocked()) await this.openTx;
    return this.prepare(sql).all(...params) as T[];
  }

  async get<T>(sql: string, params: readonly unknown[] = []): Promise<T | undefined> {
    while (this.blocked()) await this.openTx;
    return this.prepare(sql).get(...params) as T | undefined;
  }

  async raw<T>(sql: string, params: readonly unknown[], map: (row: unknown[]) => T): Promise<T[]> {
    while (this.blocked()) await this.openTx;
    let statement = this.rawStatements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql).raw(true);
      if (this.rawStatements.size >= MAX_STATEMENTS) this.rawStatements.clear();
      this.rawStatements.set(sql, statement);
    }
    const out: T[] = [];
    for (const row of statement.iterate(...params)) out.push(map(row as unknown[]));
    return out;
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<number> {
    while (this.blocked()) await this.openTx;
    return this.prepare(sql).run(...params).changes;
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    // A call made inside the transaction's own async context joins it.
    if (this.txToken !== null && this.txContext.getStore() === this.txToken) return fn();
    while (this.blocked()) await this.openTx;
    const token = Symbol('transaction');
    let release!: () => void;
    this.openTx = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.txToken = token;
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const result = await this.txContext.run(token, fn);
      this.db.exec('COMMIT');
      return result;
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw error;
    } finally {
      this.openTx = null;
      this.txToken = null;
      release();
    }
  }

  /**
   * Another caller's transaction is open: the connection is one, so a statement issued between
   * that transaction's awaits would land inside it. Every call checks this in the same step
   * as it runs its statement (a check followed by an await could be overtaken).
   */
  private blocked(): boolean {
    return this.openTx !== null && this.txContext.getStore() !== this.txToken;
  }

  /** Resolves when no other caller's transaction is open. */
  async idle(): Promise<void> {
    while (this.blocked()) await this.openTx;
  }

  changeStamp(): string | null {
    // Inside a transaction nothing is kept: its writes may yet be rolled back.
    if (this.db.inTransaction) return null;
    this.totalChanges ??= this.db.prepare('SELECT total_changes()').pluck();
    return `${this.db.pragma('data_version', { simple: true })}:${this.totalChanges.get()}`;
  }
}

/** A `pg.Pool` (through PgClient: retries, transactions carried in the async context) behind the interface. */
export class PgExecutor implements SqlExecutor {
  readonly dialect = postgresDialect;
  private readonly texts = new Map<string, string>();

  constructor(
    readonly client: PgClient,
    private readonly readonly: boolean,
    private readonly location: string,
  ) {}

  /** The statement's PostgreSQL text (numbered placeholders), refused on a read-only store when it writes. */
  private text(sql: string): string {
    let text = this.texts.get(sql);
    if (text === undefined) {
      text = numberPlaceholders(sql);
      if (this.texts.size < MAX_STATEMENTS) this.texts.set(sql, text);
    }
    if (this.readonly && /\b(INSERT|UPDATE|DELETE|CREATE|ALTER|DROP)\b/i.test(text)) {
      throw new InvalidArgumentError('store', `${this.location} was opened read-only`);
    }
    return text;
  }

  async all<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return (await this.client.query(this.text(sql), params)).rows as T[];
  }

  async get<T>(sql: string, params: readonly unknown[] = []): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0];
  }

  async raw<T>(sql: string, params: readonly unknown[], map: (row: unknown[]) => T): Promise<T[]> {
    // Column names of a store query are distinct, and a row object keeps the SELECT's order.
    return (await this.client.query(this.text(sql), params)).rows.map((row) => map(Object.values(row)));
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<number> {
    return (await this.client.query(this.text(sql), params)).rowCount;
  }

  transaction<T>(fn: () => Promise<T>): Promise<T> {
    return this.client.transaction(fn);
  }

  changeStamp(): null {
    return null;
  }
}
