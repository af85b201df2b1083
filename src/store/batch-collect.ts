import type { BatchLineResult, BatchResults, BatchState } from '../models/batch/index.js';
import { ModelCallError } from '../models/errors.js';
import { type ModelRequest, type TokenUsage, ZERO_USAGE } from '../models/types.js';
import { settleLines } from './batch-lines.js';
import { type BatchModule, type BatchSession, kindOf, type OpenJob } from './batch-session.js';
import type { CellOutcome } from './run-store.js';
import { answered, emptyAnswer, naiveCostOf, priceOf } from './runner-call.js';
import { storeOutcomes } from './runner-commit.js';
import type { CostFn } from './runner-types.js';

type OutcomeBase = Pick<CellOutcome, 'attempts' | 'startedAt' | 'finishedAt' | 'latencyMs' | 'reasoning' | 'responseModel' | 'finishReason'>;

/** Cells decoded and committed together when a job is collected. */
const COLLECT_SLICE = 256;

/** Downloads of a results file with unparseable lines before echolens gives up on those lines. */
export const DEFAULT_MAX_RESULT_READS = 3;

/** Results that stay unreadable after the bounded re-reads: the valid lines were stored, the rest failed. */
export class UnreadableResults extends Error {
  constructor(
    readonly batchId: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Collects an ended job: reads its results strictly (batch-lines.ts), writes one outcome
 * per cell it holds, tallies them and closes the job. A results file with unparseable lines
 * is read again (a torn download) up to `maxResultReads` times; after that the valid lines
 * are stored, the cells without one fail (`batch_unreadable`, submitted again by a re-run)
 * and `UnreadableResults` is thrown for the runner to stop with.
 */
export async function collectJob(session: BatchSession, open: OpenJob, state: BatchState): Promise<void> {
  const { job } = open;
  const { options, notify } = session;
  let results: BatchResults = { lines: [], invalid: [] };
  if (state.failure === undefined) {
    results = await open.client.results(job.batchId!, options.hardSignal);
    if (results.invalid.length > 0) {
      open.unreadableReads += 1;
      const first = results.invalid[0]!;
      const where = `${first.source} line ${first.line}${results.invalid.length > 1 ? ` and ${results.invalid.length - 1} more` : ''}`;
      if (open.unreadableReads < (options.maxResultReads ?? DEFAULT_MAX_RESULT_READS)) {
        throw new ModelCallError('malformed', `${open.provider} batch ${job.batchId}: ${where} not JSON`, { provider: open.provider });
      }
    }
  }
  const settled = settleLines(job.keys, results.lines, results.invalid);
  const invalid = results.invalid;
  // The settled lines hold the bodies from here; each is released once its cell is committed.
  results = { lines: [], invalid };
  const base: OutcomeBase = {
    attempts: 1,
    startedAt: job.submittedAt,
    finishedAt: new Date().toISOString(),
    latencyMs: null,
    reasoning: null,
    responseModel: null,
    finishReason: null,
  };
  const price = session.batchCostOf(open.provider);
  let answered = 0;
  let failedLines = 0;
  let unreadable = 0;
  // Committed a slice at a time: a large batch never holds every decoded answer at once.
  for (let from = 0; from < job.keys.length; from += COLLECT_SLICE) {
    const items: Array<{ key: string; outcome: CellOutcome }> = [];
    for (const key of job.keys.slice(from, from + COLLECT_SLICE)) {
      const request = session.requestOf.get(key) ?? (await session.store.getRequest(key));
      if (request === undefined) continue; // the cell was deleted with its run
      let outcome: CellOutcome;
      if (state.failure !== undefined) {
        outcome = failed(base, 'batch_failed', `the ${open.provider} batch ${job.batchId} failed: ${state.failure}`);
      } else {
        const verdict = settled.verdictOf(key);
        switch (verdict.kind) {
          case 'line':
            outcome = await lineOutcome(session.batch, request, verdict.line, session.env, base, price);
            break;
          case 'conflict':
            outcome = failed(base, 'batch_conflict', verdict.reason);
            break;
          case 'unreadable':
            outcome = failed(base, 'batch_unreadable', `${verdict.reason} (a re-run submits it again)`);
            break;
          case 'missing':
            outcome = failed(base, 'batch_missing', `the ${open.provider} batch ${job.batchId} ended without a result for this cell`);
            break;
        }
      }
      items.push({ key, outcome });
    }
    // A result the store cannot hold fails its cell with a `storage: …` error (runner-commit.ts).
    const committed = await storeOutcomes(items, (batch) => session.store.recordResults(batch));
    committed.forEach((c, index) => {
      const item = items[index]!;
      item.outcome = c.outcome;
      settled.release(item.key);
      session.heldKeys.delete(item.key);
      if (item.outcome.status === 'failed') failedLines += 1;
      else answered += 1;
      if (item.outcome.errorClass === 'batch_unreadable') unreadable += 1;
      if (!c.written || !session.requestOf.has(item.key)) return;
      // Calls were counted when the batch was submitted; naive = online, no cache, no batch discount.
      const model = session.requestOf.get(item.key)!.model;
      session.tally.record(item.outcome, 0, naiveCostOf(session.onlineCostOf, model, item.outcome.usage));
      session.tally.finish(item.outcome);
      session.onCollected?.(item.key, item.outcome);
    });
  }
  const note = [
    state.failure,
    settled.duplicates > 0 ? `${settled.duplicates} repeated result lines ignored` : undefined,
    settled.conflicts.length > 0 ? `${settled.conflicts.length} cells with conflicting result lines failed` : undefined,
    unreadable > 0 ? `${unreadable} cells without a readable result failed` : undefined,
    settled.foreign > 0 ? `${settled.foreign} result lines for cells this job does not hold` : undefined,
  ].filter((part): part is string => part !== undefined);
  await session.jobs.finish(job.id, state.failure === undefined ? 'collected' : 'failed', note.length > 0 ? note.join('; ') : undefined);
  if (settled.conflicts.length > 0) {
    notify(
      `warning: ${open.provider} batch ${job.batchId} has conflicting result lines for ${settled.conflicts.length} cell(s) (${settled.conflicts
        .slice(0, 3)
        .map((k) => k.slice(0, 12))
        .join(', ')}…): they are failed, not guessed; a re-run asks again`,
    );
  }
  if (settled.foreign > 0)
    notify(`warning: ${open.provider} batch ${job.batchId} returned ${settled.foreign} result line(s) for cells its job does not hold; ignored`);
  notify(`batch: collected ${open.provider} batch ${job.batchId}: ${answered} answered, ${failedLines} failed`);
  if (unreadable > 0) {
    throw new UnreadableResults(
      job.batchId!,
      `the results of ${open.provider} batch ${job.batchId} still had unparseable lines after ${open.unreadableReads} downloads (${invalid
        .slice(0, 3)
        .map((bad) => `${bad.source} line ${bad.line}`)
        .join(', ')}): ${answered + failedLines - unreadable} results were stored, ${unreadable} cell(s) failed`,
    );
  }
}

function failed(base: OutcomeBase, errorClass: string, message: string): CellOutcome {
  return { ...base, status: 'failed', text: null, usage: { ...ZERO_USAGE }, costUsd: null, errorClass, errorMessage: message };
}

async function lineOutcome(
  batch: BatchModule,
  request: ModelRequest,
  line: BatchLineResult,
  env: Record<string, string | undefined>,
  base: OutcomeBase,
  price: CostFn,
): Promise<CellOutcome> {
  if (line.kind === 'errored') return failed(base, line.errorClass, line.message);
  if (line.kind !== 'succeeded')
    return failed(base, line.kind === 'expired' ? 'batch_expired' : 'batch_canceled', `${line.message} (a later run resubmits it)`);
  // A succeeded line is read by the online adapter's own parser; an empty answer is `empty`, as online.
  const priced = (usage: TokenUsage) => priceOf(price, request.model, usage);
  try {
    const response = await batch.decodeWireResponse(request, line.body, env);
    return { ...base, ...answered(response, response.usage, priced) };
  } catch (error) {
    if (error instanceof ModelCallError && error.kind === 'empty') {
      return { ...base, ...emptyAnswer(error.response, error.response?.usage ?? { ...ZERO_USAGE }, priced, error.message) };
    }
    return failed(base, kindOf(error), `unreadable batch result: ${(error as Error).message}`);
  }
}
