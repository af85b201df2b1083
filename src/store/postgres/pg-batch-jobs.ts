import { type BatchJob, type JobRow, jobOfRow, OPEN } from '../batch-jobs.js';
import type { BatchJobLedger } from '../run-store-common.js';
import type { PgClient } from './pg-client.js';

/** The batch-job ledger (batch-jobs.ts) on PostgreSQL: the same rows and transitions. */

export class PgBatchJobs implements BatchJobLedger {
  constructor(private readonly client: PgClient) {}

  async begin(runId: string, provider: string, model: string, keys: readonly string[], now = new Date()): Promise<number> {
    return this.client.transaction(async () => {
      const row = (
        await this.client.query("INSERT INTO batch_jobs (run_id, provider, model, status, submitted_at) VALUES ($1, $2, $3, 'submitting', $4) RETURNING id", [
          runId,
          provider,
          model,
          now.toISOString(),
        ])
      ).rows[0]!;
      const id = Number(row.id);
      await this.client.query(
        'INSERT INTO batch_job_cells (job_id, key) SELECT $1, k FROM unnest($2::text[]) WITH ORDINALITY AS t(k, i) ORDER BY t.i ON CONFLICT DO NOTHING',
        [id, [...keys]],
      );
      return id;
    });
  }

  async submitted(id: number, batchId: string): Promise<void> {
    await this.client.query("UPDATE batch_jobs SET batch_id = $1, status = 'submitted' WHERE id = $2", [batchId, id]);
  }

  async observed(id: number, providerStatus: string, note: string): Promise<void> {
    await this.client.query('UPDATE batch_jobs SET provider_status = $1, note = $2 WHERE id = $3', [providerStatus, note, id]);
  }

  async finish(id: number, status: 'ended' | 'collected' | 'failed' | 'abandoned', note?: string, now = new Date()): Promise<void> {
    await this.client.query('UPDATE batch_jobs SET status = $1, ended_at = COALESCE(ended_at, $2), note = COALESCE($3, note) WHERE id = $4', [
      status,
      now.toISOString(),
      note ?? null,
      id,
    ]);
  }

  async get(id: number): Promise<BatchJob | undefined> {
    const row = (await this.client.query('SELECT * FROM batch_jobs WHERE id = $1', [id])).rows[0] as JobRow | undefined;
    return row === undefined ? undefined : (await this.toJobs([row]))[0];
  }

  async open(): Promise<BatchJob[]> {
    return this.toJobs(
      (await this.client.query('SELECT * FROM batch_jobs WHERE status = ANY($1::text[]) ORDER BY id', [[...OPEN]])).rows as unknown as JobRow[],
    );
  }

  async all(runId?: string): Promise<BatchJob[]> {
    const rows =
      runId === undefined
        ? (await this.client.query('SELECT * FROM batch_jobs ORDER BY id')).rows
        : (await this.client.query('SELECT * FROM batch_jobs WHERE run_id = $1 ORDER BY id', [runId])).rows;
    return this.toJobs(rows as unknown as JobRow[]);
  }

  /** Jobs with their cell keys (one query for the keys of every job). */
  private async toJobs(rows: readonly JobRow[]): Promise<BatchJob[]> {
    if (rows.length === 0) return [];
    const keyRows = (
      await this.client.query('SELECT job_id, key FROM batch_job_cells WHERE job_id = ANY($1::bigint[]) ORDER BY job_id, position', [
        rows.map((row) => String(row.id)),
      ])
    ).rows as Array<{ job_id: string | number; key: string }>;
    const keysOf = new Map<number, string[]>();
    for (const r of keyRows) {
      const list = keysOf.get(Number(r.job_id)) ?? [];
      list.push(r.key);
      keysOf.set(Number(r.job_id), list);
    }
    return rows.map((row) => jobOfRow(row, keysOf.get(Number(row.id)) ?? []));
  }
}
