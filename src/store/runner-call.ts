import { definedFields } from '../core/copy-defined.js';
import { ModelCallError } from '../models/errors.js';
import { CallFailedError, type RetryPolicy, type SleepFn, callWithRetry } from '../models/retry.js';
import { type ModelAdapter, type ModelRequest, type ModelResponse, type TokenUsage, ZERO_USAGE } from '../models/types.js';
import type { CacheSettings } from './cache-schedule.js';
import type { CellOutcome } from './run-store.js';
import type { CostFn } from './runner-types.js';
import type { CellResult } from './types.js';

/** One cell's call under the retry policy, turned into what the store records. */

export interface CallSettings {
  adapterOf(ref: string): Promise<ModelAdapter>;
  retry?: Partial<RetryPolicy>;
  /** Stops retries and waits (the runner's stop). */
  signal: AbortSignal;
  /** Cancels requests in flight (a second Ctrl-C). */
  hardSignal?: AbortSignal;
  sleep: SleepFn;
  random?: () => number;
  costOf: CostFn | undefined;
  /** OpenAI `prompt_cache_key` of the cell's prefix group (src/store/cache-schedule.ts). */
  cacheKey?: string;
  /** Anthropic cache lifetime asked for on breakpoints. */
  cacheTtl?: CacheSettings['cacheTtl'];
  /** OpenAI `prompt_cache_retention` asked for (config `limits.openaiCacheRetention`). */
  openaiCacheRetention?: CacheSettings['openaiCacheRetention'];
}

/** The online price of a call's usage with no prompt cache: every input token at the plain input price. */
export function naiveCostOf(costOf: CostFn | undefined, model: string, usage: TokenUsage): number | null {
  return priceOf(costOf, model, { ...usage, cachedInputTokens: 0, cacheWriteTokens: 0 });
}

/** Price of a usage, or null when unknown or not finite. */
export function priceOf(costOf: CostFn | undefined, model: string, usage: TokenUsage): number | null {
  if (!costOf) return null;
  const cost = costOf(model, usage);
  return cost === undefined || cost === null || !Number.isFinite(cost) ? null : cost;
}

/** One call under the retry policy; undefined when a stop cut it (the cell stays pending). */
export async function callCell(request: ModelRequest, cellStarted: string, settings: CallSettings): Promise<CellOutcome | undefined> {
  const base = { startedAt: cellStarted, reasoning: null, responseModel: null, finishReason: null };
  const priced = (usage: TokenUsage) => priceOf(settings.costOf, request.model, usage);
  let adapter: ModelAdapter;
  try {
    adapter = withCacheOptions(await settings.adapterOf(request.model), settings);
  } catch (error) {
    return failure(error, 0, base);
  }
  try {
    const { response, attempts, usage } = await callWithRetry(adapter, request, {
      ...(settings.retry ? { policy: settings.retry } : {}),
      signal: settings.signal,
      requestSignal: settings.hardSignal ?? null,
      sleep: settings.sleep,
      ...(settings.random ? { random: settings.random } : {}),
    });
    return { ...base, attempts, ...answered(response, usage, priced), latencyMs: response.latencyMs, finishedAt: new Date().toISOString() };
  } catch (error) {
    if (error instanceof CallFailedError && error.kind === 'aborted') return undefined;
    if (settings.hardSignal?.aborted) return undefined;
    const attempts = error instanceof CallFailedError ? error.attempts : 1;
    const usage = error instanceof CallFailedError ? error.spentUsage : { ...ZERO_USAGE };
    if (error instanceof ModelCallError && error.kind === 'empty') {
      const last = error instanceof CallFailedError ? error.lastResponse : undefined;
      return {
        ...base,
        attempts,
        ...emptyAnswer(last, usage, priced, error.message),
        latencyMs: last?.latencyMs ?? null,
        finishedAt: new Date().toISOString(),
      };
    }
    return { ...failure(error, attempts, base), usage, costUsd: priced(usage) };
  }
}

type Answer = Pick<
  CellOutcome,
  'status' | 'text' | 'reasoning' | 'toolCalls' | 'finishReason' | 'responseModel' | 'usage' | 'costUsd' | 'errorClass' | 'errorMessage'
>;

/** What a cell records of an answer, online or from a batch line. */
export function answered(response: ModelResponse, usage: TokenUsage, priced: (usage: TokenUsage) => number | null): Answer {
  return {
    status: 'done',
    text: response.text,
    reasoning: response.reasoning ?? null,
    ...(response.toolCalls === undefined ? {} : { toolCalls: response.toolCalls }),
    finishReason: response.finishReason,
    responseModel: response.responseModel ?? null,
    usage,
    costUsd: priced(usage),
    errorClass: null,
    errorMessage: null,
  };
}

/** What a cell records of an empty answer: the last response's text and metadata (no tool calls), its usage still spent. */
export function emptyAnswer(last: ModelResponse | undefined, usage: TokenUsage, priced: (usage: TokenUsage) => number | null, message: string): Answer {
  return {
    status: 'empty',
    text: last?.text ?? '',
    reasoning: last?.reasoning ?? null,
    finishReason: last?.finishReason ?? null,
    responseModel: last?.responseModel ?? null,
    usage,
    costUsd: priced(usage),
    errorClass: 'empty',
    errorMessage: message,
  };
}

export function resultOf(key: string, outcome: CellOutcome, attempts: number): CellResult {
  return {
    key,
    status: outcome.status,
    attempts,
    text: outcome.text,
    reasoning: outcome.reasoning,
    finishReason: outcome.finishReason,
    usage: outcome.usage,
    latencyMs: outcome.latencyMs,
    costUsd: outcome.costUsd,
    errorClass: outcome.errorClass,
    errorMessage: outcome.errorMessage,
    startedAt: outcome.startedAt,
    finishedAt: outcome.finishedAt,
    cached: false,
    ...(outcome.toolCalls ? { toolCalls: outcome.toolCalls } : {}),
  };
}

function failure(error: unknown, attempts: number, base: Pick<CellOutcome, 'startedAt' | 'reasoning' | 'responseModel' | 'finishReason'>): CellOutcome {
  const kind = error instanceof ModelCallError ? error.kind : 'internal';
  const message = error instanceof Error ? error.message : String(error);
  return {
    ...base,
    status: 'failed',
    attempts,
    text: null,
    usage: { ...ZERO_USAGE },
    latencyMs: null,
    costUsd: null,
    errorClass: kind,
    errorMessage: message,
    finishedAt: new Date().toISOString(),
  };
}

/** The hint printed with a fatal burst, by error kind. */
export const FATAL_HINTS: ReadonlyMap<string, string> = new Map([
  ['auth', 'check the API key environment variable for this provider'],
  ['not_found', 'check the model name (provider:model) and the base URL'],
  ['config', 'check the model reference and its provider settings'],
  ['connection', 'is the server running and reachable?'],
]);

/** The adapter with this call's cache key, lifetime and retention added to its generate options. */
function withCacheOptions(adapter: ModelAdapter, settings: CallSettings): ModelAdapter {
  const { cacheKey: promptCacheKey, cacheTtl, openaiCacheRetention: promptCacheRetention } = settings;
  const extra = definedFields({ promptCacheKey, cacheTtl, promptCacheRetention }, ['promptCacheKey', 'cacheTtl', 'promptCacheRetention']);
  if (Object.keys(extra).length === 0) return adapter;
  return {
    ref: adapter.ref,
    provider: adapter.provider,
    modelId: adapter.modelId,
    generate: (request, generateOptions) => adapter.generate(request, { ...generateOptions, ...extra }),
  };
}
