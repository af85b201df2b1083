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
    return stepFailed(session, open, error, 'pollErrors', 'polling');
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
    return stepFailed(session, open, error, 'collectErrors', 'reading the results of');
  }
}

/** A failed poll or results read: tried again on the next round, unless it is not retryable or failed too often (the run stops). */
function stepFailed(session: BatchSession, open: OpenJob, error: unknown, errors: 'pollErrors' | 'collectErrors', doing: string): false {
  if (session.options.hardSignal?.aborted) return false;
  open[errors] += 1;
  const message = (error as Error).message;
  if (!RETRYABLE_KINDS.has(kindOf(error) as never) || open[errors] >= MAX_ERRORS) {
    session.halt('fatal', `${doing} ${open.provider} batch ${open.job.batchId} failed: ${message}`, kindOf(error));
  } else session.notify(`batch: ${doing} ${open.job.batchId} failed (${message}); trying again`);
  return false;
}
