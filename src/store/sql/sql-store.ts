import { getOrInsert } from '../../core/get-or-insert.js';
import type { Writable } from 'node:stream';
import { canonicalJson } from '../../core/canonical-json.js';
import { InputError, InvalidArgumentError } from '../../core/errors.js';
import { nextTurn } from '../../core/next-turn.js';
import type { ModelRequest } from '../../models/types.js';
import { BatchJobs } from '../batch-jobs.js';
import { BlobCache, decodeRequest, encodeRequest } from '../blobs.js';
import { type CellIdentity, scrubSecrets } from '../keys.js';
import { requestKeys } from '../request-hash.js';
import {
  type BatchJobLedger,
  type CellOutcome,
  type CellQuery,
  decodeIndexRow,
  exportRecord,
  newRunId,
  outcomeValues,
  RESULT_COLUMNS,
  RUN_STATUSES,
  type RunCellIndexRow,
  type RunCellRecord,
  type RunCellResultRecord,
  type RunHead,
  type RunInfo,
  type RunRow,
  type RunStatus,
  type RunStore,
  resultOfColumns,
  resultRecordOfColumns,
  runHeadOfRow,
  runInfoOfRow,
  scrubJsonValues,
  storedLegacyKey,
  tallyCounts,
  validateManifest,
  writeJsonLine,
} from '../run-store-common.js';
import { type StageDeclaration, type StageProgress, stageComplete } from '../run-stages.js';
import { prefixSignature } from '../schedule.js';
import { decodeStoredText } from '../stored-text.js';
import type { CellResult, CellSpec, CellStatus, RunManifest } from '../types.js';
import { columns, type Fragment, type SqlType } from './dialect.js';
import type { SqlExecutor } from './executor.js';

/** Cells registered per statement (their rows travel as parameters of one statement). */
const REGISTER_CHUNK = 2_000;
/** Keys asked for per statement. */
const LOOKUP_CHUNK = 10_000;
/** Blob bodies at least this long are inserted one statement each, their body a parameter of its own (storeBlobs). */
const DIRECT_BLOB_CHARS = 65_536;

/**
 * The `RunStore` of both backends, each query written once (dialect.ts) and run by the
 * backend's executor (executor.ts): SQLite (`SqliteRunStore`, run-store.ts) and PostgreSQL
 * (`PgRunStore`, postgres/pg-store.ts) add only opening, closing, schema and locking, and
 * PostgreSQL what sharing the store between worker processes needs (shared-work.ts).
 *
 * Rules both keep: a `done` cell is final, attempts accumulate (counted before each call by
 * `beginAttempts`), secrets are scrubbed before anything is written, model text goes through
 * stored-text.ts, requests are stored with content-addressed blobs (blobs.ts).
 */
export abstract class SqlStore implements RunStore {
  abstract readonly backend: 'sqlite' | 'postgres';
  readonly file: string;
  protected readonly exec: SqlExecutor;
  protected readonly secrets: string[];
  private readonly plainSecrets: boolean;
  /** Blob hashes known to be in the store (written or seen by this handle). */
  private readonly knownBlobs = new Set<string>();
  /** Blob bodies read, by hash (bounded, see `loadBlobs`). */
  private readonly blobBodies = new Map<string, string>();
  private blobChars = 0;
  private blobCacheInstance: BlobCache | undefined;
  /** Tables found (a read-only handle on an old SQLite store may lack later ones). */
  private readonly tables = new Map<string, boolean>();
  /** Each run's status counts with the store state they were counted at (see `runCounts`). */
  private readonly countsCache = new Map<string, { stamp: string; counts: RunInfo['counts'] }>();

  protected constructor(file: string, exec: SqlExecutor, secrets: string[]) {
    this.file = file;
    this.exec = exec;
    this.secrets = secrets;
    this.plainSecrets = secrets.every((secret) => JSON.stringify(secret) === `"${secret}"`);
  }

  abstract close(): Promise<void>;

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await this.exec.transaction(fn);
    } catch (error) {
      // Blobs written in the rolled-back transaction are gone again.
      this.knownBlobs.clear();
      throw error;
    }
  }

  batchJobs(): BatchJobLedger {
    return new BatchJobs(this.exec);
  }

  /** Called after a run's status is written (PostgreSQL wakes waiting workers). */
  protected async statusWritten(_runId: string, _status: RunStatus): Promise<void> {}

  /** Called at the end of `registerCells`' transaction (PostgreSQL wakes waiting workers). */
  protected async cellsRegistered(_runId: string): Promise<void> {}

  protected async hasTable(name: string): Promise<boolean> {
    let found = this.tables.get(name);
    if (found === undefined) {
      found = (await this.exec.get(this.exec.dialect.tableExistsSql, [name])) !== undefined;
      this.tables.set(name, found);
    }
    return found;
  }

  /** Runs a statement with a list parameter for each chunk of the values (a key list of any length). */
  private async *chunks<T>(column: string, values: readonly string[], query: (list: Fragment) => Promise<T>): AsyncGenerator<T> {
    for (let start = 0; start < values.length; start += LOOKUP_CHUNK) {
      yield await query(this.exec.dialect.inList(column, 'text', values.slice(start, start + LOOKUP_CHUNK)));
    }
  }

  // ---- runs ----

  async createRun(manifest: RunManifest, options: { id?: string } = {}): Promise<string> {
    validateManifest(manifest);
    const id = options.id ?? newRunId();
    if (!/^[A-Za-z0-9._-]{1,128}$/.test(id)) {
      throw new InvalidArgumentError('id', `run id must be 1–128 characters of letters, digits, ".", "_" or "-", got ${JSON.stringify(id)}`);
    }
    const now = new Date().toISOString();
    const manifestJson = JSON.stringify(scrubSecrets(manifest, this.secrets));
    const inserted = await this.exec.run(
      `INSERT INTO runs (id, experiment, manifest, status, started_at, updated_at) VALUES (?, ?, ?, 'running', ?, ?)
       ON CONFLICT (id) DO NOTHING`,
      [id, manifest.experiment, manifestJson, now, now],
    );
    if (inserted === 0) throw new InvalidArgumentError('id', `run ${id} already exists in ${this.file}`);
    return id;
  }

  async getRun(id: string): Promise<RunInfo | undefined> {
    const [row, counts] = await Promise.all([this.exec.get<RunRow>('SELECT * FROM runs WHERE id = ?', [id]), this.runCounts(id)]);
    return row ? runInfoOfRow(row, counts) : undefined;
  }

  /** The run, or a typed error naming the store when it does not exist. */
  async requireRun(id: string): Promise<RunInfo> {
    const run = await this.getRun(id);
    if (!run) throw new InvalidArgumentError('runId', `no run ${JSON.stringify(id)} in ${this.file}`);
    return run;
  }

  /** The runs table, newest first. */
  private runRows(): Promise<RunRow[]> {
    const { bytewise } = this.exec.dialect;
    return this.exec.all<RunRow>(`SELECT * FROM runs ORDER BY ${bytewise('started_at')} DESC, ${bytewise('id')} DESC`);
  }

  async listRunHeads(): Promise<RunHead[]> {
    return (await this.runRows()).map(runHeadOfRow);
  }

  /** All runs, newest first. */
  async listRuns(): Promise<RunInfo[]> {
    const stamp = this.exec.changeStamp();
    if (stamp !== null) {
      // Every run already counted since the store last changed (a viewer page that read its run
      // first): no join over every run's cells.
      const rows = await this.runRows();
      const kept = rows.map((row) => this.countsCache.get(row.id));
      if (kept.every((k) => k?.stamp === stamp)) return rows.map((row, i) => runInfoOfRow(row, { ...(kept[i] as { counts: RunInfo['counts'] }).counts }));
    }
    const [rows, counts] = await Promise.all([
      this.runRows(),
      this.exec.all<{ run_id: string; status: CellStatus; n: number }>(
        `SELECT rc.run_id AS run_id, c.status AS status, CAST(count(*) AS INTEGER) AS n FROM run_cells rc JOIN cells c ON c.key = rc.key
         GROUP BY rc.run_id, c.status`,
      ),
    ]);
    const byRun = new Map<string, Array<{ status: CellStatus; n: number }>>();
    for (const row of counts) {
      const list = getOrInsert(byRun, row.run_id, () => []);
      list.push(row);
    }
    return rows.map((row) => {
      const tally = tallyCounts(byRun.get(row.id) ?? []);
      if (stamp !== null) this.countsCache.set(row.id, { stamp, counts: { ...tally } });
      return runInfoOfRow(row, tally);
    });
  }

  /**
   * A run's cells by status. Counting joins every cell of the run (a fifth of a second at 28,800
   * cells on SQLite), and a viewer page or a report reads the same run several times, so the count
   * is kept until the store changes, where the executor can tell (SQLite: `data_version` moves
   * when another connection commits, `total_changes()` when this one writes; issue #44).
   */
  private async runCounts(runId: string): Promise<RunInfo['counts']> {
    const stamp = this.exec.changeStamp();
    const kept = this.countsCache.get(runId);
    if (stamp !== null && kept !== undefined && kept.stamp === stamp) return { ...kept.counts };
    const counts = tallyCounts(
      await this.exec.all<{ status: CellStatus; n: number }>(
        `SELECT c.status AS status, CAST(count(*) AS INTEGER) AS n FROM run_cells rc JOIN cells c ON c.key = rc.key
         WHERE rc.run_id = ? GROUP BY c.status`,
        [runId],
      ),
    );
    if (stamp !== null) this.countsCache.set(runId, { stamp, counts: { ...counts } });
    return counts;
  }

  /**
   * Deletes a run and its cell links in one transaction; cells no other run links to are
   * deleted too (cells are shared between runs by content), and then blobs no cell refers
   * to. Returns how many cells were removed.
   */
  async deleteRun(id: string): Promise<{ cellsRemoved: number }> {
    await this.requireRun(id);
    const removed = await this.transaction(async () => {
      const keys = (await this.exec.all<{ key: string }>('SELECT DISTINCT key FROM run_cells WHERE run_id = ?', [id])).map((row) => row.key);
      await this.exec.run('DELETE FROM run_cells WHERE run_id = ?', [id]);
      if (await this.hasTable('run_stages')) await this.exec.run('DELETE FROM run_stages WHERE run_id = ?', [id]);
      await this.exec.run('DELETE FROM runs WHERE id = ?', [id]);
      let count = 0;
      for await (const n of this.chunks('key', keys, (list) =>
        this.exec.run(`DELETE FROM cells WHERE ${list.sql} AND NOT EXISTS (SELECT 1 FROM run_cells rc WHERE rc.key = cells.key)`, list.params),
      ))
        count += n;
      if (count > 0) await this.removeUnreferencedBlobs();
      return count;
    });
    return { cellsRemoved: removed };
  }

  /** Deletes blobs no cell refers to, directly or through a run blob. */
  private async removeUnreferencedBlobs(): Promise<void> {
    if (!(await this.hasTable('blobs'))) return;
    const referenced = new Set<string>();
    const runBlobs: string[] = [];
    for (const row of await this.exec.all<{ request: string }>(`SELECT request FROM cells WHERE request LIKE '%"$blob%'`)) {
      for (const match of row.request.matchAll(BLOB_REFERENCE)) {
        if (!referenced.has(match[1]!) && match[0].startsWith('"$blobs"')) runBlobs.push(match[1]!);
        referenced.add(match[1]!);
      }
    }
    for await (const rows of this.chunks('hash', runBlobs, (list) =>
      this.exec.all<{ body: string }>(`SELECT body FROM blobs WHERE ${list.sql}`, list.params),
    )) {
      for (const row of rows) for (const match of row.body.matchAll(BLOB_REFERENCE)) referenced.add(match[1]!);
    }
    const unreferenced = (await this.exec.all<{ hash: string }>('SELECT hash FROM blobs')).map((row) => row.hash).filter((hash) => !referenced.has(hash));
    for await (const _ of this.chunks('hash', unreferenced, (list) => this.exec.run(`DELETE FROM blobs WHERE ${list.sql}`, list.params)));
    for (const hash of unreferenced) this.knownBlobs.delete(hash);
    this.blobBodies.clear();
    this.blobChars = 0;
    this.blobCacheInstance = undefined;
  }

  async setRunStatus(id: string, requested: RunStatus, summary?: unknown): Promise<void> {
    if (!RUN_STATUSES.includes(requested)) throw new InvalidArgumentError('status', `unknown run status ${requested}`);
    // A run is done only when every stage it declared is (run-stages.ts); until then it stays running.
    const status = requested === 'done' && (await this.stages(id)).some((stage) => !stageComplete(stage)) ? 'running' : requested;
    const now = new Date().toISOString();
    const ended = status === 'running' ? null : now;
    const summaryJson = summary === undefined ? null : JSON.stringify(scrubSecrets(summary, this.secrets));
    const changes = await this.exec.run('UPDATE runs SET status = ?, updated_at = ?, ended_at = ?, summary = coalesce(?, summary) WHERE id = ?', [
      status,
      now,
      ended,
      summaryJson,
      id,
    ]);
    if (changes === 0) throw new InvalidArgumentError('runId', `no run ${JSON.stringify(id)} in ${this.file}`);
    await this.statusWritten(id, status);
  }

  // ---- stages (run-stages.ts) ----

  /**
   * Records the stages a run will go through. A stage already in the ledger keeps its
   * counts; one that has not started takes the declared count (a resumed run re-plans).
   */
  async declareStages(runId: string, stages: readonly StageDeclaration[]): Promise<void> {
    const now = new Date().toISOString();
    await this.transaction(async () => {
      for (const [index, stage] of stages.entries()) {
        await this.exec.run(
          `INSERT INTO run_stages (run_id, stage, ordinal, expected, registered, settled, updated_at) VALUES (?, ?, ?, ?, 0, 0, ?)
           ON CONFLICT (run_id, stage) DO UPDATE SET expected = excluded.expected, updated_at = excluded.updated_at
           WHERE run_stages.registered = 0 AND run_stages.settled = 0`,
          [runId, stage.name, index, stage.expected, now],
        );
      }
    });
  }

  /** Writes a stage's counts (a stage never declared is appended after the others). */
  async recordStage(runId: string, stage: string, counts: { expected: number; registered: number; settled: number }): Promise<void> {
    await this.exec.run(
      `INSERT INTO run_stages (run_id, stage, ordinal, expected, registered, settled, updated_at)
       VALUES (?, ?, (SELECT coalesce(max(ordinal) + 1, 0) FROM run_stages WHERE run_id = ?), ?, ?, ?, ?)
       ON CONFLICT (run_id, stage) DO UPDATE SET expected = excluded.expected, registered = excluded.registered,
         settled = excluded.settled, updated_at = excluded.updated_at`,
      [runId, stage, runId, counts.expected, counts.registered, counts.settled, new Date().toISOString()],
    );
  }

  /** The run's stages in order; empty for runs written before the ledger existed (and for a store read without migrating). */
  async stages(runId: string): Promise<StageProgress[]> {
    if (!(await this.hasTable('run_stages'))) return [];
    const rows = await this.exec.all<{ stage: string; ordinal: number; expected: number | null; registered: number; settled: number; updated_at: string }>(
      'SELECT stage, ordinal, expected, registered, settled, updated_at FROM run_stages WHERE run_id = ? ORDER BY ordinal, stage',
      [runId],
    );
    return rows.map((r) => ({
      stage: r.stage,
      ordinal: Number(r.ordinal),
      expected: r.expected === null ? null : Number(r.expected),
      registered: Number(r.registered),
      settled: Number(r.settled),
      updatedAt: r.updated_at,
    }));
  }

  // ---- blobs (blobs.ts) ----

  private blobCache(): BlobCache {
    this.blobCacheInstance ??= new BlobCache((hash) => {
      const body = this.blobBodies.get(hash);
      if (body === undefined)
        throw new InputError(`a cell's request refers to blob ${hash.slice(0, 12)}…, which the store does not hold (damaged store?)`, { file: this.file });
      return body;
    });
    return this.blobCacheInstance;
  }

  /** Reads the blob bodies these stored requests refer to (run blobs and the blobs they list) that are not at hand. */
  private async loadBlobs(jsons: readonly string[]): Promise<void> {
    let wanted = new Set<string>();
    for (const json of jsons) for (const hash of blobRefs(json)) if (!this.blobBodies.has(hash)) wanted.add(hash);
    for (let depth = 0; depth < 2 && wanted.size > 0; depth += 1) {
      if (this.blobChars > 64 * 1024 * 1024) {
        this.blobBodies.clear();
        this.blobChars = 0;
      }
      const next = new Set<string>();
      for await (const rows of this.chunks('hash', [...wanted], (list) =>
        this.exec.all<{ hash: string; body: string }>(`SELECT hash, body FROM blobs WHERE ${list.sql}`, list.params),
      )) {
        for (const row of rows) {
          this.blobBodies.set(row.hash, row.body);
          this.blobChars += row.body.length;
          this.knownBlobs.add(row.hash);
          for (const hash of blobRefs(row.body)) if (!this.blobBodies.has(hash)) next.add(hash);
        }
      }
      wanted = next;
    }
  }

  /** Request column values, references expanded. */
  async decodeAll(jsons: readonly string[]): Promise<ModelRequest[]> {
    await this.loadBlobs(jsons);
    return jsons.map((json) => decodeRequest(json, this.blobCache()));
  }

  async decode(json: string): Promise<ModelRequest> {
    return (await this.decodeAll([json]))[0]!;
  }

  /** Writes blobs (hash → scrubbed body) the store may not hold yet, in one statement. */
  private async storeBlobs(blobs: ReadonlyMap<string, string>): Promise<void> {
    const rows = [...blobs].filter(([hash]) => !this.knownBlobs.has(hash));
    if (rows.length === 0) return;
    if (!(await this.hasTable('blobs'))) throw new InvalidArgumentError('store', `${this.file} has no blobs table (open it writable to migrate)`);
    // A long body is bound as a parameter of its own: in the rows table (one JSON parameter in
    // SQLite) it would be escaped into JSON here and parsed back by the database, which for a
    // megabyte labeller prompt held a reward server's thread for tens of ms.
    // Each is inserted in a turn of the event loop of its own (SQLite's calls are synchronous and
    // settle at once, so otherwise encoding the request, inserting megabytes and what follows would
    // all run in one stretch).
    const short = rows.filter(([, body]) => body.length < DIRECT_BLOB_CHARS);
    let long = false;
    for (const [hash, body] of rows) {
      if (body.length < DIRECT_BLOB_CHARS) continue;
      long = true;
      await nextTurn();
      await this.exec.run('INSERT INTO blobs (hash, body) VALUES (?, ?) ON CONFLICT (hash) DO NOTHING', [hash, body]);
    }
    if (long) await nextTurn();
    if (short.length > 0) {
      const input = this.exec.dialect.rows(columns({ hash: 'text', body: 'text' }), short);
      await this.exec.run(`INSERT INTO blobs (hash, body) SELECT t.hash, t.body FROM ${input.sql} t WHERE true ON CONFLICT (hash) DO NOTHING`, input.params);
    }
    for (const [hash] of rows) this.knownBlobs.add(hash);
  }

  // ---- cells ----

  /** Secret values replaced in a canonical request JSON (fields were scrubbed when it was built). */
  private scrubValues(json: string): string {
    return scrubJsonValues(json, this.secrets, this.plainSecrets);
  }

  /** Which of the keys the store holds. */
  private async storedKeys(keys: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>();
    for await (const rows of this.chunks('key', keys, (list) => this.exec.all<{ key: string }>(`SELECT key FROM cells WHERE ${list.sql}`, list.params))) {
      for (const row of rows) out.add(row.key);
    }
    return out;
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
    await this.requireRun(runId);
    if (identities !== undefined && identities.length !== specs.length) throw new InvalidArgumentError('identities', 'must have one identity per spec');
    const now = new Date().toISOString();
    const { dialect } = this.exec;
    // Keys hashed incrementally (request-hash.ts): no grid-sized JSON is held.
    const ids = specs.map((spec, index) => identities?.[index] ?? requestKeys(spec.request));
    // Which keys (and legacy keys) the store holds already: one query per 10,000, not one per cell.
    const existing = await this.storedKeys([...new Set(ids.flatMap((id) => (id.legacyKey === undefined ? [id.key] : [id.key, id.legacyKey])))]);
    // A store written before identity left the base URL out keeps its cells under the legacy key.
    const keys = ids.map((id) => (id.legacyKey !== undefined && !existing.has(id.key) && existing.has(id.legacyKey) ? id.legacyKey : id.key));
    // A store written before a prompt was rearranged keeps the cell under its earlier shape's key.
    const legacyCandidates = new Set<string>();
    specs.forEach((spec, index) => {
      if (spec.legacyRequests === undefined || existing.has(keys[index]!)) return;
      for (const request of spec.legacyRequests) {
        const legacy = requestKeys(request);
        legacyCandidates.add(legacy.key);
        if (legacy.legacyKey !== undefined) legacyCandidates.add(legacy.legacyKey);
      }
    });
    if (legacyCandidates.size > 0) {
      const stored = await this.storedKeys([...legacyCandidates]);
      specs.forEach((spec, index) => {
        if (spec.legacyRequests === undefined || existing.has(keys[index]!)) return;
        const found = storedLegacyKey(spec.legacyRequests, (key) => stored.has(key));
        if (found !== undefined) {
          keys[index] = found;
          existing.add(found);
        }
      });
    }
    // The shared store groups cells by their cacheable prefix (claims take a whole group).
    const cellColumns = columns({
      key: 'text',
      content_key: 'text',
      model: 'text',
      sample: 'int',
      request: 'text',
      ...(dialect.shared ? { prefix_group: 'text' } : {}),
    });
    const names = cellColumns.map(([name]) => name).join(', ');
    const values = cellColumns.map(([name]) => `t.${name}`).join(', ');
    await this.transaction(async () => {
      for (let start = 0; start < specs.length; start += REGISTER_CHUNK) {
        const end = Math.min(specs.length, start + REGISTER_CHUNK);
        const blobs = new Map<string, string>();
        const cells: unknown[][] = [];
        const links: unknown[][] = [];
        const seenLinks = new Set<string>();
        for (let index = start; index < end; index += 1) {
          const spec = specs[index]!;
          const key = keys[index]!;
          if (!existing.has(key)) {
            existing.add(key);
            const encoded = encodeRequest(spec.request);
            for (const [hash, body] of encoded.blobs) if (!blobs.has(hash)) blobs.set(hash, this.scrubValues(body));
            const row: unknown[] = [key, ids[index]!.contentKey, spec.request.model, spec.request.sample, this.scrubValues(encoded.json)];
            if (dialect.shared) row.push(prefixSignature(spec.request));
            cells.push(row);
          }
          const labels = canonicalJson(spec.labels ?? {});
          const link = `${key}\u0000${labels}`;
          if (seenLinks.has(link)) continue;
          seenLinks.add(link);
          links.push([key, labels]);
        }
        await this.storeBlobs(blobs);
        if (cells.length > 0) {
          const input = dialect.rows(cellColumns, cells);
          await this.exec.run(
            `INSERT INTO cells (${names}, status, attempts, created_at)
             SELECT ${values}, 'pending', 0, ? FROM ${input.sql} t WHERE true ON CONFLICT (key) DO NOTHING`,
            [now, ...input.params],
          );
        }
        // Ordinals continue the run's plan order; links the run already has are skipped (idempotent resume).
        const input = dialect.rows(columns({ key: 'text', labels: 'text' }), links);
        await this.exec.run(
          `INSERT INTO run_cells (run_id, key, labels, ordinal)
           SELECT ?, t.key, t.labels, (SELECT coalesce(max(ordinal), -1) FROM run_cells WHERE run_id = ?) + row_number() OVER (ORDER BY t.i)
           FROM ${input.sql} t
           WHERE NOT EXISTS (SELECT 1 FROM run_cells rc WHERE rc.run_id = ? AND rc.key = t.key AND rc.labels = t.labels)
           ORDER BY t.i`,
          [runId, runId, ...input.params, runId],
        );
      }
      await this.cellsRegistered(runId);
    });
    return keys;
  }

  /** The stored result of a cell, or undefined when the key was never registered. */
  async getCell(key: string): Promise<CellResult | undefined> {
    return (await this.exec.raw(`SELECT ${RESULT_COLUMNS} FROM cells c WHERE c.key = ?`, [key], (c) => resultOfColumns(c, true)))[0];
  }

  /** Stored results for many keys at once (missing keys are absent from the map), in the order asked. */
  async getCells(keys: Iterable<string>): Promise<Map<string, CellResult>> {
    const list = [...new Set(keys)];
    const found = new Map<string, CellResult>();
    for await (const results of this.chunks('c.key', list, (inList) =>
      this.exec.raw(`SELECT ${RESULT_COLUMNS} FROM cells c WHERE ${inList.sql}`, inList.params, (c) => resultOfColumns(c, true)),
    )) {
      for (const result of results) found.set(result.key, result);
    }
    const out = new Map<string, CellResult>();
    for (const key of list) {
      const result = found.get(key);
      if (result) out.set(key, result);
    }
    return out;
  }

  /** Stored results of every cell linked to a run, by key (one query; what a runner resumes from). */
  async resultsOfRun(runId: string): Promise<Map<string, CellResult>> {
    const results = await this.exec.raw(
      `SELECT ${RESULT_COLUMNS} FROM run_cells rc JOIN cells c ON c.key = rc.key WHERE rc.run_id = ? ORDER BY rc.ordinal`,
      [runId],
      (c) => resultOfColumns(c, true),
    );
    return new Map(results.map((result) => [result.key, result]));
  }

  async getRequest(key: string): Promise<ModelRequest | undefined> {
    const row = await this.exec.get<{ request: string }>('SELECT request FROM cells WHERE key = ?', [key]);
    return row === undefined ? undefined : this.decode(row.request);
  }

  /** Counts an attempt before the call (on the shared store also an open attempt: one no written outcome has settled yet). */
  async beginAttempts(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    const list = this.exec.dialect.inList('key', 'text', keys);
    const open = this.exec.dialect.shared ? ', open_attempts = open_attempts + 1' : '';
    await this.exec.run(`UPDATE cells SET attempts = attempts + 1${open} WHERE ${list.sql} AND status <> 'done'`, list.params);
  }

  /**
   * Writes a cell's end state. A `done` cell is final and never overwritten; returns false
   * when the write was refused for that reason. Attempts accumulate across runs.
   */
  async recordResult(key: string, outcome: CellOutcome): Promise<boolean> {
    return (await this.recordResults([{ key, outcome }]))[0]!;
  }

  /** Writes several cells' end states in one statement (group commit). Same rules as `recordResult`. */
  async recordResults(items: ReadonlyArray<{ key: string; outcome: CellOutcome }>): Promise<boolean[]> {
    return this.writeOutcomes(items);
  }

  /**
   * One statement (one round trip, atomic) that writes several outcomes (each refused for a
   * `done` cell) and, with `spend` (the shared store only), adds each run's cost to its spend;
   * its rows are the keys written. Keys must be distinct.
   */
  outcomesStatement(items: ReadonlyArray<{ key: string; outcome: CellOutcome }>, spend?: ReadonlyMap<string, number>): Fragment {
    const { dialect } = this.exec;
    const input = dialect.rows(
      [...OUTCOME_COLUMNS, ['ikey', 'text']],
      items.map((item) => [...outcomeValues(item.outcome, this.secrets), item.key]),
    );
    // Writing a result clears the lease in the same statement, and settles the attempts counted before the call.
    const shared = dialect.shared ? ', open_attempts = 0, lease_owner = NULL, lease_until = NULL, lease_run = NULL, lease_reserved_usd = 0' : '';
    const update = `UPDATE cells AS c SET status = i.status, attempts = c.attempts + i.add_attempts, text = i.text, reasoning = i.reasoning,
        finish_reason = i.finish_reason, response_model = i.response_model, input_tokens = i.input_tokens, output_tokens = i.output_tokens,
        cached_input_tokens = i.cached_input_tokens, cache_write_tokens = i.cache_write_tokens, reasoning_tokens = i.reasoning_tokens,
        latency_ms = i.latency_ms, cost_usd = i.cost_usd, error_class = i.error_class, error_message = i.error_message,
        started_at = i.started_at, finished_at = i.finished_at, tool_calls = i.tool_calls${shared}
      FROM input i WHERE c.key = i.ikey AND c.status <> 'done' RETURNING key`;
    if (spend === undefined || spend.size === 0) return { sql: `WITH input AS ${input.sql} ${update}`, params: input.params };
    if (!dialect.shared) throw new InvalidArgumentError('spend', 'only a shared store keeps a run spend');
    const spent = dialect.rows(columns({ id: 'text', usd: 'float8' }), [...spend]);
    return {
      sql: `WITH input AS ${input.sql}, written AS (${update}),
            spent AS (UPDATE runs r SET spent_usd = r.spent_usd + s.usd FROM ${spent.sql} s WHERE r.id = s.id)
            SELECT key FROM written`,
      params: [...input.params, ...spent.params],
    };
  }

  /** Writes outcomes (and, on the shared store, spend) in one statement; true per item when written. */
  async writeOutcomes(items: ReadonlyArray<{ key: string; outcome: CellOutcome }>, spend?: ReadonlyMap<string, number>): Promise<boolean[]> {
    if (items.length === 0) return [];
    if (new Set(items.map((item) => item.key)).size !== items.length) {
      // The same cell twice: one statement would write it once; write them in order, each in its own statement.
      const out: boolean[] = [];
      await this.transaction(async () => {
        for (const [index, item] of items.entries()) out.push(...(await this.writeOutcomes([item], index === 0 ? spend : undefined)));
      });
      return out;
    }
    const statement = this.outcomesStatement(items, spend);
    const written = new Set((await this.exec.all<{ key: string }>(statement.sql, statement.params)).map((row) => row.key));
    return this.checkWritten(
      items,
      items.map((item) => (written.has(item.key) ? 1 : 0)),
    );
  }

  /** True per item when written; a refused write of an unknown key is an error. */
  async checkWritten(items: ReadonlyArray<{ key: string }>, counts: readonly number[]): Promise<boolean[]> {
    const refused = items.filter((_, index) => counts[index] === 0).map((item) => item.key);
    if (refused.length > 0) {
      const known = await this.storedKeys(refused);
      const missing = refused.find((key) => !known.has(key));
      if (missing !== undefined) throw new InvalidArgumentError('key', `cell ${missing} is not in ${this.file}; register it first`);
    }
    return counts.map((count) => count > 0);
  }

  /** A run's cells: RESULT_COLUMNS, labels, ordinal (and the request), filtered, in plan order. */
  private cellQuery(runId: string, query: CellQuery, withRequest: boolean): Fragment {
    const { dialect } = this.exec;
    const clauses = ['rc.run_id = ?'];
    const params: unknown[] = [runId];
    for (const [name, value] of Object.entries(query.labels ?? {})) {
      const label = dialect.labelEquals('rc.labels', name, value);
      clauses.push(label.sql);
      params.push(...label.params);
    }
    if (query.status !== undefined) {
      const statuses = Array.isArray(query.status) ? query.status : [query.status];
      if (statuses.length === 0) throw new InvalidArgumentError('query.status', 'must name at least one status');
      const list = dialect.inList('c.status', 'text', statuses);
      clauses.push(list.sql);
      params.push(...list.params);
    }
    return {
      sql: `SELECT ${RESULT_COLUMNS}, rc.labels, rc.ordinal${withRequest ? ', c.request' : ''} FROM run_cells rc JOIN cells c ON c.key = rc.key
            WHERE ${clauses.join(' AND ')} ORDER BY rc.ordinal`,
      params,
    };
  }

  /** The cells of a run in plan order, with labels, requests and results; optionally filtered. */
  async cellsOfRun(runId: string, query: CellQuery = {}): Promise<RunCellRecord[]> {
    await this.requireRun(runId);
    const { sql, params } = this.cellQuery(runId, query, true);
    const rows = await this.exec.raw(sql, params, (c) => ({ record: resultRecordOfColumns(runId, c), request: c[24] as string }));
    const requests = await this.decodeAll(rows.map((row) => row.request));
    return rows.map((row, index) => ({ ...row.record, request: requests[index]! }));
  }

  /**
   * The cells of a run in plan order with labels and results but not requests: the
   * query never selects the request column, so a report over long-context cells
   * reads and parses no session prefix. Optionally filtered like `cellsOfRun`.
   */
  async cellResultsOfRun(runId: string, query: CellQuery = {}): Promise<RunCellResultRecord[]> {
    // Existence only: `requireRun` would count the run's cells by status, a second pass over them.
    if ((await this.exec.get('SELECT 1 AS found FROM runs WHERE id = ?', [runId])) === undefined) {
      throw new InvalidArgumentError('runId', `no run ${JSON.stringify(runId)} in ${this.file}`);
    }
    const { sql, params } = this.cellQuery(runId, query, false);
    return this.exec.raw(sql, params, (c) => resultRecordOfColumns(runId, c));
  }

  /** Labels, status and text of a run's cells in plan order (no requests). */
  async cellIndexOfRun(runId: string): Promise<RunCellIndexRow[]> {
    const rows = await this.exec.all<RunCellIndexRow>(
      `SELECT rc.key AS key, rc.labels AS labels, rc.ordinal AS ordinal, c.status AS status, c.text AS text, c.model AS model, c.tool_calls AS tool_calls
       FROM run_cells rc JOIN cells c ON c.key = rc.key WHERE rc.run_id = ? ORDER BY rc.ordinal`,
      [runId],
    );
    return rows.map(decodeIndexRow);
  }

  /** Finished (done or empty) cells whose content (messages, params, sample) matches, newest first. */
  async findByContent(key: string, model?: string): Promise<Array<{ model: string; result: CellResult }>> {
    const { bytewise } = this.exec.dialect;
    const found = await this.exec.raw(
      `SELECT ${RESULT_COLUMNS} FROM cells c WHERE c.content_key = ? AND c.status IN ('done', 'empty')
       ORDER BY ${bytewise('c.finished_at')} DESC, ${bytewise('c.key')}`,
      [key],
      (c) => ({ model: c[2] as string, result: resultOfColumns(c, true) }),
    );
    return found.filter((cell) => model === undefined || cell.model === model);
  }

  // ---- export and transfer ----

  /**
   * Writes the run's cells as JSON Lines (one object per run cell, plan order),
   * respecting the stream's backpressure. Returns the number of lines.
   */
  async exportJsonl(runId: string, stream: Writable): Promise<number> {
    await this.requireRun(runId);
    let after = -1;
    let lines = 0;
    for (;;) {
      // Pages, not an open cursor: the connection stays free for writers in between.
      const rows = await this.exec.raw(
        `SELECT ${RESULT_COLUMNS}, rc.labels, rc.ordinal, c.request FROM run_cells rc JOIN cells c ON c.key = rc.key
         WHERE rc.run_id = ? AND rc.ordinal > ? ORDER BY rc.ordinal LIMIT 500`,
        [runId, after],
        (c) => c,
      );
      if (rows.length === 0) break;
      const requests = await this.decodeAll(rows.map((c) => c[24] as string));
      for (const [index, c] of rows.entries()) {
        await writeJsonLine(stream, exportRecord(runId, c, requests[index]));
        lines += 1;
      }
      after = rows[rows.length - 1]![23] as number;
    }
    return lines;
  }

  /** The model name each provider reported for the run's cells (not part of CellResult), by key. */
  async responseModelsOfRun(runId: string): Promise<Map<string, string | null>> {
    const rows = await this.exec.all<{ key: string; response_model: string | null }>(
      'SELECT c.key AS key, c.response_model AS response_model FROM run_cells rc JOIN cells c ON c.key = rc.key WHERE rc.run_id = ?',
      [runId],
    );
    return new Map(rows.map((row) => [row.key, decodeStoredText(row.response_model)]));
  }

  /** Sets a run's times (a copied run keeps its own; createRun stamps the moment of the copy). */
  async setRunTimes(runId: string, startedAt: string, updatedAt: string, endedAt: string | null): Promise<void> {
    await this.exec.run('UPDATE runs SET started_at = ?, updated_at = ?, ended_at = ? WHERE id = ?', [startedAt, updatedAt, endedAt, runId]);
  }
}

/** The columns one outcome writes, in `outcomeValues` order, with their types. */
const OUTCOME_COLUMNS: ReadonlyArray<readonly [string, SqlType]> = [
  ['status', 'text'],
  ['add_attempts', 'int'],
  ['text', 'text'],
  ['reasoning', 'text'],
  ['finish_reason', 'text'],
  ['response_model', 'text'],
  ['input_tokens', 'int'],
  ['output_tokens', 'int'],
  ['cached_input_tokens', 'int'],
  ['cache_write_tokens', 'int'],
  ['reasoning_tokens', 'int'],
  ['latency_ms', 'float8'],
  ['cost_usd', 'float8'],
  ['error_class', 'text'],
  ['error_message', 'text'],
  ['started_at', 'text'],
  ['finished_at', 'text'],
  ['tool_calls', 'text'],
];

const BLOB_REFERENCE = /"\$blobs?":"([0-9a-f]{64})"/g;

/** Blob hashes a stored request or run blob refers to. */
function blobRefs(json: string): string[] {
  if (!json.includes('"$blob')) return [];
  return [...json.matchAll(BLOB_REFERENCE)].map((match) => match[1]!);
}
