import { createRequire } from 'node:module';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { ConfigError } from '../../core/errors.js';
import { isMissingPackage, missingPackageMessage } from '../../models/optional-packages.js';

/**
 * A synchronous PostgreSQL connection. The store interface is synchronous (every
 * caller of the SQLite store relies on that), while the `pg` driver is not. The
 * driver therefore runs in a worker thread holding one connection; the caller's
 * thread posts a batch of statements and blocks on `Atomics.wait` until the worker
 * stores the reply and notifies (the technique of the `synckit` package, done here
 * in ~100 lines so that the worker needs no file of its own: its source is the
 * string below, run with `eval`, which works the same from TypeScript sources
 * under vitest and from the built `dist/`).
 *
 * One batch is one round trip; `atomic` batches run inside BEGIN/COMMIT unless a
 * caller's transaction is open. Lost connections (server restart, network) are
 * retried with backoff for `retryForMs` when no caller transaction is open, so a
 * worker rides out a database restart; inside a transaction the error surfaces.
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

const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
let Client = null;
let loadError = null;
try { Client = require(workerData.pgPath).Client; } catch (error) { loadError = error; }
const { port, flag, url, retryForMs } = workerData;
let client = null;
let inTransaction = false;
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006']);
function lost(error) {
  if (!error) return false;
  if (CONNECTION_CODES.has(error.code)) return true;
  const m = String(error.message || '');
  return /Connection terminated|connection is closed|Client has encountered a connection error|not queryable|terminating connection/i.test(m);
}
async function connect() {
  if (loadError) throw loadError;
  const c = new Client({ connectionString: url, application_name: 'echolens' });
  c.on('error', () => { if (client === c) client = null; });
  await c.connect();
  await c.query("SET search_path TO echolens, public");
  client = c;
}
async function runBatch(msg) {
  if (!client) await connect();
  const out = [];
  const wrap = msg.atomic && !inTransaction && msg.statements.length > 1;
  if (wrap) await client.query('BEGIN');
  try {
    for (const s of msg.statements) {
      const r = await client.query(s.sql, s.params || []);
      out.push({ rows: r.rows, rowCount: r.rowCount == null ? 0 : r.rowCount });
    }
    if (wrap) await client.query('COMMIT');
  } catch (error) {
    if (wrap && client) { try { await client.query('ROLLBACK'); } catch {} }
    throw error;
  }
  return out;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function handle(msg) {
  if (msg.kind === 'close') { if (client) { try { await client.end(); } catch {} client = null; } return null; }
  if (msg.kind === 'begin' || msg.kind === 'commit' || msg.kind === 'rollback') {
    if (!client) { if (msg.kind !== 'begin') throw Object.assign(new Error('connection lost inside a transaction'), { code: '08006' }); await connect(); }
    await client.query(msg.sql);
    inTransaction = msg.kind === 'begin' ? true : msg.depth > 0;
    return [];
  }
  const deadline = Date.now() + retryForMs;
  let wait = 100;
  for (;;) {
    try {
      return await runBatch(msg);
    } catch (error) {
      if (!lost(error) || inTransaction || Date.now() >= deadline) throw error;
      if (client) { try { await client.end(); } catch {} }
      client = null;
      await sleep(wait);
      wait = Math.min(wait * 2, 2000);
    }
  }
}
port.on('message', async (msg) => {
  let reply;
  try { reply = { ok: await handle(msg) }; }
  catch (error) { reply = { error: { message: String(error && error.message || error), code: error && error.code } }; }
  port.postMessage(reply);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
});
`;

export interface SyncClientOptions {
  /** How long lost connections are retried outside a transaction (default 60 s). */
  retryForMs?: number;
}

export class SyncPgClient {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly flag: Int32Array;
  private depth = 0;
  private closed = false;
  private readonly timeoutMs: number;

  constructor(url: string, options: SyncClientOptions = {}) {
    this.timeoutMs = (options.retryForMs ?? 60_000) + 30 * 60_000;
    const require = createRequire(import.meta.url);
    // `pg` is an optional dependency: only a postgres:// store needs it.
    let pgPath: string;
    try {
      pgPath = require.resolve('pg');
    } catch (error) {
      if (isMissingPackage(error, 'pg')) throw new ConfigError(missingPackageMessage('pg', 'a postgres:// run store'), { field: 'db' });
      throw error;
    }
    const { port1, port2 } = new MessageChannel();
    this.flag = new Int32Array(new SharedArrayBuffer(4));
    this.port = port1;
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { pgPath, port: port2, flag: this.flag, url, retryForMs: options.retryForMs ?? 60_000 },
      transferList: [port2],
    });
    // The thread never keeps the process alive: an unclosed store does not hang a CLI.
    this.worker.unref();
    this.port.unref();
  }

  private call(message: Record<string, unknown>): StatementResult[] {
    if (this.closed) throw new PgError('the PostgreSQL store is closed', undefined);
    Atomics.store(this.flag, 0, 0);
    this.port.postMessage(message);
    // A statement may legitimately run for minutes (a large plan); a thread that never answers is an error.
    if (Atomics.wait(this.flag, 0, 0, this.timeoutMs) === 'timed-out') {
      this.closed = true;
      void this.worker.terminate();
      throw new PgError(`no answer from PostgreSQL within ${Math.round(this.timeoutMs / 1000)} s; the store is closed`, undefined);
    }
    const received = receiveMessageOnPort(this.port);
    if (received === undefined) throw new PgError('the PostgreSQL worker thread gave no answer', undefined);
    const reply = received.message as { ok?: StatementResult[]; error?: { message: string; code?: string } };
    if (reply.error) throw new PgError(reply.error.message, reply.error.code);
    return reply.ok ?? [];
  }

  /** Runs statements in order on the store's connection; `atomic`: all or none. */
  batch(statements: readonly Statement[], atomic = true): StatementResult[] {
    if (statements.length === 0) return [];
    return this.call({ kind: 'batch', statements: statements.map((s) => ({ sql: s.sql, params: s.params ?? [] })), atomic });
  }

  query(sql: string, params: readonly unknown[] = []): StatementResult {
    return this.batch([{ sql, params }])[0]!;
  }

  get inTransaction(): boolean {
    return this.depth > 0;
  }

  /** Runs `fn` in one transaction; nested calls become savepoints. */
  transaction<T>(fn: () => T): T {
    const depth = this.depth;
    const name = `echolens_sp${depth}`;
    this.call({ kind: 'begin', sql: depth === 0 ? 'BEGIN' : `SAVEPOINT ${name}`, depth: depth + 1 });
    this.depth += 1;
    try {
      const result = fn();
      if (result instanceof Promise) throw new TypeError('a store transaction must be synchronous');
      this.depth -= 1;
      this.call({ kind: 'commit', sql: depth === 0 ? 'COMMIT' : `RELEASE SAVEPOINT ${name}`, depth });
      return result;
    } catch (error) {
      if (this.depth > depth) this.depth = depth;
      try {
        this.call({ kind: 'rollback', sql: depth === 0 ? 'ROLLBACK' : `ROLLBACK TO SAVEPOINT ${name}`, depth });
      } catch {
        // The connection is gone: the server rolled back already.
      }
      throw error;
    }
  }

  /** Runs an asynchronous `fn` in one transaction (the connection is one, so nothing else interleaves). */
  async transactionAsync<T>(fn: () => Promise<T>): Promise<T> {
    const depth = this.depth;
    const name = `echolens_sp${depth}`;
    this.call({ kind: 'begin', sql: depth === 0 ? 'BEGIN' : `SAVEPOINT ${name}`, depth: depth + 1 });
    this.depth += 1;
    try {
      const result = await fn();
      this.depth -= 1;
      this.call({ kind: 'commit', sql: depth === 0 ? 'COMMIT' : `RELEASE SAVEPOINT ${name}`, depth });
      return result;
    } catch (error) {
      if (this.depth > depth) this.depth = depth;
      try {
        this.call({ kind: 'rollback', sql: depth === 0 ? 'ROLLBACK' : `ROLLBACK TO SAVEPOINT ${name}`, depth });
      } catch {
        // The connection is gone: the server rolled back already.
      }
      throw error;
    }
  }

  close(): void {
    if (this.closed) return;
    try {
      this.call({ kind: 'close' });
    } catch {
      // Closing a broken connection.
    }
    this.closed = true;
    void this.worker.terminate();
  }
}
