import { addTokenCounts } from '../core/token-counts.js';
import { InvalidArgumentError } from '../core/errors.js';
import { ModelCallError } from './errors.js';
import { type GenerateOptions, type ModelAdapter, type ModelRequest, type ModelResponse, type TokenUsage, ZERO_USAGE } from './types.js';

/**
 * Retry policy for one model call.
 *
 * Defaults: 6 attempts in all, backoff base 1 s doubling per retry, capped at 60 s,
 * full jitter (uniform in [0, backoff]); a provider's Retry-After is honoured
 * as given (up to `maxRetryAfterMs`, 5 min). Empty or whitespace-only output is
 * re-asked `emptyRetries` (2) more times, then thrown as `empty` (docs/decisions.md#d3).
 * Retried: rate_limit, server, timeout, connection, malformed. Never retried:
 * auth, not_found, bad_request, config, aborted — repeating them cannot help.
 */
export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** `full`: uniform in [0, d]; `partial`: d/2 + uniform in [0, d/2]; `none`: exactly d. */
  jitter: 'full' | 'partial' | 'none';
  emptyRetries: number;
  /** Longest Retry-After we wait for; a longer demand is cut to this. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 6,
  baseDelayMs: 1_000,
  maxDelayMs: 60_000,
  jitter: 'full',
  emptyRetries: 2,
  maxRetryAfterMs: 300_000,
});

const RETRIED_KINDS = new Set(['rate_limit', 'server', 'timeout', 'connection', 'malformed']);

export type SleepFn = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface RetryEvent {
  /** The attempt that just failed (1-based). */
  attempt: number;
  error: ModelCallError;
  delayMs: number;
  /**
   * Deltas the failed attempt had already passed to `onDelta` (0 when not streaming).
   * The next attempt starts the answer from scratch, so a caller that showed them
   * must treat them as void: the final response never contains them.
   */
  deltasDiscarded: number;
  /** Characters in those deltas. */
  charsDiscarded: number;
}

export interface CallWithRetryOptions {
  policy?: Partial<RetryPolicy>;
  /** Stops waiting between attempts and starting new ones; also passed to the adapter unless `requestSignal` is given. */
  signal?: AbortSignal;
  /** Signal handed to `adapter.generate` (lets a caller stop retries but let a running request finish). */
  requestSignal?: AbortSignal | null;
  onRetry?: (event: RetryEvent) => void;
  /**
   * Streams: handed to the adapter as `onDelta` on every attempt. Deltas of an attempt
   * that later fails are reported by `onRetry` (`deltasDiscarded`); the resolved
   * response's text is exactly the concatenation of the last attempt's deltas.
   */
  onDelta?: (delta: string) => void;
  sleep?: SleepFn;
  /** Uniform [0, 1) source for jitter; use `seededRandom` for reproducible waits. */
  random?: () => number;
}

export interface RetryResult {
  response: ModelResponse;
  attempts: number;
  /** Tokens of every response received, empty ones included (what the call cost). */
  usage: TokenUsage;
}

/**
 * The final error of a call after the policy gave up (or refused to retry):
 * the same kind as the last failure, plus how many attempts were made and,
 * for `empty`, the last (empty) response so its usage can still be counted.
 */
export class CallFailedError extends ModelCallError {
  readonly attempts: number;
  readonly lastResponse: ModelResponse | undefined;
  /** Tokens of the responses received before giving up (empty outputs still cost). */
  readonly spentUsage: TokenUsage;

  constructor(last: ModelCallError, attempts: number, lastResponse?: ModelResponse, spentUsage: TokenUsage = { ...ZERO_USAGE }) {
    super(last.kind, last.message, {
      status: last.status,
      retryAfterMs: last.retryAfterMs,
      provider: last.provider,
      cause: last,
      hint: last.hint,
    });
    this.attempts = attempts;
    this.lastResponse = lastResponse;
    this.spentUsage = spentUsage;
  }
}

export function resolveRetryPolicy(policy: Partial<RetryPolicy> = {}): RetryPolicy {
  // An undefined field keeps its default.
  const merged: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...Object.fromEntries(Object.entries(policy).filter(([, value]) => value !== undefined)) };
  for (const [name, min] of [
    ['maxAttempts', 1],
    ['emptyRetries', 0],
  ] as const) {
    const value = merged[name];
    if (!Number.isInteger(value) || value < min) {
      throw new InvalidArgumentError(`policy.${name}`, `must be an integer ≥ ${min}, got ${value}`);
    }
  }
  for (const name of ['baseDelayMs', 'maxDelayMs', 'maxRetryAfterMs'] as const) {
    const value = merged[name];
    if (!Number.isFinite(value) || value < 0) {
      throw new InvalidArgumentError(`policy.${name}`, `must be a finite number ≥ 0, got ${value}`);
    }
  }
  if (!['full', 'partial', 'none'].includes(merged.jitter)) {
    throw new InvalidArgumentError('policy.jitter', `must be full, partial or none, got ${String(merged.jitter)}`);
  }
  return merged;
}

/** Wait before retry number `retry` (1 = the first retry), without Retry-After. */
export function backoffDelayMs(policy: RetryPolicy, retry: number, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  switch (policy.jitter) {
    case 'full':
      return random() * ceiling;
    case 'partial':
      return ceiling / 2 + (random() * ceiling) / 2;
    default:
      return ceiling;
  }
}

export function isRetriedKind(kind: string): boolean {
  return RETRIED_KINDS.has(kind);
}

/**
 * Calls `adapter.generate(request)` under the retry policy. Resolves with the
 * first non-empty response and the number of attempts made; rejects with a
 * `CallFailedError` (a ModelCallError) when the call cannot succeed.
 * Errors that are not ModelCallErrors are bugs and pass through untouched.
 */
export async function callWithRetry(adapter: ModelAdapter, request: ModelRequest, options: CallWithRetryOptions = {}): Promise<RetryResult> {
  const policy = resolveRetryPolicy(options.policy);
  const sleep = options.sleep ?? defaultSleep;
  const random = options.random ?? Math.random;
  const signal = options.signal;
  const requestSignal = options.requestSignal === undefined ? signal : (options.requestSignal ?? undefined);
  let attempts = 0;
  let emptyCount = 0;
  let lastEmpty: ModelResponse | undefined;
  let transientRetries = 0;
  let lastTransport: ModelCallError | undefined;
  const usage: TokenUsage = { ...ZERO_USAGE };
  const giveUp = (error: ModelCallError) => new CallFailedError(error, attempts, lastEmpty, { ...usage });

  for (;;) {
    if (signal?.aborted) throw giveUp(abortedError(adapter));
    attempts += 1;
    const stream = streamForAttempt(options.onDelta);
    let failure: ModelCallError;
    try {
      const generateOptions: GenerateOptions = {};
      if (requestSignal) generateOptions.signal = requestSignal;
      if (stream.onDelta) generateOptions.onDelta = stream.onDelta;
      let response: ModelResponse;
      try {
        response = await adapter.generate(request, generateOptions);
      } finally {
        stream.close();
      }
      addTokenCounts(usage, response.usage);
      // A tool call is an answer even when the text is empty.
      if (response.text.trim() !== '' || (response.toolCalls?.length ?? 0) > 0) return { response, attempts, usage };
      lastEmpty = response;
      failure = new ModelCallError('empty', `${adapter.ref} returned an empty output`, { provider: adapter.provider });
    } catch (error) {
      if (!(error instanceof ModelCallError)) throw error;
      failure = error;
    }

    let delayMs: number;
    if (failure.kind === 'empty') {
      emptyCount += 1;
      if (emptyCount <= policy.emptyRetries && attempts >= policy.maxAttempts && lastTransport !== undefined) {
        // Out of attempts, but the model answered (empty) fewer times than a dropout needs:
        // mostly resets and errors. That is a transport failure, retried on resume, not a
        // model that declined to answer.
        throw giveUp(
          new ModelCallError(
            lastTransport.kind,
            `${adapter.ref}: ${attempts} attempts gave ${emptyCount} empty answer(s) (a dropout needs ${policy.emptyRetries + 1}) and transport failures; last: ${lastTransport.message}`,
            { provider: adapter.provider },
          ),
        );
      }
      if (emptyCount > policy.emptyRetries || attempts >= policy.maxAttempts) {
        throw giveUp(
          new ModelCallError('empty', `${adapter.ref} returned an empty output ${emptyCount} time(s); recorded as a dropout`, {
            provider: adapter.provider,
          }),
        );
      }
      // An empty answer is not a load problem: re-ask at once.
      delayMs = 0;
    } else {
      lastTransport = failure;
      if (!isRetriedKind(failure.kind) || attempts >= policy.maxAttempts) {
        throw giveUp(failure);
      }
      transientRetries += 1;
      delayMs =
        failure.retryAfterMs !== undefined && Number.isFinite(failure.retryAfterMs) && failure.retryAfterMs >= 0
          ? Math.min(failure.retryAfterMs, policy.maxRetryAfterMs)
          : backoffDelayMs(policy, transientRetries, random);
    }
    options.onRetry?.({
      attempt: attempts,
      error: failure,
      delayMs,
      deltasDiscarded: stream.deltas,
      charsDiscarded: stream.chars,
    });
    if (delayMs > 0) {
      try {
        await sleep(delayMs, signal);
      } catch {
        throw giveUp(abortedError(adapter));
      }
    }
  }
}

/**
 * The `onDelta` given to one attempt: counts what it delivered, and goes quiet once
 * the attempt settled so a late delta of a failed attempt cannot leak into the next.
 */
function streamForAttempt(onDelta: ((delta: string) => void) | undefined) {
  let open = true;
  const state = {
    deltas: 0,
    chars: 0,
    onDelta: undefined as ((delta: string) => void) | undefined,
    close: () => {
      open = false;
    },
  };
  if (onDelta) {
    state.onDelta = (delta: string) => {
      if (!open) return;
      state.deltas += 1;
      state.chars += delta.length;
      onDelta(delta);
    };
  }
  return state;
}

function abortedError(adapter: ModelAdapter): ModelCallError {
  return new ModelCallError('aborted', `call to ${adapter.ref} was cancelled`, { provider: adapter.provider });
}

/** setTimeout-based sleep that rejects when the signal aborts. */
export const defaultSleep: SleepFn = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason ?? new Error('aborted'));
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason ?? new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
