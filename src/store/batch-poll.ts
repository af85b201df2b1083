import type { BatchState } from '../models/batch/index.js';
import { RETRYABLE_KINDS } from '../models/errors.js';
import { defaultSleep } from '../models/retry.js';
import { collectJob, UnreadableResults } from './batch-collect.js';
import { type BatchSession, kindOf, type OpenJob } from './batch-session.js';

/** Failed polls in a row, or failed result reads of one job, before the run stops. */
const MAX_ERRORS = 5;

/**
 * Polls the open jobs until each has ended and been collected, or the run stops. A budget
 * stop submits nothing more but still collects what was submitted (like in-flight calls
 * online); an interrupt or a fatal error ends polling, and the jobs stay recorded for the
 * next start.
 */
export async function pollUntilCollected(session: BatchSession): Promise<void> {
  const { tally, options, active } = session;
  const sleep = options.sleep ?? defaultSleep;
  const polling = () => !tally.stopped || tally.stopReason === 'budget';
  while (active.length > 0 && polling()) {
    await session.onPollTick?.();
    for (const open of [...active]) {
      if (!polling()) break;
      if (await pollOne(session, open)) {
        active.splice(active.indexOf(open), 1);
        options.onProgress?.(snapshot(session));
      }
    }
    options.onProgress?.(snapshot(session));
    if (active.length === 0 || !polling()) break;
    try {
      await sleep(options.pollIntervalMs ?? 30_000, session.pollSignal);
    } catch {
      break; // interrupted while waiting: jobs stay recorded
    }
  }
}

function snapshot(session: BatchSession) {
  const held = session.heldKeys;
  const snap = session.tally.snapshot();
  return { ...snap, inFlight: [...session.requestOf.keys()].filter((key) => held.has(key)).length };
}

/** One status poll of a job, and its collection once ended. True when the job is done with. */
async function pollOne(session: BatchSession, open: OpenJob): Promise<boolean> {
  const { options, notify, jobs } = session;
  const { job } = open;
  let state: BatchState;
  try {
    state = await open.client.state(job.batchId!, options.hardSignal);
    open.pollErrors = 0;
  } catch (error) {
    if (options.hardSignal?.aborted) return false;
    open.pollErrors += 1;
    if (!retryable(error) || open.pollErrors >= MAX_ERRORS) {
      session.halt('fatal', `polling ${open.provider} batch ${job.batchId} failed: ${(error as Error).message}`, kindOf(error));
      return false;
    }
    notify(`batch: polling ${job.batchId} failed (${(error as Error).message}); trying again`);
    return false;
  }
  const c = state.counts;
  const note = `${c.succeeded}/${c.total} done, ${c.failed} failed, ${c.processing} processing (${state.providerStatus})`;
  if (note !== open.lastNote) {
    open.lastNote = note;
    await jobs.observed(job.id, state.providerStatus, note);
    notify(`batch ${job.batchId} (${job.model}): ${note}`);
  }
  if (!state.ended) return false;
  await jobs.finish(job.id, 'ended');
  try {
    await collectJob(session, open, state);
    return true;
  } catch (error) {
    if (error instanceof UnreadableResults) {
      session.halt('fatal', error.message, 'batch_unreadable');
      return true;
    }
    // The job stays `ended` in the store: the next poll (or the next run) collects it again.
    if (options.hardSignal?.aborted) return false;
    open.collectErrors += 1;
    if (!retryable(error) || open.collectErrors >= MAX_ERRORS) {
      session.halt('fatal', `reading the results of ${open.provider} batch ${job.batchId} failed: ${(error as Error).message}`, kindOf(error));
      return false;
    }
    notify(`batch: reading the results of ${job.batchId} failed (${(error as Error).message}); trying again`);
    return false;
  }
}

function retryable(error: unknown): boolean {
  return RETRYABLE_KINDS.has(kindOf(error) as never);
}
