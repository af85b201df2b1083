import { sha256Hex } from '../core/canonical-json.js';
import type { BatchClient, BatchTag, ListedBatch } from '../models/batch/index.js';
import type { BatchJob } from './batch-jobs.js';
import type { BatchJobLedger } from './run-store.js';
import { type BatchSession, kindOf, openJob } from './batch-session.js';

/**
 * A killed run may leave a job `submitting`: its create call was sent, but the provider's
 * batch id was never written. The provider may or may not have made the batch, so before
 * the cells are submitted again the open batches are listed and matched to the job
 * (docs/decisions.md, "Batch runs"). OpenAI keeps the tag echolens puts in each batch's
 * `metadata`; Anthropic keeps no metadata, so a batch created after the job began with
 * exactly the job's number of requests, and claimed by no other job, is taken (its
 * results' custom_ids are checked when it is collected).
 */

/** Slack for the clocks of the provider and this machine when matching by creation time. */
const CLOCK_SLACK_MS = 5 * 60_000;

/** The tag of a job: derived from the job row, so nothing more has to be stored before the create call. */
export function batchTagOf(job: Pick<BatchJob, 'id' | 'runId' | 'submittedAt'>): BatchTag {
  return { run: job.runId, tag: `echolens-${sha256Hex(`${job.runId}\u0000${job.id}\u0000${job.submittedAt}`).slice(0, 24)}` };
}

/** The provider's batch made by a `submitting` job's create call, or null when there is none. */
export async function findCreatedBatch(client: BatchClient, job: BatchJob, claimed: ReadonlySet<string>, signal?: AbortSignal): Promise<ListedBatch | null> {
  const began = Date.parse(job.submittedAt);
  const listed = (await client.list(began - CLOCK_SLACK_MS, signal)).filter((batch) => !claimed.has(batch.id));
  const { tag } = batchTagOf(job);
  const tagged = listed.find((batch) => batch.tag === tag);
  if (tagged !== undefined) return tagged;
  if (client.provider === 'openai') return null; // OpenAI batches carry the tag: an untagged one is not ours.
  const candidates = listed.filter((batch) => batch.tag === undefined && batch.total === job.keys.length);
  candidates.sort((a, b) => Math.abs(a.createdAt - began) - Math.abs(b.createdAt - began));
  return candidates[0] ?? null;
}

/** Batch ids every job of the store already holds. */
export async function claimedBatchIds(jobs: BatchJobLedger): Promise<Set<string>> {
  return new Set((await jobs.all()).flatMap((job) => (job.batchId === null ? [] : [job.batchId])));
}

/**
 * Jobs an earlier (perhaps killed) run left open, collected before anything new is submitted:
 * those of this run and those holding a cell of this plan (another run's unrelated jobs are
 * left to that run). A `submitting` job is matched to the provider's batches first.
 */
export async function resumeOpenJobs(session: BatchSession): Promise<void> {
  const { jobs, runId, requestOf, notify } = session;
  for (const found of await jobs.open()) {
    if (found.runId !== runId && !found.keys.some((key) => requestOf.has(key))) continue;
    let job = found;
    try {
      const { client, provider } = session.openClient(job.model);
      if (job.batchId === null) {
        const created = await findCreatedBatch(client, job, await claimedBatchIds(jobs), session.options.hardSignal);
        if (created === null) {
          await jobs.finish(job.id, 'abandoned', 'no batch id was recorded and the provider lists no batch of this job: the create call never made one');
          notify(`batch: job ${job.id} (${job.model}) has no provider batch id and the provider has no batch of it; its ${job.keys.length} cells are released`);
          continue;
        }
        await jobs.submitted(job.id, created.id);
        job = (await jobs.get(job.id))!;
        notify(`batch: job ${job.id} (${job.model}) was killed inside its create call; found its ${provider} batch ${created.id} and collecting it`);
      }
      session.active.push(openJob(job, client, provider));
      for (const key of job.keys) session.heldKeys.add(key);
      notify(`batch: resuming ${provider} batch ${job.batchId} (${job.model}, ${job.keys.length} cells)`);
    } catch (error) {
      const what =
        job.batchId === null
          ? `job ${job.id} (${job.model}): the provider's batches cannot be listed to find it`
          : `batch ${job.batchId} (${job.model}) cannot be polled`;
      session.halt('fatal', `${what}: ${(error as Error).message}`, kindOf(error));
      return;
    }
  }
}
