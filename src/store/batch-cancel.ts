import type { BatchClient } from '../models/batch/index.js';
import type { BatchJob } from './batch-jobs.js';
import type { BatchJobLedger } from './run-store.js';
import { claimedBatchIds, findCreatedBatch } from './batch-resume.js';

/**
 * Cancelling open batches at the provider: a second Ctrl-C during a `--batch` run, and
 * `echolens runs cancel-batches <db>`. A cancelled batch ends soon after; the lines it had
 * already processed keep their results (and are billed), the rest end `canceled`. The jobs
 * stay open in the store, so the next run of the same command collects what finished and
 * submits the cancelled cells again.
 */
export interface CancelOutcome {
  job: BatchJob;
  batchId: string | null;
  /** `cancelled`, `not-found` (a submitting job the provider has no batch of), or the error. */
  result: 'cancelled' | 'not-found' | { error: string };
}

export async function cancelJobs(
  jobs: BatchJobLedger,
  list: readonly BatchJob[],
  clientOf: (job: BatchJob) => BatchClient,
  options: { timeoutMs?: number; notify?: (line: string) => void } = {},
): Promise<CancelOutcome[]> {
  const out: CancelOutcome[] = [];
  for (const job of list) {
    // Its own deadline: this runs after the run's signals were aborted.
    const signal = AbortSignal.timeout(options.timeoutMs ?? 30_000);
    let batchId = job.batchId;
    try {
      const client = clientOf(job);
      if (batchId === null) {
        const created = await findCreatedBatch(client, job, await claimedBatchIds(jobs), signal);
        if (created === null) {
          out.push({ job, batchId, result: 'not-found' });
          continue;
        }
        batchId = created.id;
        await jobs.submitted(job.id, batchId);
      }
      await client.cancel(batchId, signal);
      out.push({ job, batchId, result: 'cancelled' });
      options.notify?.(`batch: cancelled ${job.provider} batch ${batchId} (${job.model}, ${job.keys.length} cells)`);
    } catch (error) {
      out.push({ job, batchId, result: { error: (error as Error).message } });
      options.notify?.(`batch: cancelling ${batchId ?? `job ${job.id}`} failed: ${(error as Error).message}`);
    }
  }
  return out;
}
