import { EcholensError } from '../core/errors.js';
import type { ModelResponse } from './types.js';

/**
 * What went wrong in one model call, classified so the runner can decide:
 * retry (rate_limit, server, timeout, connection, empty), or stop (auth,
 * not_found, bad_request, config).
 */
export type ModelErrorKind =
  | 'rate_limit' // 429
  | 'server' // 5xx, overloaded
  | 'timeout' // no answer / stalled stream within the time limit
  | 'connection' // reset, refused, truncated stream
  | 'malformed' // unparseable provider response
  | 'empty' // empty or whitespace-only output
  | 'auth' // 401/403, missing or bad key
  | 'not_found' // unknown model / 404
  | 'bad_request' // other 4xx
  | 'config' // bad model reference, missing optional dependency
  | 'aborted'; // cancelled by the caller

export const RETRYABLE_KINDS: ReadonlySet<ModelErrorKind> = new Set(['rate_limit', 'server', 'timeout', 'connection', 'malformed', 'empty']);

export class ModelCallError extends EcholensError {
  readonly kind: ModelErrorKind;
  readonly status: number | undefined;
  /** Milliseconds the provider asked us to wait (Retry-After), when given. */
  readonly retryAfterMs: number | undefined;
  readonly provider: string | undefined;
  /** For `empty`: the response that came back (its usage was still spent). */
  readonly response: ModelResponse | undefined;

  constructor(
    kind: ModelErrorKind,
    message: string,
    details: {
      status?: number;
      retryAfterMs?: number;
      provider?: string;
      cause?: unknown;
      hint?: string;
      response?: ModelResponse;
    } = {},
  ) {
    super(`model_${kind}`, message, { cause: details.cause, hint: details.hint });
    this.kind = kind;
    this.status = details.status;
    this.retryAfterMs = details.retryAfterMs;
    this.provider = details.provider;
    this.response = details.response;
  }

  get retryable(): boolean {
    return RETRYABLE_KINDS.has(this.kind);
  }
}
