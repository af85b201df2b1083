import { openStore } from '../../store/run-store.js';
import { emit } from '../options.js';
import { closing } from '../../core/closing.js';

/**
 * `echolens runs cancel-batches <db> [--run <id>]`: asks the provider to cancel every open batch
 * job of the store (or of one run). Jobs killed inside their create call are first matched to the
 * provider's batches by their tag. The jobs stay open in the store, so the next run of the same
 * command collects what the batches finished. Returns the exit code: 0, or 1 when a cancel failed.
 */
export async function cancelBatchesCommand(db: string, runId: string | undefined, env: Record<string, string | undefined> = process.env): Promise<number> {
  const [{ cancelJobs }, batch] = await Promise.all([import('../../store/batch-cancel.js'), import('../../models/batch/index.js')]);
  return closing(openStore(db), async (store) => {
    if (runId !== undefined) await store.requireRun(runId);
    const jobs = store.batchJobs();
    const open = (await jobs.open()).filter((job) => runId === undefined || job.runId === runId);
    if (open.length === 0) {
      emit(`no open batches in ${db}${runId === undefined ? '' : ` for run ${runId}`}`);
      return 0;
    }
    const outcomes = await cancelJobs(jobs, open, (job) => batch.createBatchClient(batch.batchEndpointOf(job.model, env)));
    const lines = outcomes.map(({ job, batchId, result }) => {
      const what = `${job.provider} ${batchId ?? `job ${job.id}`} (${job.model}, run ${job.runId}, ${job.keys.length} cells)`;
      if (result === 'cancelled') return `cancelled ${what}`;
      if (result === 'not-found') return `not found at the provider: ${what} (it was never created; the next run submits its cells)`;
      return `could not cancel ${what}: ${result.error}`;
    });
    const cancelled = outcomes.filter((o) => o.result === 'cancelled').length;
    lines.push(`${cancelled} of ${outcomes.length} open batches cancelled; re-run the same command to collect what they finished and submit the rest again`);
    emit(lines.join('\n'));
    return outcomes.some((o) => typeof o.result === 'object') ? 1 : 0;
  });
}
