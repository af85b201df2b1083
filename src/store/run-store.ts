import { AsyncLocalStorage } from 'node:async_hooks';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import { checkStorePath } from './store-path.js';
import { acquireStoreLock, releaseStoreLock } from './store-lock.js';
import { canonicalJson } from '../core/canonical-json.js';
import { InputError, InvalidArgumentError } from '../core/errors.js';
import type { ModelRequest } from '../models/types.js';
import { BatchJobs } from './batch-jobs.js';
import { BlobCache, decodeRequest, encodeRequest } from './blobs.js';
import { PgRunStore } from './postgres/pg-store.js';
import { readCellResults, runInfoWithLazyCounts } from './read-cells.js';
import {
  type BatchJobLedger,
  type CellOutcome,
  type CellQuery,
  type CellRow,
  isPostgresUrl,
  newRunId,
  type OpenStoreOptions,
  RESULT_COLUMNS,
  RUN_STATUSES,
  decodeIndexRow,
  type RunCellIndexRow,
  type RunCellRecord,
  type RunCellResultRecord,
  type RunInfo,
  type RunRow,
  type RunStatus,
  resultRecord,
  rowToResult,
  scrubJsonValues,
  storedLegacyKey,
  validateManifest,
  exportRecord,
  tallyCounts,
  writeJsonLine,
  outcomeValues,
} from './run-store-common.js';
import type { RunStore as RunStoreInterface } from './run-store-common.js';

export * from './run-store-common.js';
import { noteStoreOpened, storeFaultOf } from './faults.js';
import { type CellIdentity, scrubSecrets, secretValuesFromEnv } from './keys.js';
import { requestKeys } from './request-hash.js';
import { declareStages, hasIncompleteStage, recordStage, type StageDeclaration, type StageProgress, stagesOfRun } from './run-stages.js';
import { ensureSchema, READABLE_WITHOUT_MIGRATION, readSchemaVersion, SCHEMA_VERSION } from './schema.js';
import type { CellResult, CellSpec, CellStatus, RunManifest } from './types.js';

/** Opens a store by location: a `postgres://` / `postgresql://` URL or a SQLite file path. */
/** A run store of either backend (the interface is in run-store-common.ts). */
export type RunStore = RunStoreInterface;

export const RunStore = {
  open(location: string, options?: OpenStoreOptions): RunStore {
    if (isPostgresUrl(location)) return PgRunStore.open(location, options);
    return SqliteRunStore.open(location, options);
  },
};

/**
 * The SQLite backend. Cells are stored once, keyed by the hash of their request;
 * runs link to cells with their labels. Every write is its own transaction, so a
 * result is on disk (WAL) as soon as `recordResult` returns and survives SIGKILL.
 * API keys are never stored: requests and manifests are scrubbed of credential
 * fields and of any value equal to a credential-like environment variable.
 */
export class SqliteRunStore implements RunStore {
  readonly backend = 'sqlite' as const;
  readonly file: string;
  readonly db: Database.Database;
  private readonly secrets: string[];
  private readonly plainSecrets: boolean;
  private readonly statements: ReturnType<typeof prepareStatements>;

  /** A read-only open that found no -wal/-shm beside the file: remove the ones SQLite made. */
  private tidyOnClose = false;
  /** Holds the store's write lock (released by close). */
  private locked = false;
  /** Blob hashes known to be in the store (inserted or seen by this handle). */
  private readonly knownBlobs = new Set<string>();
  private blobStatements: { get: Database.Statement; has: Database.Statement; insert: Database.Statement } | null | undefined;
  private blobCacheInstance: BlobCache | undefined;
  private readonly txContext = new AsyncLocalStorage<symbol>();
  private openTx: Promise<void> | null = null;
  /** Each run's status counts with the store state they were counted at (see `runCounts`). */
  private readonly countsCache = new Map<string, { stamp: string; counts: RunInfo['counts'] }>();
  private txToken: symbol | null = null;

  private constructor(file: string, db: Database.Database, secrets: string[]) {
    this.file = file;
    this.db = db;
    this.secrets = secrets;
    this.plainSecrets = secrets.every((secret) => JSON.stringify(secret) === `"${secret}"`);
    this.statements = prepareStatements(db);
  }

  static open(file: string, options: OpenStoreOptions = {}): SqliteRunStore {
    if (typeof file !== 'string' || file === '') throw new InvalidArgumentError('file', 'must be a store path');
    checkStorePath(file, options.readonly === true);
    let db: Database.Database;
    const sidecarsBefore = options.readonly === true && !existsSync(`${file}-wal`) && !existsSync(`${file}-shm`);
    // A new store's folder is made (`--db runs/x.db` in a fresh checkout); a reader never creates one.
    if (!options.readonly && file !== ':memory:' && !file.startsWith('file:')) mkdirSync(dirname(file), { recursive: true });
    // One writing process per store (see store-lock.ts); readers never lock.
    if (!options.readonly) acquireStoreLock(file);
    try {
      db = new Database(file, options.readonly ? { readonly: true, fileMustExist: true } : {});
    } catch (error) {
      if (!options.readonly) releaseStoreLock(file);
      throw storeFaultOf(error, file) ?? new InputError(`cannot open store: ${(error as Error).message}`, { file }, { cause: error });
    }
    try {
      if (!options.readonly) {
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = NORMAL');
      }
      db.pragma('busy_timeout = 5000');
      db.pragma('foreign_keys = ON');
      if (options.readonly) {
        // A read-only handle cannot create or migrate; it only checks.
        ensureReadable(db, file);
      } else {
        ensureSchema(db, file);
      }
    } catch (error) {
      db.close();
      if (!options.readonly) releaseStoreLock(file);
      const fault = storeFaultOf(error, file);
      if (fault) throw fault;
      if (error instanceof InputError) throw error;
      throw new InputError(`cannot use store: ${(error as Error).message}`, { file }, { cause: error });
    }
    noteStoreOpened(file);
    const store = new SqliteRunStore(file, db, secretValuesFromEnv(options.env ?? process.env));
    store.tidyOnClose = sidecarsBefore;
    store.locked = !options.readonly;
    return store;
  }

  async close(): Promise<void> {
    await this.idle();
    if (!this.db.open) return;
    this.db.close();
    if (this.locked) releaseStoreLock(this.file);
    if (this.tidyOnClose && (existsSync(`${this.file}-wal`) || existsSync(`${this.file}-shm`))) {
      // A read-only connection to a WAL database creates -wal/-shm but may not remove them.
      // A plain connection opened and closed at once does: SQLite deletes them when the last
      // connection closes, and keeps them while any other process still has the store open.
      try {
        const tidy = new Database(this.file, { fileMustExist: true });
        tidy.pragma('schema_version'); // a read, so SQLite attaches to the WAL and can drop it on close
        tidy.close();
      } catch {
        // A store in a read-only folder: nothing was created there either.
      }
    }
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    // A call made inside the transaction's own async context joins it.
    if (this.txToken !== null && this.txContext.getStore() === this.txToken) return fn();
    await this.idle();
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
      // Blobs written in the rolled-back transaction are gone again.
      this.knownBlobs.clear();
      throw error;
    } finally {
      this.openTx = null;
      this.txToken = null;
      release();
    }
  }

  /**
   * Waits while another caller's transaction is open: the connection is one, so a
   * statement issued between that transaction's awaits would otherwise land inside it.
   */
  private async idle(): Promise<void> {
    while (this.openTx !== null && this.txContext.getStore() !== this.txToken) await this.openTx;
  }

  batchJobs(): BatchJobLedger {
    return new BatchJobs(this.db, () => this.idle());
  }

  async cellIndexOfRun(runId: string): Promise<RunCellIndexRow[]> {
    await this.idle();
    const rows = this.db
      .prepare(
        `SELECT rc.key AS key, rc.labels AS labels, rc.ordinal AS ordinal, c.status AS status, c.text AS text, c.model AS model, c.tool_calls AS tool_calls
         FROM run_cells rc JOIN cells c ON c.key = rc.key WHERE rc.run_id = ? ORDER BY rc.ordinal`,
      )
      .all(runId) as RunCellIndexRow[];
    return rows.map(decodeIndexRow);
  }

  // ---- runs ----

  async createRun(manifest: RunManifest, options: { id?: string } = {}): Promise<string> {
    await this.idle();
    validateManifest(manifest);
    const id = options.id ?? newRunId();
    if (!/^[A-Za-z0-9._-]{1,128}$/.test(id)) {
      throw new InvalidArgumentError('id', `run id must be 1–128 characters of letters, digits, ".", "_" or "-", got ${JSON.stringify(id)}`);
    }
    if (this.statements.getRun.get(id)) throw new InvalidArgumentError('id', `run ${id} already exists in ${this.file}`);
    const now = new Date().toISOString();
    const manifestJson = JSON.stringify(scrubSecrets(manifest, this.secrets));
    this.statements.insertRun.run(id, manifest.experiment, manifestJson, 'running', now, now);
    return id;
  }

  async getRun(id: string): Promise<RunInfo | undefined> {
    await this.idle();
    const row = this.statements.getRun.get(id) as RunRow | undefined;
    return row ? this.runInfo(row) : undefined;
  }

  /** The run, or a typed error naming the store when it does not exist. */
  async requireRun(id: string): Promise<RunInfo> {
    await this.idle();
    const run = await this.getRun(id);
    if (!run) throw new InvalidArgumentError('runId', `no run ${JSON.stringify(id)} in ${this.file}`);
    return run;
  }

  /** All runs, newest first. */
  async listRuns(): Promise<RunInfo[]> {
    await this.idle();
    return (this.statements.listRuns.all() as RunRow[]).map((row) => this.runInfo(row));
  }

  /**
   * Deletes a run and its cell links in one transaction; cells no other run
   * links to are deleted too (cells are shared between runs by content).
   * Returns how many cells were removed.
   */
  async deleteRun(id: string): Promise<{ cellsRemoved: number }> {
    await this.idle();
    await this.requireRun(id);
    const remove = this.db.transaction(() => {
      const keys = this.db.prepare('SELECT DISTINCT key FROM run_cells WHERE run_id = ?').pluck().all(id) as string[];
      this.db.prepare('DELETE FROM run_cells WHERE run_id = ?').run(id);
      if (stagesOfRun(this.db, id).length > 0) this.db.prepare('DELETE FROM run_stages WHERE run_id = ?').run(id);
      this.db.prepare('DELETE FROM runs WHERE id = ?').run(id);
      const stillLinked = this.db.prepare('SELECT 1 FROM run_cells WHERE key = ? LIMIT 1').pluck();
      const removeCell = this.db.prepare('DELETE FROM cells WHERE key = ?');
      let removed = 0;
      for (const key of keys) {
        if (stillLinked.get(key) === undefined) removed += removeCell.run(key).changes;
      }
      if (removed > 0) this.removeUnreferencedBlobs();
      return removed;
    });
    return { cellsRemoved: remove() };
  }

  /** Deletes blobs no cell refers to, directly or through a run blob. */
  private removeUnreferencedBlobs(): void {
    if (!this.blobs()) return;
    const reference = /"\$blobs?":"([0-9a-f]{64})"/g;
    const referenced = new Set<string>();
    const runBlobs = new Set<string>();
    for (const json of this.db.prepare(`SELECT request FROM cells WHERE request LIKE '%"$blob%'`).pluck().iterate() as Iterable<string>) {
      for (const match of json.matchAll(reference)) {
        referenced.add(match[1]!);
        if (match[0].startsWith('"$blobs"')) runBlobs.add(match[1]!);
      }
    }
    const body = this.db.prepare('SELECT body FROM blobs WHERE hash = ?').pluck();
    for (const hash of runBlobs) {
      const text = body.get(hash) as string | undefined;
      if (text !== undefined) for (const match of text.matchAll(reference)) referenced.add(match[1]!);
    }
    const remove = this.db.prepare('DELETE FROM blobs WHERE hash = ?');
    for (const hash of this.db.prepare('SELECT hash FROM blobs').pluck().all() as string[]) {
      if (!referenced.has(hash)) {
        remove.run(hash);
        this.knownBlobs.delete(hash);
      }
    }
    this.blobCacheInstance = undefined;
  }

  async setRunStatus(id: string, requested: RunStatus, summary?: unknown): Promise<void> {
    await this.idle();
    if (!RUN_STATUSES.includes(requested)) throw new InvalidArgumentError('status', `unknown run status ${requested}`);
    // A run is done only when every stage it declared is (run-stages.ts); until then it stays running.
    const status = requested === 'done' && hasIncompleteStage(this.db, id) ? 'running' : requested;
    const now = new Date().toISOString();
    const ended = status === 'running' ? null : now;
    const summaryJson = summary === undefined ? null : JSON.stringify(scrubSecrets(summary, this.secrets));
    const changes = this.statements.updateRun.run(status, now, ended, summaryJson, id).changes;
    if (changes === 0) throw new InvalidArgumentError('runId', `no run ${JSON.stringify(id)} in ${this.file}`);
  }

  // ---- stages (run-stages.ts) ----

  /** Records the stages a run declares, with their planned cell counts. */
  async declareStages(runId: string, stages: readonly StageDeclaration[]): Promise<void> {
    await this.idle();
    declareStages(this.db, runId, stages);
  }

  /** Writes one stage's expected, registered and settled cell counts. */
  async recordStage(runId: string, stage: string, counts: { expected: number; registered: number; settled: number }): Promise<void> {
    await this.idle();
    recordStage(this.db, runId, stage, counts);
  }

  /** The run's stages in order (empty for runs recorded before stages were). */
  async stages(runId: string): Promise<StageProgress[]> {
    await this.idle();
    return stagesOfRun(this.db, runId);
  }

  // ---- cells ----

  /** Secret values replaced in a canonical request JSON (fields were scrubbed when it was built). */
  private scrubValues(json: string): string {
    return scrubJsonValues(json, this.secrets, this.plainSecrets);
  }

  /** Statements on the blobs table; null in a read-only handle on a store older than schema 3. */
  private blobs() {
    if (this.blobStatements === undefined) {
      const exists = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'blobs'").get() !== undefined;
      this.blobStatements = exists
        ? {
            get: this.db.prepare('SELECT body FROM blobs WHERE hash = ?').pluck(),
            has: this.db.prepare('SELECT 1 FROM blobs WHERE hash = ?').pluck(),
            insert: this.db.prepare('INSERT OR IGNORE INTO blobs (hash, body) VALUES (?, ?)'),
          }
        : null;
    }
    return this.blobStatements;
  }

  /** The decoder's view of the blobs table (parsed bodies cached across the cells one handle reads). */
  private blobCache(): BlobCache {
    this.blobCacheInstance ??= new BlobCache((hash) => {
      const body = this.blobs()?.get.get(hash) as string | undefined;
      if (body === undefined)
        throw new InputError(`a cell's request refers to blob ${hash.slice(0, 12)}…, which the store does not hold (damaged store?)`, { file: this.file });
      return body;
    });
    return this.blobCacheInstance;
  }

  /** A request column value, references expanded. */
  private decode(json: string): ModelRequest {
    return decodeRequest(json, this.blobCache());
  }

  /** Writes the blobs a cell refers to that the store does not hold yet. */
  private storeBlobs(blobs: ReadonlyMap<string, string>): void {
    if (blobs.size === 0) return;
    const statements = this.blobs();
    if (!statements) throw new InvalidArgumentError('store', `${this.file} has no blobs table (open it writable to migrate)`);
    for (const [hash, body] of blobs) {
      if (this.knownBlobs.has(hash)) continue;
      if (statements.has.get(hash) === undefined) statements.insert.run(hash, this.scrubValues(body));
      this.knownBlobs.add(hash);
    }
  }

  /**
   * Links the specs to the run, creating pending cells for keys never seen.
   * Returns the key of each spec (same order). Idempotent: resuming a run with
   * the same plan adds nothing.
   */
  async registerCells(
    runId: string,
    specs: readonly CellSpec[],
    identities?: readonly Pick<CellIdentity, 'key' | 'contentKey' | 'legacyKey'>[],
  ): Promise<string[]> {
    await this.idle();
    await this.requireRun(runId);
    if (identities !== undefined && identities.length !== specs.length) throw new InvalidArgumentError('identities', 'must have one identity per spec');
    const now = new Date().toISOString();
    const { hasCell, insertCell, linkCell, nextOrdinal } = this.statements;
    const keys: string[] = new Array(specs.length);
    const register = this.db.transaction(() => {
      let ordinal = ((nextOrdinal.get(runId) as { next: number | null }).next ?? -1) + 1;
      for (let index = 0; index < specs.length; index += 1) {
        const spec = specs[index]!;
        // Keys hashed incrementally and the stored form built per cell: no grid-sized JSON is held.
        let id: Pick<CellIdentity, 'key' | 'contentKey' | 'legacyKey'> = identities?.[index] ?? requestKeys(spec.request);
        // A store written before identity left the base URL out keeps its cells under the legacy key.
        if (id.legacyKey !== undefined && hasCell.get(id.key) === undefined && hasCell.get(id.legacyKey) !== undefined) {
          id = { ...id, key: id.legacyKey };
        }
        // A store written before the prompt was rearranged keeps the cell under its earlier shape's key.
        if (spec.legacyRequests !== undefined && hasCell.get(id.key) === undefined) {
          const stored = storedLegacyKey(spec.legacyRequests, (key) => hasCell.get(key) !== undefined);
          if (stored !== undefined) id = { ...id, key: stored };
        }
        keys[index] = id.key;
        if (hasCell.get(id.key) === undefined) {
          const encoded = encodeRequest(spec.request);
          this.storeBlobs(encoded.blobs);
          insertCell.run(id.key, id.contentKey, spec.request.model, spec.request.sample, this.scrubValues(encoded.json), now);
        }
        const labels = canonicalJson(spec.labels ?? {});
        if (linkCell.run(runId, id.key, labels, ordinal).changes > 0) ordinal += 1;
      }
    });
    try {
      register();
    } catch (error) {
      // Rolled back: blobs written in the transaction are gone again.
      this.knownBlobs.clear();
      throw error;
    }
    return keys;
  }

  /** The stored result of a cell, or undefined when the key was never registered. */
  async getCell(key: string): Promise<CellResult | undefined> {
    await this.idle();
    const row = this.statements.getCell.get(key) as CellRow | undefined;
    return row ? rowToResult(row, true) : undefined;
  }

  /** Stored results for many keys at once (missing keys are absent from the map). */
  async getCells(keys: Iterable<string>): Promise<Map<string, CellResult>> {
    await this.idle();
    const out = new Map<string, CellResult>();
    const { getCell } = this.statements;
    this.db.transaction(() => {
      for (const key of keys) {
        if (out.has(key)) continue;
        const row = getCell.get(key) as CellRow | undefined;
        if (row) out.set(key, rowToResult(row, true));
      }
    })();
    return out;
  }

  /** Stored results of every cell linked to a run, by key (one query; what a runner resumes from). */
  async resultsOfRun(runId: string): Promise<Map<string, CellResult>> {
    await this.idle();
    const out = new Map<string, CellResult>();
    for (const row of this.statements.runResults.all(runId) as CellRow[]) out.set(row.key, rowToResult(row, true));
    return out;
  }

  async getRequest(key: string): Promise<ModelRequest | undefined> {
    await this.idle();
    const row = this.statements.getCell.get(key) as CellRow | undefined;
    return row ? this.decode(row.request) : undefined;
  }

  async beginAttempts(keys: readonly string[]): Promise<void> {
    await this.idle();
    if (keys.length === 0) return;
    this.db.transaction(() => {
      for (const key of keys) this.statements.beginAttempt.run(key);
    })();
  }

  /**
   * Writes a cell's end state in its own transaction. A `done` cell is final and
   * never overwritten; returns false when the write was refused for that reason.
   * Attempts accumulate across runs (every call ever made for the cell).
   */
  async recordResult(key: string, outcome: CellOutcome): Promise<boolean> {
    await this.idle();
    return this.writeResult(key, outcome);
  }

  private writeResult(key: string, outcome: CellOutcome): boolean {
    const info = this.statements.recordResult.run(...outcomeValues(outcome, this.secrets), key);
    if (info.changes === 0 && !this.statements.hasCell.get(key)) {
      throw new InvalidArgumentError('key', `cell ${key} is not in ${this.file}; register it first`);
    }
    return info.changes > 0;
  }

  /**
   * Writes several cells' end states in one transaction (group commit: one WAL
   * commit for a burst of results instead of one each). Same rules as `recordResult`.
   */
  async recordResults(items: ReadonlyArray<{ key: string; outcome: CellOutcome }>): Promise<boolean[]> {
    await this.idle();
    return this.db.transaction(() => items.map((item) => this.writeResult(item.key, item.outcome)))();
  }

  /** The cells of a run in plan order, with labels, requests and results; optionally filtered. */
  async cellsOfRun(runId: string, query: CellQuery = {}): Promise<RunCellRecord[]> {
    await this.idle();
    await this.requireRun(runId);
    const { sql, params } = buildCellQuery(runId, query, true);
    const rows = this.db.prepare(`${sql} ORDER BY rc.ordinal`).all(...params) as Array<CellRow & { labels: string; ordinal: number; sample: number }>;
    return rows.map((row) => ({ ...resultRecord(runId, row), request: this.decode(row.request) }));
  }

  /**
   * The cells of a run in plan order with labels and results but not requests: the
   * query never selects the request column, so a report over long-context cells
   * reads and parses no session prefix. Optionally filtered like `cellsOfRun`.
   */
  async cellResultsOfRun(runId: string, query: CellQuery = {}): Promise<RunCellResultRecord[]> {
    await this.idle();
    // Existence only: `requireRun` would count the run's cells by status, a second pass over them.
    if (this.statements.hasRun.get(runId) === undefined) throw new InvalidArgumentError('runId', `no run ${JSON.stringify(runId)} in ${this.file}`);
    const { sql, params } = buildCellQuery(runId, query, false);
    // Rows as arrays, stepped into records (read-cells.ts; issue #44). The columns are RESULT_COLUMNS, then labels and ordinal.
    return readCellResults(this.db.prepare(`${sql} ORDER BY rc.ordinal`), params, runId);
  }

  /** Finished (done or empty) cells whose content (messages, params, sample) matches, newest first. */
  async findByContent(key: string, model?: string): Promise<Array<{ model: string; result: CellResult }>> {
    await this.idle();
    const rows = this.statements.byContent.all(key) as CellRow[];
    return rows.filter((row) => model === undefined || row.model === model).map((row) => ({ model: row.model, result: rowToResult(row, true) }));
  }

  /**
   * Writes the run's cells as JSON Lines (one object per run cell, plan order),
   * respecting the stream's backpressure. Returns the number of lines.
   */
  async exportJsonl(runId: string, stream: Writable): Promise<number> {
    await this.requireRun(runId);
    const page = this.db.prepare(
      `SELECT c.*, rc.labels, rc.ordinal FROM run_cells rc JOIN cells c ON c.key = rc.key
       WHERE rc.run_id = ? AND rc.ordinal > ? ORDER BY rc.ordinal LIMIT 500`,
    );
    let after = -1;
    let lines = 0;
    for (;;) {
      // Pages, not an open iterator: the connection stays free for writers in between.
      const rows = page.all(runId, after) as Array<CellRow & { labels: string; ordinal: number }>;
      if (rows.length === 0) break;
      for (const row of rows) {
        await writeJsonLine(stream, exportRecord(runId, row, this.decode(row.request)));
        lines += 1;
      }
      after = rows[rows.length - 1]!.ordinal;
    }
    return lines;
  }

  /**
   * A run's cells by status. Counting joins every cell of the run (a fifth of a second at 28,800
   * cells), and a viewer page or a report reads the same run several times, so the count is kept
   * until the store changes: `data_version` moves when another connection commits, `total_changes()`
   * when this one writes (issue #44).
   */
  private runCounts(runId: string): RunInfo['counts'] {
    // Inside a transaction nothing is kept: its writes may yet be rolled back.
    const stamp = this.db.inTransaction ? null : `${this.db.pragma('data_version', { simple: true })}:${this.statements.totalChanges.get()}`;
    const kept = this.countsCache.get(runId);
    if (stamp !== null && kept !== undefined && kept.stamp === stamp) return { ...kept.counts };
    const counts = tallyCounts(this.statements.runCounts.all(runId) as Array<{ status: CellStatus; n: number }>);
    if (stamp !== null) this.countsCache.set(runId, { stamp, counts: { ...counts } });
    return counts;
  }

  private runInfo(row: RunRow): RunInfo {
    // Counted when first read (read-cells.ts): a report that finds its run in the list never counts the others.
    return runInfoWithLazyCounts(row, () => this.runCounts(row.id));
  }
}

/** Opens a store: a `postgres://` / `postgresql://` URL is a PostgreSQL store, anything else a SQLite file. */
export function openStore(file: string, options?: OpenStoreOptions): RunStore {
  return RunStore.open(file, options);
}

function prepareStatements(db: Database.Database) {
  return {
    insertRun: db.prepare('INSERT INTO runs (id, experiment, manifest, status, started_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)'),
    getRun: db.prepare('SELECT * FROM runs WHERE id = ?'),
    hasRun: db.prepare('SELECT 1 FROM runs WHERE id = ?').pluck(),
    totalChanges: db.prepare('SELECT total_changes()').pluck(),
    listRuns: db.prepare('SELECT * FROM runs ORDER BY started_at DESC, id DESC'),
    updateRun: db.prepare('UPDATE runs SET status = ?, updated_at = ?, ended_at = ?, summary = coalesce(?, summary) WHERE id = ?'),
    runCounts: db.prepare(
      `SELECT c.status AS status, count(*) AS n FROM run_cells rc JOIN cells c ON c.key = rc.key
       WHERE rc.run_id = ? GROUP BY c.status`,
    ),
    hasCell: db.prepare('SELECT 1 FROM cells WHERE key = ?').pluck(),
    runResults: db.prepare(
      `SELECT c.key, c.status, c.attempts, c.text, c.reasoning, c.finish_reason, c.response_model,
         c.input_tokens, c.output_tokens, c.cached_input_tokens, c.cache_write_tokens, c.reasoning_tokens,
         c.latency_ms, c.cost_usd, c.error_class, c.error_message, c.started_at, c.finished_at, c.tool_calls
       FROM run_cells rc JOIN cells c ON c.key = rc.key WHERE rc.run_id = ?`,
    ),
    getCell: db.prepare('SELECT * FROM cells WHERE key = ?'),
    insertCell: db.prepare(
      `INSERT OR IGNORE INTO cells (key, content_key, model, sample, request, status, attempts, created_at)
       VALUES (?, ?, ?, ?, ?, 'pending', 0, ?)`,
    ),
    linkCell: db.prepare('INSERT OR IGNORE INTO run_cells (run_id, key, labels, ordinal) VALUES (?, ?, ?, ?)'),
    nextOrdinal: db.prepare('SELECT max(ordinal) AS next FROM run_cells WHERE run_id = ?'),
    byContent: db.prepare(
      `SELECT * FROM cells WHERE content_key = ? AND status IN ('done', 'empty')
       ORDER BY finished_at DESC, key`,
    ),
    beginAttempt: db.prepare("UPDATE cells SET attempts = attempts + 1 WHERE key = ? AND status <> 'done'"),
    recordResult: db.prepare(
      `UPDATE cells SET status = ?, attempts = attempts + ?, text = ?, reasoning = ?, finish_reason = ?,
         response_model = ?, input_tokens = ?, output_tokens = ?, cached_input_tokens = ?, cache_write_tokens = ?,
         reasoning_tokens = ?, latency_ms = ?, cost_usd = ?, error_class = ?, error_message = ?, started_at = ?,
         finished_at = ?, tool_calls = ?
       WHERE key = ? AND status <> 'done'`,
    ),
  };
}

function buildCellQuery(runId: string, query: CellQuery, withRequest: boolean): { sql: string; params: unknown[] } {
  const clauses = ['rc.run_id = ?'];
  const params: unknown[] = [runId];
  for (const [name, value] of Object.entries(query.labels ?? {})) {
    clauses.push('json_extract(rc.labels, ?) IS ?');
    params.push(`$."${name.replace(/"/g, '""')}"`, typeof value === 'boolean' ? Number(value) : value);
  }
  if (query.status !== undefined) {
    const statuses = Array.isArray(query.status) ? query.status : [query.status];
    if (statuses.length === 0) throw new InvalidArgumentError('query.status', 'must name at least one status');
    clauses.push(`c.status IN (${statuses.map(() => '?').join(', ')})`);
    params.push(...statuses);
  }
  return {
    sql: `SELECT ${RESULT_COLUMNS}${withRequest ? ', c.request' : ''}, rc.labels, rc.ordinal FROM run_cells rc JOIN cells c ON c.key = rc.key WHERE ${clauses.join(' AND ')}`,
    params,
  };
}

function ensureReadable(db: Database.Database, file: string): void {
  const applicationId = db.pragma('application_id', { simple: true }) as number;
  if (applicationId === 0) {
    throw new InputError('not an echolens run store (empty or foreign SQLite database)', { file });
  }
  // Migration needs a writable handle; ensureSchema refuses newer versions and foreign files.
  ensureSchemaReadOnly(db, file);
}

function ensureSchemaReadOnly(db: Database.Database, file: string): void {
  // A store one additive migration behind reads as it is (a v2 store simply has no blobs to resolve).
  const version = readSchemaVersion(db, file);
  if (version >= READABLE_WITHOUT_MIGRATION && version < SCHEMA_VERSION) return;
  try {
    ensureSchema(db, file);
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(`store schema version ${version} needs a migration first: run \`echolens runs migrate ${file}\``, { file }, { cause: error });
  }
}
