import { getOrInsert } from '../core/get-or-insert.js';
import type { BatchClient, BatchInput, BatchProvider } from '../models/batch/index.js';
import { ModelCallError } from '../models/errors.js';
import { type GenerateOptions, ZERO_USAGE } from '../models/types.js';
import type { BatchJob } from './batch-jobs.js';
import { batchTagOf, claimedBatchIds, findCreatedBatch } from './batch-resume.js';
import { type BatchSession, BatchStop, kindOf, openJob } from './batch-session.js';
import { estimateInputTokens } from './schedule.js';

/**
 * Submits each model's pending cells as provider batches: one job per model, split at the
 * provider's line and byte limits, every cell's worst case reserved against --max-cost
 * first. A job is recorded (`submitting`) before its create call and tagged, so a process
 * killed inside the call is matched to the provider's batch on the next start.
 * Returns the USD reserved by what was submitted.
 */
export async function submitBatches(session: BatchSession, keys: readonly string[], cacheOf: CacheOptionsOf = () => ({})): Promise<number> {
  const { tally, requestOf } = session;
  const byModel = new Map<string, string[]>();
  for (const key of keys) getOrInsert(byModel, requestOf.get(key)!.model, () => []).push(key);
  const budget = { reservedUsd: 0 };
  for (const [model, modelKeys] of byModel) {
    if (tally.stopped) break;
    try {
      await submitModel(session, model, modelKeys, budget, cacheOf);
    } catch (error) {
      if (error instanceof BatchStop) {
        session.halt(error.reason, error.message, error.kind);
        break;
      }
      // A request the adapter cannot build (e.g. a bad model reference) stops the run like a fatal burst.
      if (error instanceof ModelCallError) {
        session.halt('fatal', `${model}: ${error.message}`, error.kind);
        break;
      }
      throw error;
    }
  }
  return budget.reservedUsd;
}

/** The cache options of a cell's batch line: its group's `prompt_cache_key`, the Anthropic breakpoint lifetime. */
export type CacheOptionsOf = (key: string) => Pick<GenerateOptions, 'promptCacheKey' | 'cacheTtl' | 'promptCacheRetention'>;

async function submitModel(
  session: BatchSession,
  model: string,
  keys: readonly string[],
  budget: { reservedUsd: number },
  cacheOf: CacheOptionsOf,
): Promise<void> {
  const { options, tally, requestOf, env, batch } = session;
  let opened: { client: BatchClient; provider: BatchProvider };
  try {
    opened = session.openClient(model);
  } catch (error) {
    throw new BatchStop('fatal', (error as Error).message, kindOf(error));
  }
  const price = session.batchCostOf(opened.provider);
  const assumedOutput = options.assumedMaxOutputTokens ?? 4096;
  const maxBytes = Math.min(opened.client.maxBytes, options.maxBatchBytes ?? 100 * 1024 * 1024);
  // Each line goes to the batch's input file as it is built (models/batch/clients.ts `openInput`):
  // the run holds one body at a time, never a whole batch.
  let input: BatchInput | null = null;
  let inputKeys: string[] = [];
  const flush = async () => {
    if (input === null) return;
    const lines = { input, keys: inputKeys };
    input = null;
    inputKeys = [];
    await submitOne(session, opened, model, lines);
  };
  try {
    for (const key of keys) {
      if (tally.stopped) break;
      const request = requestOf.get(key)!;
      if (options.maxCostUsd !== undefined) {
        const worst = price(model, { ...ZERO_USAGE, inputTokens: estimateInputTokens(request), outputTokens: request.params?.maxTokens ?? assumedOutput }) ?? 0;
        const before = options.spentBeforeUsd ?? 0;
        if (before + tally.spendUsd + budget.reservedUsd + worst > options.maxCostUsd) {
          tally.stop(
            'budget',
            `stopped before exceeding --max-cost $${options.maxCostUsd}: $${budget.reservedUsd.toFixed(4)} reserved by submitted batches, the next cell could cost up to $${worst.toFixed(4)}`,
          );
          break;
        }
        budget.reservedUsd += worst;
      }
      const json = JSON.stringify((await batch.wireRequestOf(request, env, cacheOf(key))).body);
      const bytes = Buffer.byteLength(json) + 200;
      if (input !== null && (input.lines >= opened.client.maxLines || input.bytes + bytes > maxBytes)) await flush();
      input ??= await opened.client.openInput();
      await input.add(key, json);
      inputKeys.push(key);
    }
    // An interrupt submits nothing more; a budget stop still submits the cells it reserved.
    if (!tally.stopped || tally.stopReason === 'budget') await flush();
  } finally {
    await (input as BatchInput | null)?.discard();
  }
}

async function submitOne(
  session: BatchSession,
  opened: { client: BatchClient; provider: BatchProvider },
  model: string,
  lines: { input: BatchInput; keys: readonly string[] },
): Promise<void> {
  const { jobs, runId, tally, options } = session;
  const id = await jobs.begin(runId, opened.provider, model, lines.keys);
  const job = (await jobs.get(id))!;
  try {
    const created = await createOnce(session, opened.client, job, lines.input);
    await jobs.submitted(id, created.id);
    tally.calls += lines.keys.length;
    for (const key of lines.keys) session.heldKeys.add(key);
    session.active.push(openJob((await jobs.get(id))!, opened.client, opened.provider));
    session.notify(`batch: submitted ${opened.provider} batch ${created.id} (${model}, ${lines.keys.length} cells)`);
  } catch (error) {
    // An answer from the provider says no batch was made; a call cut short (cancelled, connection
    // lost, timed out) may have made one: that job stays `submitting` for the next start to match.
    const answered = error instanceof ModelCallError && error.status !== undefined;
    if (answered) await jobs.finish(id, 'failed', (error as Error).message);
    else for (const key of lines.keys) session.heldKeys.add(key);
    throw new BatchStop(
      options.hardSignal?.aborted ? 'interrupted' : 'fatal',
      `batch submission failed: ${(error as Error).message}${answered ? '' : ' (whether the provider made the batch is checked on the next start)'}`,
      kindOf(error),
    );
  } finally {
    await lines.input.discard();
  }
}

/** Create calls cut by a lost connection before the batch is looked for by its tag and the call made again. */
const CREATE_ATTEMPTS = 3;

/**
 * The create call, made again when the connection was lost without an answer (a keep-alive
 * socket the server had closed, a network blip) — but only after the provider's batch list
 * shows no batch with this job's tag, so a batch the lost call did make is adopted, never
 * made twice.
 */
async function createOnce(session: BatchSession, client: BatchClient, job: BatchJob, input: BatchInput): Promise<{ id: string }> {
  const signal = session.options.hardSignal;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await input.submit(signal, batchTagOf(job));
    } catch (error) {
      const lost = error instanceof ModelCallError && error.kind === 'connection' && error.status === undefined;
      if (!lost || attempt >= CREATE_ATTEMPTS || signal?.aborted) throw error;
      const made = await findCreatedBatch(client, job, await claimedBatchIds(session.jobs), signal);
      if (made !== null) return { id: made.id };
      session.notify(`batch: creating a batch lost its connection (${(error as Error).message}); no batch with its tag exists, trying again`);
    }
  }
}
