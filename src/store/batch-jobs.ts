import type Database from 'better-sqlite3';
import { type SqlExecutor, SqliteExecutor } from './sql/executor.js';
import { createTable } from './sql/tables.js';
import { getOrInsert } from '../core/get-or-insert.js';
import { columns } from './sql/dialect.js';

/**
 * Provider batch jobs (OpenAI Batch API, Anthropic Message Batches) a run
 * submitted, persisted so that a killed run finds them again: on the next start
 * their results are collected before anything new is submitted, and a cell held
 * by an open job is never submitted a second time.
 *
 * A job is `submitting` from just before the provider call that creates it until
 * the provider's batch id is written (`submitted`); `ended` once the provider
 * finished it, `collected` once every result is in the cells table, `abandoned`
 * when a resume found a `submitting` row without a batch id and the provider lists
 * no batch carrying the job's tag (the process died inside the create call before
 * the provider made the batch), so its cells are released — see batch-resume.ts and
 * docs/decisions.md "Batch runs".
 */

export type BatchJobStatus = 'submitting' | 'submitted' | 'ended' | 'collected' | 'failed' | 'abandoned';

export interface BatchJob {
  id: number;
  runId: string;
  /** `openai` or `anthropic` (the wire format). */
  provider: string;
  /** The model ref every cell of the job names. */
  model: string;
  batchId: string | null;
  status: BatchJobStatus;
  providerStatus: string | null;
  keys: string[];
  submittedAt: string;
  endedAt: string | null;
  /** Last counts seen while polling (JSON), or the failure reason. */
  note: string | null;
}

/** The migration that adds the batch tables (self-contained; safe on a file that already has them). */
export function migrateBatchJobs(db: Database.Database): void {
  db.exec(createTable('sqlite', 'batch_jobs'));
  db.exec(createTable('sqlite', 'batch_job_cells'));
  db.exec('CREATE INDEX IF NOT EXISTS batch_job_cells_key ON batch_job_cells (key)');
}

/** A row of `batch_jobs` (PostgreSQL returns a bigint id as a string). */
export interface JobRow {
  id: number | string;
  run_id: string;
  provider: string;
  model: string;
  batch_id: string | null;
  status: BatchJobStatus;
  provider_status: string | null;
  submitted_at: string;
  ended_at: string | null;
  note: string | null;
}

/** The statuses of a job still in progress. */
export const OPEN: readonly BatchJobStatus[] = ['submitting', 'submitted', 'ended'];

/** A job from its row and its cell keys, in both backends. */
export function jobOfRow(row: JobRow, keys: string[]): BatchJob {
  return {
    id: Number(row.id),
    runId: row.run_id,
    provider: row.provider,
    model: row.model,
    batchId: row.batch_id,
    status: row.status,
    providerStatus: row.provider_status,
    keys,
    submittedAt: row.submitted_at,
    endedAt: row.ended_at,
    note: row.note,
  };
}

/**
 * Reads and writes the batch tables of one store's database, on either backend (each query
 * written once, src/store/sql/). Given a better-sqlite3 handle, it runs on its own executor.
 */
export class BatchJobs {
  private readonly exec: SqlExecutor;

  constructor(db: SqlExecutor | Database.Database) {
    this.exec = 'dialect' in db ? db : new SqliteExecutor(db);
  }

  /** Records a job before its create call; the cells are held from this moment. */
  async begin(runId: string, provider: string, model: string, keys: readonly string[], now = new Date()): Promise<number> {
    return this.exec.transaction(async () => {
      const row = await this.exec.get<{ id: number | string }>(
        "INSERT INTO batch_jobs (run_id, provider, model, status, submitted_at) VALUES (?, ?, ?, 'submitting', ?) RETURNING id",
        [runId, provider, model, now.toISOString()],
      );
      const id = Number(row!.id);
      const input = this.exec.dialect.rows(
        columns({ key: 'text' }),
        keys.map((key) => [key]),
      );
      await this.exec.run(`INSERT INTO batch_job_cells (job_id, key) SELECT ?, t.key FROM ${input.sql} t WHERE true ORDER BY t.i ON CONFLICT DO NOTHING`, [
        id,
        ...input.params,
      ]);
      return id;
    });
  }

  async submitted(id: number, batchId: string): Promise<void> {
    await this.exec.run("UPDATE batch_jobs SET batch_id = ?, status = 'submitted' WHERE id = ?", [batchId, id]);
  }

  /** Last provider status and counts seen. */
  async observed(id: number, providerStatus: string, note: string): Promise<void> {
    await this.exec.run('UPDATE batch_jobs SET provider_status = ?, note = ? WHERE id = ?', [providerStatus, note, id]);
  }

  async finish(id: number, status: 'ended' | 'collected' | 'failed' | 'abandoned', note?: string, now = new Date()): Promise<void> {
    await this.exec.run('UPDATE batch_jobs SET status = ?, ended_at = COALESCE(ended_at, ?), note = COALESCE(?, note) WHERE id = ?', [
      status,
      now.toISOString(),
      note ?? null,
      id,
    ]);
  }

  async get(id: number): Promise<BatchJob | undefined> {
    const row = await this.exec.get<JobRow>('SELECT * FROM batch_jobs WHERE id = ?', [id]);
    return row === undefined ? undefined : (await this.toJobs([row]))[0];
  }

  /** Jobs not yet collected (`submitting`, `submitted`, `ended`), oldest first. */
  async open(): Promise<BatchJob[]> {
    const list = this.exec.dialect.inList('status', 'text', OPEN);
    return this.toJobs(await this.exec.all<JobRow>(`SELECT * FROM batch_jobs WHERE ${list.sql} ORDER BY id`, list.params));
  }

  async all(runId?: string): Promise<BatchJob[]> {
    const where = runId === undefined ? { sql: '', params: [] } : { sql: 'WHERE run_id = ?', params: [runId] };
    return this.toJobs(await this.exec.all<JobRow>(`SELECT * FROM batch_jobs ${where.sql} ORDER BY id`, where.params));
  }

  /** Jobs with their cell keys, in the order they were recorded (one query for the keys of every job). */
  private async toJobs(rows: readonly JobRow[]): Promise<BatchJob[]> {
    if (rows.length === 0) return [];
    const list = this.exec.dialect.inList(
      'job_id',
      'bigint',
      rows.map((row) => Number(row.id)),
    );
    const keyRows = await this.exec.all<{ job_id: string | number; key: string }>(
      `SELECT job_id, key FROM batch_job_cells WHERE ${list.sql} ORDER BY job_id, ${this.exec.dialect.jobCellOrder}`,
      list.params,
    );
    const keysOf = new Map<number, string[]>();
    for (const r of keyRows) getOrInsert(keysOf, Number(r.job_id), () => []).push(r.key);
    return rows.map((row) => jobOfRow(row, keysOf.get(Number(row.id)) ?? []));
  }
}
