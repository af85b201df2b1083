import type { APICallError } from 'ai';
import { ModelCallError, type ModelErrorKind } from './errors.js';

/**
 * The AI SDK marks its errors with registered symbols (`Symbol.for('vercel.ai.error…')`), which is
 * how its own `isInstance` checks work across copies of the package. Checking the marker here keeps
 * the SDK out of the module graph of commands that only classify or never call a model.
 */
function hasAiSdkMarker(error: unknown, marker: string): boolean {
  if (error === null || typeof error !== 'object') return false;
  const symbol = Symbol.for(marker);
  return symbol in error && (error as Record<symbol, unknown>)[symbol] === true;
}
const isAiSdkError = (error: unknown): error is Error => hasAiSdkMarker(error, 'vercel.ai.error');
const isApiCallError = (error: unknown): error is APICallError => hasAiSdkMarker(error, 'vercel.ai.error.AI_APICallError');

/**
 * Turns whatever a provider call threw (AI SDK errors, fetch errors, stream
 * error events) into a ModelCallError whose kind tells the runner whether to
 * retry. Messages are built here, short, and scrubbed of the API key.
 */

export interface ClassifyContext {
  provider: string;
  /** Secrets to scrub from every message (the API key). */
  secrets?: readonly string[];
  now?: number;
}

/** Milliseconds to wait from `retry-after-ms`, or `retry-after` (seconds or an HTTP date). */
export function parseRetryAfter(headers: Record<string, string | undefined> | undefined, now: number = Date.now()): number | undefined {
  if (headers === undefined) return undefined;
  const lower: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers)) if (value !== undefined) lower[key.toLowerCase()] = value;
  const ms = lower['retry-after-ms'];
  if (ms !== undefined && ms.trim() !== '') {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return Math.round(value);
  }
  const after = lower['retry-after'];
  if (after === undefined || after.trim() === '') return rateLimitReset(lower);
  const trimmed = after.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  // Anything else numeric-looking is invalid; Date.parse would read "-3" as a year.
  if (!/[a-z]/i.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * OpenAI-style `x-ratelimit-reset-requests` / `-tokens` durations ("20ms", "1.5s", "6m0s"),
 * used only when there is no Retry-After. Which limit was hit is not said: take the later reset.
 */
function rateLimitReset(headers: Record<string, string>): number | undefined {
  const resets = [headers['x-ratelimit-reset-requests'], headers['x-ratelimit-reset-tokens']]
    .map((value) => (value === undefined ? undefined : parseDuration(value)))
    .filter((value): value is number => value !== undefined);
  return resets.length === 0 ? undefined : Math.max(...resets);
}

function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^(\d+(\.\d+)?(ms|h|m|s))+$/.test(trimmed)) return undefined;
  const unitMs: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  for (const match of trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) {
    total += Number(match[1]) * (unitMs[match[2] ?? 's'] ?? 0);
  }
  return Math.round(total);
}

export function scrubSecrets(text: string, secrets: readonly string[] | undefined): string {
  let out = text;
  for (const secret of secrets ?? []) {
    if (secret.length >= 4) out = out.split(secret).join('***');
  }
  return out;
}

const OVERLOADED = /overloaded/i;
const NOT_FOUND_TEXT = /model[_ ]not[_ ]found|does not exist|unknown model|no such model|not_found_error|model .*not found/i;

export function classifyStatus(status: number, body: string): ModelErrorKind {
  if (status === 429) return 'rate_limit';
  if (status === 529 || status >= 500 || OVERLOADED.test(body)) return 'server';
  if (status === 408) return 'timeout';
  if (status === 401 || status === 403) return 'auth';
  if (status === 404) return 'not_found';
  if (status >= 400 && NOT_FOUND_TEXT.test(body)) return 'not_found';
  if (status >= 400) return 'bad_request';
  // A 2xx whose body could not be used.
  return 'malformed';
}

/** Provider error types inside error bodies and stream error events. */
const ERROR_TYPE_KINDS = new Map<string, ModelErrorKind>([
  ...['rate_limit_error', 'rate_limit_exceeded'].map((type) => [type, 'rate_limit'] as const),
  ...['overloaded_error', 'api_error', 'server_error', 'internal_server_error'].map((type) => [type, 'server'] as const),
  ...['authentication_error', 'permission_error', 'invalid_api_key'].map((type) => [type, 'auth'] as const),
  ...['not_found_error', 'model_not_found'].map((type) => [type, 'not_found'] as const),
  ['invalid_request_error', 'bad_request'],
]);

const CONNECTION_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

function errorCode(error: unknown): string | undefined {
  const coded = causeWhere(error, (e) => typeof e === 'object' && CONNECTION_CODES.has((e as { code?: unknown }).code as string));
  return (coded as { code?: string } | undefined)?.code;
}

/** The first error of the cause chain (six deep) that `test` accepts. */
function causeWhere(error: unknown, test: (e: unknown) => boolean): unknown {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== null && current !== undefined; depth++) {
    if (test(current)) return current;
    current = typeof current === 'object' ? (current as { cause?: unknown }).cause : undefined;
  }
  return undefined;
}

const MALFORMED_NAMES = new Set(['AI_JSONParseError', 'AI_TypeValidationError', 'AI_InvalidResponseDataError', 'AI_EmptyResponseBodyError']);

/** The request itself is unusable: repeating it cannot help. */
const BAD_REQUEST_NAMES = new Set([
  'AI_InvalidPromptError',
  'AI_InvalidArgumentError',
  'AI_InvalidMessageRoleError',
  'AI_MessageConversionError',
  'AI_UnsupportedFunctionalityError',
  'AI_InvalidDataContentError',
]);

/** The provider's own short message from a JSON error body, when it has one. */
function bodyMessage(body: string | undefined): { message?: string; type?: string } {
  if (body === undefined || body.trim() === '') return {};
  try {
    const parsed = JSON.parse(body) as unknown;
    if (parsed !== null && typeof parsed === 'object') {
      const error = (parsed as { error?: unknown }).error;
      if (error !== null && typeof error === 'object') {
        const e = error as { message?: unknown; type?: unknown; code?: unknown };
        return {
          message: typeof e.message === 'string' ? e.message : undefined,
          type: typeof e.type === 'string' ? e.type : typeof e.code === 'string' ? e.code : undefined,
        };
      }
      if (typeof error === 'string') return { message: error };
      const message = (parsed as { message?: unknown }).message;
      if (typeof message === 'string') return { message };
    }
  } catch {
    // Not JSON: fall through to the raw text.
  }
  return { message: body.trim().slice(0, 300) };
}

/** Classifies a stream error event payload such as Anthropic's `{type:'overloaded_error', message}`. */
function classifyPayload(value: unknown): { kind: ModelErrorKind; message: string } | undefined {
  if (value === null || typeof value !== 'object' || value instanceof Error) return undefined;
  const record = value as { type?: unknown; message?: unknown; error?: unknown; code?: unknown };
  const inner = (record.error !== null && typeof record.error === 'object' ? record.error : record) as {
    type?: unknown;
    message?: unknown;
    code?: unknown;
  };
  const type = typeof inner.type === 'string' ? inner.type : typeof inner.code === 'string' ? inner.code : '';
  const message = typeof inner.message === 'string' ? inner.message : type || 'stream error';
  // An unrecognised stream error event is the provider failing mid-answer: treat it as a server error.
  const kind = ERROR_TYPE_KINDS.get(type) ?? 'server';
  return { kind, message };
}

export function classifyError(error: unknown, context: ClassifyContext): ModelCallError {
  const { provider } = context;
  const make = (kind: ModelErrorKind, message: string, extra: { status?: number; retryAfterMs?: number } = {}) =>
    new ModelCallError(kind, oneLine(scrubSecrets(`${provider}: ${message}`, context.secrets)), {
      provider,
      status: extra.status,
      retryAfterMs: extra.retryAfterMs,
      cause: error,
    });

  if (error instanceof ModelCallError) return error;
  // Provider calls refuse redirects (ai-adapter.ts providerFetch): retrying cannot help.
  if (causeWhere(error, (e) => e instanceof Error && e.message === 'unexpected redirect') !== undefined) {
    return make('config', 'the endpoint answered with a redirect, which provider calls do not follow; use the address it redirects to as the base URL');
  }

  if (isApiCallError(error)) {
    const status = error.statusCode;
    if (status !== undefined && status >= 300) {
      const { message, type } = bodyMessage(error.responseBody);
      const byType = ERROR_TYPE_KINDS.get(type ?? '');
      let kind = classifyStatus(status, `${error.responseBody ?? ''} ${error.message}`);
      // A 400 that says "model not found", or a 5xx body saying overloaded, keeps the status class;
      // the body type only refines 4xx that the status alone cannot tell apart.
      if (byType !== undefined && kind === 'bad_request') kind = byType;
      const retryAfterMs = kind === 'rate_limit' || kind === 'server' ? parseRetryAfter(error.responseHeaders, context.now) : undefined;
      return make(kind, `HTTP ${status}: ${message ?? error.message}`, { status, retryAfterMs });
    }
    if (causeWhere(error, (e) => e instanceof Error && MALFORMED_NAMES.has(e.name)) !== undefined) {
      return make('malformed', `malformed response: ${error.message}`, { status });
    }
    if (errorCode(error) !== undefined || status === undefined) {
      return make('connection', `connection failed (${errorCode(error) ?? 'network error'}): ${error.message}`);
    }
    return make('malformed', `unusable response: ${error.message}`, { status });
  }

  if (error instanceof Error && BAD_REQUEST_NAMES.has(error.name)) {
    return make('bad_request', `the request cannot be sent: ${error.message}`);
  }
  if (error instanceof Error && MALFORMED_NAMES.has(error.name)) {
    return make('malformed', `malformed response: ${error.message}`);
  }
  if (error instanceof Error && error.name === 'AI_NoOutputGeneratedError' && error.cause !== undefined) {
    return classifyError(error.cause, context);
  }
  const code = errorCode(error);
  if (code !== undefined) {
    return make('connection', `connection failed (${code})`);
  }
  if (error instanceof TypeError && /fetch failed|terminated|network/i.test(error.message)) {
    return make('connection', `connection failed: ${error.message}`);
  }
  const payload = classifyPayload(error);
  if (payload !== undefined) return make(payload.kind, payload.message);
  if (isAiSdkError(error)) {
    return make('malformed', `provider response could not be used: ${error.message}`);
  }
  if (error instanceof Error && /terminated|socket|other side closed|premature close/i.test(error.message)) {
    return make('connection', `connection lost: ${error.message}`);
  }
  return make('server', `unexpected failure: ${error instanceof Error ? error.message : String(error)}`);
}

/** Error messages are printed on one line by the CLI; provider bodies can be long and multi-line. */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 400 ? `${flat.slice(0, 397)}...` : flat;
}
