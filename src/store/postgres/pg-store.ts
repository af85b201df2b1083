import type { Writable } from 'node:stream';
import { canonicalJson } from '../../core/canonical-json.js';
import { InputError, InvalidArgumentError } from '../../core/errors.js';
import type { ModelRequest } from '../../models/types.js';
import { BlobCache, decodeRequest, encodeRequest } from '../blobs.js';
import { type CellIdentity, scrubSecrets, secretValuesFromEnv } from '../keys.js';
import { requestKeys } from '../request-hash.js';
import {
  type BatchJobLedger,
  type CellOutcome,
  type CellQuery,
  type CellRow,
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
  type RunStore,
  resultRecord,
  rowToResult,
  scrubJsonValues,
  storedLegacyKey,
  validateManifest,
  exportRecord,
  runInfoOfRow,
  tallyCounts,
  writeJsonLine,
  outcomeValues,
} from '../run-store-common.js';
import { type StageDeclaration, type StageProgress, stageComplete } from '../run-stages.js';
import { prefixSignature } from '../schedule.js';
import type { CellResult, CellSpec, CellStatus, RunManifest } from '../types.js';
import { PgBatchJobs } from './pg-batch-jobs.js';
import { ensurePgSchema } from './schema.js';
import { SharedWork } from './shared-work.js';
import { PgClient, PgError, type Statement } from './pg-client.js';

/** Cells registered per round trip (the arrays travel as parameters of one statement). */
const REGISTER_CHUNK = 2_000;

/**
 * The PostgreSQL backend of `RunStore`: the same tables, rules and answers as the
 * SQLite backend (a `done` cell is final, attempts accumulate, secrets scrubbed
 * before anything is written, requests stored with content-addressed blobs), on a
 * database that several processes share. Every call is asynchronous over a `pg.Pool`
 * (pg-client.ts): a round trip never holds the event loop. What only sharing needs
 * (leases, shared budget and rate limits) is in `shared` (shared-work.ts).
 *
 * The connection string is never stored; `file` shows it without its password.
 */
export class PgRunStore implements RunStore {
  readonly backend = 'postgres' as const;
  readonly file: string;
  readonly client: PgClient;
  readonly shared: SharedWork;
  readonly readonly: boolean;
  private readonly secrets: string[];
  private readonly plainSecrets: boolean;
  private blobCacheInstance: BlobCache | undefined;
  private readonly blobBodies = new Map<string, string>();
  private blobChars = 0;

  private constructor(url: string, client: PgClient, secrets: string[], readonly: boolean) {
    this.file = redactUrl(url);
    this.client = client;
    this.secrets = secrets;
    this.plainSecrets = secrets.every((secret) => JSON.stringify(secret) === `"${secret}"`);
    this.readonly = readonly;
    this.shared = new SharedWork(this);
  }

  /**
   * Opens the store without waiting: the connection and the schema check (create,
   * migrate or refuse) start at once, and every call waits for them, so a store that
   * cannot be used fails its first call with the reason. `connect` waits for them.
   */
  static open(url: string, options: OpenStoreOptions & { retryForMs?: number; poolSize?: number } = {}): PgRunStore {
    const client = new PgClient(url, { retryForMs: options.retryForMs ?? 60_000, ...(options.poolSize ? { max: options.poolSize } : {}) });
    const shown = redactUrl(url);
    const ready = ensurePgSchema(client.raw(), shown, options.readonly === true).catch((error: unknown) => {
      if (error instanceof InputError) throw error;
      throw new InputError(`cannot use store: ${(error as Error).message}`, { file: shown }, { cause: error });
    });
    client.setGate(ready);
    const store = new PgRunStore(url, client, secretValuesFromEnv(options.env ?? process.env), options.readonly === true);
    store.ready = ready;
    return store;
  }

  /** Opens the store and waits until it is usable (throws the reason when it is not; the pool is closed then). */
  static async connect(url: string, options: OpenStoreOptions & { retryForMs?: number; poolSize?: number } = {}): Promise<PgRunStore> {
    const store = PgRunStore.open(url, options);
    try {
      await store.ready;
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  /** Settles when the connection and schema check are done. */
  ready: Promise<void> = Promise.resolve();

  async close(): Promise<void> {
    await this.client.close();
  }

  transaction<T>(fn: () => Promise<T>): Promise<T> {
    return this.client.transaction(fn);
  }

  batchJobs(): BatchJobLedger {
    return new PgBatchJobs(this.client);
  }

  private query(sql: string, params: readonly unknown[] = []) {
    this.writable(sql);
    return this.client.query(sql, params);
  }

  /** Reads run on the pool; the result rows. */
  private async rows<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return (await this.client.query(sql, params)).rows as unknown as T[];
  }

  private writable(sql: string): void {
    if (this.readonly && !/^\s*(SELECT|WITH [^;]* SELECT)/i.test(sql)) {
      throw new InvalidArgumentError('store', `${this.file} was opened read-only`);
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
    const inserted = await this.query(
      `INSERT INTO runs (id, experiment, manifest, status, started_at, updated_at) VALUES ($1, $2, $3, 'running', $4, $4)
       ON CONFLICT (id) DO NOTHING`,
      [id, manifest.experiment, manifestJson, now],
    );
    if (inserted.rowCount === 0) throw new InvalidArgumentError('id', `run ${id} already exists in ${this.file}`);
    return id;
  }

  async getRun(id: string): Promise<RunInfo | undefined> {
    const [run, counts] = await this.client.batch(
      [
        { sql: 'SELECT * FROM runs WHERE id = $1', params: [id] },
        { sql: RUN_COUNTS_SQL, params: [id] },
      ],
      false,
    );
    const row = run!.rows[0] as RunRow | undefined;
    return row ? runInfo(row, counts!.rows as Array<{ status: CellStatus; n: number }>) : undefined;
  }

  async requireRun(id: string): Promise<RunInfo> {
    const run = await this.getRun(id);
    if (!run) throw new InvalidArgumentError('runId', `no run ${JSON.stringify(id)} in ${this.file}`);
    return run;
  }

  async listRuns(): Promise<RunInfo[]> {
    const [runs, counts] = await this.client.batch(
      [
        { sql: 'SELECT * FROM runs ORDER BY started_at COLLATE "C" DESC, id COLLATE "C" DESC' },
        {
          sql: `SELECT rc.run_id, c.status AS status, count(*)::int AS n FROM run_cells rc JOIN cells c ON c.key = rc.key GROUP BY rc.run_id, c.status`,
        },
      ],
      false,
    );
    const byRun = new Map<string, Array<{ status: CellStatus; n: number }>>();
    for (const row of counts!.rows as Array<{ run_id: string; status: CellStatus; n: number }>) {
      const list = byRun.get(row.run_id) ?? [];
      list.push(row);
      byRun.set(row.run_id, list);
    }
    return (runs!.rows as unknown as RunRow[]).map((row) => runInfo(row, byRun.get(row.id) ?? []));
  }

  async deleteRun(id: string): Promise<{ cellsRemoved: number }> {
    await this.requireRun(id);
    this.writable('DELETE');
    const results = await this.client.batch([
      { sql: 'CREATE TEMP TABLE IF NOT EXISTS echolens_deleted_keys (key TEXT PRIMARY KEY) ON COMMIT DELETE ROWS' },
      { sql: 'INSERT INTO echolens_deleted_keys SELECT DISTINCT key FROM run_cells WHERE run_id = $1 ON CONFLICT DO NOTHING', params: [id] },
      { sql: 'DELETE FROM run_cells WHERE run_id = $1', params: [id] },
      { sql: 'DELETE FROM run_stages WHERE run_id = $1', params: [id] },
      { sql: 'DELETE FROM runs WHERE id = $1', params: [id] },
      {
        sql: `DELETE FROM cells c USING echolens_deleted_keys d
              WHERE c.key = d.key AND NOT EXISTS (SELECT 1 FROM run_cells rc WHERE rc.key = c.key)`,
      },
      // Blobs no remaining cell refers to, directly or through a run blob (`$blobs` bodies list `$blob`s).
      {
        sql: `WITH refs AS (
                SELECT (regexp_matches(request, '"\\$blobs?":"([0-9a-f]{64})"', 'g'))[1] AS hash FROM cells WHERE request LIKE '%"$blob%'
              ), nested AS (
                SELECT (regexp_matches(b.body, '"\\$blob":"([0-9a-f]{64})"', 'g'))[1] AS hash FROM blobs b JOIN refs r ON r.hash = b.hash
              )
              DELETE FROM blobs WHERE hash NOT IN (SELECT hash FROM refs UNION SELECT hash FROM nested)`,
      },
    ]);
    this.blobCacheInstance = undefined;
    this.blobBodies.clear();
    this.blobChars = 0;
    return { cellsRemoved: results[5]!.rowCount };
  }

  async setRunStatus(id: string, requested: RunStatus, summary?: unknown): Promise<void> {
    if (!RUN_STATUSES.includes(requested)) throw new InvalidArgumentError('status', `unknown run status ${requested}`);
    // A run is done only when every stage it declared is (run-stages.ts); until then it stays running.
    const status = requested === 'done' && (await this.stages(id)).some((stage) => !stageComplete(stage)) ? 'running' : requested;
    const now = new Date().toISOString();
    const ended = status === 'running' ? null : now;
    const summaryJson = summary === undefined ? null : JSON.stringify(scrubSecrets(summary, this.secrets));
    const changes = (
      await this.query('UPDATE runs SET status = $1, updated_at = $2, ended_at = $3, summary = coalesce($4, summary) WHERE id = $5', [
        status,
        now,
        ended,
        summaryJson,
        id,
      ])
    ).rowCount;
    if (changes === 0) throw new InvalidArgumentError('runId', `no run ${JSON.stringify(id)} in ${this.file}`);
    if (status === 'running') await this.client.query('SELECT pg_notify($1, $2)', [WORK_CHANNEL, id]);
  }

  // ---- stages (run-stages.ts) ----

  async declareStages(runId: string, stages: readonly StageDeclaration[]): Promise<void> {
    const now = new Date().toISOString();
    await this.client.transaction(async () => {
      for (const [index, stage] of stages.entries()) {
        await this.query(
          `INSERT INTO run_stages (run_id, stage, ordinal, expected, registered, settled, updated_at) VALUES ($1, $2, $3, $4, 0, 0, $5)
           ON CONFLICT (run_id, stage) DO UPDATE SET expected = excluded.expected, updated_at = excluded.updated_at
           WHERE run_stages.registered = 0 AND run_stages.settled = 0`,
          [runId, stage.name, index, stage.expected, now],
        );
      }
    });
  }

  async recordStage(runId: string, stage: string, counts: { expected: number; registered: number; settled: number }): Promise<void> {
    await this.query(
      `INSERT INTO run_stages (run_id, stage, ordinal, expected, registered, settled, updated_at)
       VALUES ($1, $2, (SELECT coalesce(max(ordinal) + 1, 0) FROM run_stages WHERE run_id = $1), $3, $4, $5, $6)
       ON CONFLICT (run_id, stage) DO UPDATE SET expected = excluded.expected, registered = excluded.registered,
         settled = excluded.settled, updated_at = excluded.updated_at`,
      [runId, stage, counts.expected, counts.registered, counts.settled, new Date().toISOString()],
    );
  }

  async stages(runId: string): Promise<StageProgress[]> {
    const rows = (
      await this.query('SELECT stage, ordinal, expected, registered, settled, updated_at FROM run_stages WHERE run_id = $1 ORDER BY ordinal, stage', [runId])
    ).rows as unknown as Array<{ stage: string; ordinal: number; expected: number | null; registered: number; settled: number; updated_at: string }>;
    return rows.map((r) => ({
      stage: r.stage,
      ordinal: Number(r.ordinal),
      expected: r.expected === null ? null : Number(r.expected),
      registered: Number(r.registered),
      settled: Number(r.settled),
      updatedAt: r.updated_at,
    }));
  }

  // ---- cells ----

  private blobCache(): BlobCache {
    this.blobCacheInstance ??= new BlobCache((hash) => {
      const body = this.blobBodies.get(hash);
      if (body === undefined)
        throw new InputError(`a cell's request refers to blob ${hash.slice(0, 12)}…, which the store does not hold (damaged store?)`, { file: this.file });
      return body;
    });
    return this.blobCacheInstance;
  }

  /** Fetches the blob bodies these stored requests refer to (run blobs and the blobs they list) that are not at hand. */
  private async loadBlobs(jsons: readonly string[]): Promise<void> {
    let wanted = new Set<string>();
    for (const json of jsons) for (const hash of blobRefs(json)) if (!this.blobBodies.has(hash)) wanted.add(hash);
    for (let depth = 0; depth < 2 && wanted.size > 0; depth += 1) {
      if (this.blobChars > 64 * 1024 * 1024) {
        this.blobBodies.clear();
        this.blobChars = 0;
      }
      const rows = await this.rows<{ hash: string; body: string }>('SELECT hash, body FROM blobs WHERE hash = ANY($1::text[])', [[...wanted]]);
      const next = new Set<string>();
      for (const row of rows) {
        this.blobBodies.set(row.hash, row.body);
        this.blobChars += row.body.length;
        for (const hash of blobRefs(row.body)) if (!this.blobBodies.has(hash)) next.add(hash);
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

  async registerCells(
    runId: string,
    specs: readonly CellSpec[],
    identities?: readonly Pick<CellIdentity, 'key' | 'contentKey' | 'legacyKey'>[],
  ): Promise<string[]> {
    await this.requireRun(runId);
    if (identities !== undefined && identities.length !== specs.length) throw new InvalidArgumentError('identities', 'must have one identity per spec');
    const now = new Date().toISOString();
    const ids = specs.map((spec, index) => identities?.[index] ?? requestKeys(spec.request));
    // Which keys (and legacy keys) the store holds already: one query, not one per cell.
    const lookup = [...new Set(ids.flatMap((id) => (id.legacyKey === undefined ? [id.key] : [id.key, id.legacyKey])))];
    const existing = new Set<string>();
    for (let start = 0; start < lookup.length; start += 10_000) {
      const rows = await this.rows<{ key: string }>('SELECT key FROM cells WHERE key = ANY($1::text[])', [lookup.slice(start, start + 10_000)]);
      for (const row of rows) existing.add(row.key as string);
    }
    const keys = ids.map((id) => (id.legacyKey !== undefined && !existing.has(id.key) && existing.has(id.legacyKey) ? id.legacyKey : id.key));
    // A store written before a prompt was rearranged keeps the cell under its earlier shape's key (as SQLite).
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
      const stored = new Set<string>();
      const list = [...legacyCandidates];
      for (let start = 0; start < list.length; start += 10_000) {
        for (const row of await this.rows<{ key: string }>('SELECT key FROM cells WHERE key = ANY($1::text[])', [list.slice(start, start + 10_000)]))
          stored.add(row.key);
      }
      specs.forEach((spec, index) => {
        if (spec.legacyRequests === undefined || existing.has(keys[index]!)) return;
        const found = storedLegacyKey(spec.legacyRequests, (key) => stored.has(key));
        if (found !== undefined) {
          keys[index] = found;
          existing.add(found);
        }
      });
    }
    await this.client.transaction(async () => {
      for (let start = 0; start < specs.length; start += REGISTER_CHUNK) {
        const end = Math.min(specs.length, start + REGISTER_CHUNK);
        const blobs = new Map<string, string>();
        const cells = {
          key: [] as string[],
          content: [] as string[],
          model: [] as string[],
          sample: [] as number[],
          request: [] as string[],
          group: [] as (string | null)[],
        };
        const links = { key: [] as string[], labels: [] as string[] };
        const seenLinks = new Set<string>();
        for (let index = start; index < end; index += 1) {
          const spec = specs[index]!;
          const key = keys[index]!;
          if (!existing.has(key)) {
            existing.add(key);
            const encoded = encodeRequest(spec.request);
            for (const [hash, body] of encoded.blobs) if (!blobs.has(hash)) blobs.set(hash, this.scrubValues(body));
            cells.key.push(key);
            cells.content.push(ids[index]!.contentKey);
            cells.model.push(spec.request.model);
            cells.sample.push(spec.request.sample);
            cells.request.push(this.scrubValues(encoded.json));
            cells.group.push(prefixSignature(spec.request));
          }
          const labels = canonicalJson(spec.labels ?? {});
          const link = `${key}\u0000${labels}`;
          if (seenLinks.has(link)) continue;
          seenLinks.add(link);
          links.key.push(key);
          links.labels.push(labels);
        }
        const statements: Statement[] = [];
        if (blobs.size > 0) {
          statements.push({
            sql: 'INSERT INTO blobs (hash, body) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (hash) DO NOTHING',
            params: [[...blobs.keys()], [...blobs.values()]],
          });
        }
        if (cells.key.length > 0) {
          statements.push({
            sql: `INSERT INTO cells (key, content_key, model, sample, request, status, attempts, created_at, prefix_group)
                  SELECT k, ck, m, s, r, 'pending', 0, $7, g FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[]) AS t(k, ck, m, s, r, g)
                  ON CONFLICT (key) DO NOTHING`,
            params: [cells.key, cells.content, cells.model, cells.sample, cells.request, cells.group, now],
          });
        }
        // Ordinals continue the run's plan order; links the run already has are skipped (idempotent resume).
        statements.push({
          sql: `INSERT INTO run_cells (run_id, key, labels, ordinal)
                SELECT $1, t.k, t.l, (SELECT coalesce(max(ordinal), -1) FROM run_cells WHERE run_id = $1) + row_number() OVER (ORDER BY t.i)
                FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS t(k, l, i)
                WHERE NOT EXISTS (SELECT 1 FROM run_cells rc WHERE rc.run_id = $1 AND rc.key = t.k AND rc.labels = t.l)
                ORDER BY t.i`,
          params: [runId, links.key, links.labels],
        });
        this.writable('INSERT');
        await this.client.batch(statements);
      }
      // Waiting workers wake up (LISTEN echolens_work) when the transaction commits.
      await this.client.query('SELECT pg_notify($1, $2)', [WORK_CHANNEL, runId]);
    });
    return keys;
  }

  private scrubValues(json: string): string {
    return scrubJsonValues(json, this.secrets, this.plainSecrets);
  }

  async getCell(key: string): Promise<CellResult | undefined> {
    const row = (await this.rows<CellRow>(`SELECT ${RESULT_COLUMNS} FROM cells c WHERE c.key = $1`, [key]))[0];
    return row ? rowToResult(row, true) : undefined;
  }

  async getCells(keys: Iterable<string>): Promise<Map<string, CellResult>> {
    const list = [...new Set(keys)];
    const out = new Map<string, CellResult>();
    for (let start = 0; start < list.length; start += 10_000) {
      const rows = await this.rows<CellRow>(`SELECT ${RESULT_COLUMNS} FROM cells c WHERE c.key = ANY($1::text[])`, [list.slice(start, start + 10_000)]);
      for (const row of rows) out.set(row.key, rowToResult(row, true));
    }
    // The same order as the keys asked for (the SQLite backend fills the map in that order).
    const ordered = new Map<string, CellResult>();
    for (const key of list) {
      const result = out.get(key);
      if (result) ordered.set(key, result);
    }
    return ordered;
  }

  async resultsOfRun(runId: string): Promise<Map<string, CellResult>> {
    const out = new Map<string, CellResult>();
    const rows = await this.rows<CellRow>(
      `SELECT ${RESULT_COLUMNS} FROM run_cells rc JOIN cells c ON c.key = rc.key WHERE rc.run_id = $1 ORDER BY rc.ordinal`,
      [runId],
    );
    for (const row of rows) out.set(row.key, rowToResult(row, true));
    return out;
  }

  async getRequest(key: string): Promise<ModelRequest | undefined> {
    const json = (await this.rows<{ request: string }>('SELECT request FROM cells WHERE key = $1', [key]))[0]?.request;
    return json === undefined ? undefined : this.decode(json);
  }

  /** One outcome's column values, scrubbed and encoded (stored-text.ts), in OUTCOME_COLUMNS order. */
  private outcomeValues(outcome: CellOutcome): unknown[] {
    return outcomeValues(outcome, this.secrets);
  }

  /**
   * One statement (one round trip, atomic) that writes several outcomes (each refused for a
   * `done` cell) and, with `spend`, adds each run's cost to its spend; its rows are the keys
   * written. Keys must be distinct.
   */
  outcomesStatement(items: ReadonlyArray<{ key: string; outcome: CellOutcome }>, spend?: ReadonlyMap<string, number>): Statement {
    const columns: unknown[][] = OUTCOME_COLUMNS.map(() => []);
    for (const item of items) {
      const values = this.outcomeValues(item.outcome);
      for (const [index, value] of values.entries()) columns[index]!.push(value);
    }
    const keyParam = OUTCOME_COLUMNS.length + 1;
    const unnest = OUTCOME_COLUMNS.map(([, type], index) => `$${index + 1}::${type}[]`).join(', ');
    const names = OUTCOME_COLUMNS.map(([name]) => name).join(', ');
    const params: unknown[] = [...columns, items.map((item) => item.key)];
    let spendSql = '';
    if (spend !== undefined && spend.size > 0) {
      params.push([...spend.keys()], [...spend.values()]);
      spendSql = `, spent AS (UPDATE runs r SET spent_usd = r.spent_usd + s.usd FROM unnest($${keyParam + 1}::text[], $${keyParam + 2}::float8[]) AS s(id, usd) WHERE r.id = s.id)`;
    }
    return {
      sql: `WITH input AS (SELECT * FROM unnest(${unnest}, $${keyParam}::text[]) AS t(${names}, key)),
            written AS (
              UPDATE cells c SET status = i.status, attempts = c.attempts + i.add_attempts, open_attempts = 0, text = i.text, reasoning = i.reasoning,
                finish_reason = i.finish_reason, response_model = i.response_model, input_tokens = i.input_tokens, output_tokens = i.output_tokens,
                cached_input_tokens = i.cached_input_tokens, cache_write_tokens = i.cache_write_tokens, reasoning_tokens = i.reasoning_tokens,
                latency_ms = i.latency_ms, cost_usd = i.cost_usd, error_class = i.error_class, error_message = i.error_message,
                started_at = i.started_at, finished_at = i.finished_at, tool_calls = i.tool_calls,
                lease_owner = NULL, lease_until = NULL, lease_run = NULL, lease_reserved_usd = 0
              FROM input i WHERE c.key = i.key AND c.status <> 'done' RETURNING c.key
            )${spendSql}
            SELECT key FROM written`,
      params,
    };
  }

  /** Writes outcomes (and spend) in one round trip; true per item when written. */
  async writeOutcomes(items: ReadonlyArray<{ key: string; outcome: CellOutcome }>, spend?: ReadonlyMap<string, number>): Promise<boolean[]> {
    if (items.length === 0) return [];
    this.writable('UPDATE');
    if (new Set(items.map((item) => item.key)).size !== items.length) {
      // The same cell twice: one statement would write it once; write them in order, each in its own statement.
      const out: boolean[] = [];
      await this.client.transaction(async () => {
        for (const [index, item] of items.entries()) out.push(...(await this.writeOutcomes([item], index === 0 ? spend : undefined)));
      });
      return out;
    }
    const statement = this.outcomesStatement(items, spend);
    const written = new Set((await this.client.query(statement.sql, statement.params)).rows.map((row) => row.key as string));
    return this.checkWritten(
      items,
      items.map((item) => (written.has(item.key) ? 1 : 0)),
    );
  }

  /** Counts an attempt before the call; `open_attempts` counts those no written outcome has settled yet. */
  async beginAttempts(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.query("UPDATE cells SET attempts = attempts + 1, open_attempts = open_attempts + 1 WHERE key = ANY($1::text[]) AND status <> 'done'", [
      [...keys],
    ]);
  }

  async recordResult(key: string, outcome: CellOutcome): Promise<boolean> {
    return (await this.recordResults([{ key, outcome }]))[0]!;
  }

  async recordResults(items: ReadonlyArray<{ key: string; outcome: CellOutcome }>): Promise<boolean[]> {
    return this.writeOutcomes(items);
  }

  /** True per item when written; a refused write of an unknown key is an error (as in SQLite). */
  async checkWritten(items: ReadonlyArray<{ key: string }>, counts: readonly number[]): Promise<boolean[]> {
    const refused = items.filter((_, index) => counts[index] === 0).map((item) => item.key);
    if (refused.length > 0) {
      const known = new Set((await this.rows<{ key: string }>('SELECT key FROM cells WHERE key = ANY($1::text[])', [refused])).map((row) => row.key));
      const missing = refused.find((key) => !known.has(key));
      if (missing !== undefined) throw new InvalidArgumentError('key', `cell ${missing} is not in ${this.file}; register it first`);
    }
    return counts.map((count) => count > 0);
  }

  async cellsOfRun(runId: string, query: CellQuery = {}): Promise<RunCellRecord[]> {
    await this.requireRun(runId);
    const { sql, params } = buildPgCellQuery(runId, query, true);
    const rows = await this.rows<CellRow & { labels: string; ordinal: number; sample: number }>(`${sql} ORDER BY rc.ordinal`, params);
    const requests = await this.decodeAll(rows.map((row) => row.request));
    return rows.map((row, index) => ({ ...resultRecord(runId, row), request: requests[index]! }));
  }

  async cellResultsOfRun(runId: string, query: CellQuery = {}): Promise<RunCellResultRecord[]> {
    await this.requireRun(runId);
    const { sql, params } = buildPgCellQuery(runId, query, false);
    const rows = await this.rows<CellRow & { labels: string; ordinal: number; sample: number }>(`${sql} ORDER BY rc.ordinal`, params);
    return rows.map((row) => resultRecord(runId, row));
  }

  async cellIndexOfRun(runId: string): Promise<RunCellIndexRow[]> {
    return (
      await this.rows<RunCellIndexRow>(
        `SELECT rc.key AS key, rc.labels AS labels, rc.ordinal AS ordinal, c.status AS status, c.text AS text, c.model AS model, c.tool_calls AS tool_calls
       FROM run_cells rc JOIN cells c ON c.key = rc.key WHERE rc.run_id = $1 ORDER BY rc.ordinal`,
        [runId],
      )
    ).map(decodeIndexRow);
  }

  async findByContent(key: string, model?: string): Promise<Array<{ model: string; result: CellResult }>> {
    const rows = await this.rows<CellRow>(
      `SELECT ${RESULT_COLUMNS} FROM cells c WHERE c.content_key = $1 AND c.status IN ('done', 'empty')
       ORDER BY c.finished_at COLLATE "C" DESC, c.key COLLATE "C"`,
      [key],
    );
    return rows.filter((row) => model === undefined || row.model === model).map((row) => ({ model: row.model, result: rowToResult(row, true) }));
  }

  async exportJsonl(runId: string, stream: Writable): Promise<number> {
    await this.requireRun(runId);
    let after = -1;
    let lines = 0;
    for (;;) {
      const rows = await this.rows<CellRow & { labels: string; ordinal: number }>(
        `SELECT c.*, rc.labels, rc.ordinal FROM run_cells rc JOIN cells c ON c.key = rc.key
         WHERE rc.run_id = $1 AND rc.ordinal > $2 ORDER BY rc.ordinal LIMIT 500`,
        [runId, after],
      );
      if (rows.length === 0) break;
      const requests = await this.decodeAll(rows.map((row) => row.request));
      for (const [index, row] of rows.entries()) {
        await writeJsonLine(stream, exportRecord(runId, row, requests[index]));
        lines += 1;
      }
      after = rows[rows.length - 1]!.ordinal;
    }
    return lines;
  }
}

/** The columns one outcome writes, with their PostgreSQL types (outcomesStatement). */
const OUTCOME_COLUMNS: ReadonlyArray<readonly [string, string]> = [
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

/** The channel on which a store announces claimable work (registered cells, a run set running, reopened cells). */
export const WORK_CHANNEL = 'echolens_work';

const RUN_COUNTS_SQL = `SELECT c.status AS status, count(*)::int AS n FROM run_cells rc JOIN cells c ON c.key = rc.key WHERE rc.run_id = $1 GROUP BY c.status`;

function runInfo(row: RunRow, counts: ReadonlyArray<{ status: CellStatus; n: number }>): RunInfo {
  return runInfoOfRow(row, tallyCounts(counts));
}

/** The SQLite backend's label query in PostgreSQL: a label equals the value (a missing label equals null). */
function buildPgCellQuery(runId: string, query: CellQuery, withRequest: boolean): { sql: string; params: unknown[] } {
  const clauses = ['rc.run_id = $1'];
  const params: unknown[] = [runId];
  for (const [name, value] of Object.entries(query.labels ?? {})) {
    params.push(name, JSON.stringify(typeof value === 'boolean' ? Number(value) : value));
    // SQLite's json_extract turns JSON true/false into 1/0; compare the same way.
    clauses.push(
      `(CASE jsonb_typeof(rc.labels::jsonb -> $${params.length - 1}) WHEN 'boolean' THEN to_jsonb(((rc.labels::jsonb ->> $${params.length - 1})::boolean)::int) ELSE coalesce(rc.labels::jsonb -> $${params.length - 1}, 'null'::jsonb) END) = $${params.length}::jsonb`,
    );
  }
  if (query.status !== undefined) {
    const statuses = Array.isArray(query.status) ? query.status : [query.status];
    if (statuses.length === 0) throw new InvalidArgumentError('query.status', 'must name at least one status');
    params.push(statuses);
    clauses.push(`c.status = ANY($${params.length}::text[])`);
  }
  return {
    sql: `SELECT ${RESULT_COLUMNS}${withRequest ? ', c.request' : ''}, rc.labels, rc.ordinal FROM run_cells rc JOIN cells c ON c.key = rc.key WHERE ${clauses.join(' AND ')}`,
    params,
  };
}

/** Blob hashes a stored request or run blob refers to. */
function blobRefs(json: string): string[] {
  if (!json.includes('"$blob')) return [];
  return [...json.matchAll(/"\$blobs?":"([0-9a-f]{64})"/g)].map((match) => match[1]!);
}

/** A connection string as shown in messages and listings: the password replaced. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    for (const name of [...parsed.searchParams.keys()]) if (/pass|secret|key|token/i.test(name)) parsed.searchParams.set(name, '***');
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@');
  }
}

export { PgError };
