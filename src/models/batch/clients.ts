import { classifyStatus, scrubSecrets } from '../classify.js';
import { type ModelErrorKind, ModelCallError } from '../errors.js';
import type { BatchEndpoint, BatchProvider } from './wire-body.js';

/**
 * Wire clients for the two batch APIs echolens speaks. Each takes lines
 * (`custom_id` + the JSON body the online path would POST), submits them as one
 * provider batch, reports its state, and returns one result per line.
 *
 * OpenAI Batch API: the lines are uploaded as a JSONL file (`POST /files`, purpose
 * `batch`), the batch is created with `POST /batches` (endpoint `/v1/chat/completions`,
 * window `24h`), polled with `GET /batches/{id}`, and read from its output and error
 * files (`GET /files/{id}/content`). Anthropic Message Batches: `POST /messages/batches`
 * with `requests: [{custom_id, params}]`, polled with `GET /messages/batches/{id}`
 * (`processing_status`), results read as JSONL from the batch's `results_url`.
 */

export interface BatchLine {
  customId: string;
  body: Record<string, unknown>;
}

export interface BatchCounts {
  total: number;
  succeeded: number;
  failed: number;
  /** Still being processed. */
  processing: number;
}

export interface BatchState {
  /** True when the provider will process no more lines (completed, failed, expired, cancelled). */
  ended: boolean;
  /** The provider's own status word (`in_progress`, `completed`, `ended`, …). */
  providerStatus: string;
  counts: BatchCounts;
  /** A batch that failed as a whole (e.g. OpenAI input validation): why. */
  failure?: string;
}

export type BatchLineResult =
  | { customId: string; kind: 'succeeded'; body: unknown }
  | { customId: string; kind: 'errored'; errorClass: ModelErrorKind; message: string }
  | { customId: string; kind: 'expired' | 'canceled'; message: string };

export interface BatchClient {
  readonly provider: BatchProvider;
  /** Most lines one batch may hold. */
  readonly maxLines: number;
  /** Largest input (bytes of JSONL / JSON) one batch may hold. */
  readonly maxBytes: number;
  submit(lines: readonly BatchLine[], signal?: AbortSignal): Promise<{ id: string }>;
  state(id: string, signal?: AbortSignal): Promise<BatchState>;
  /** Results of an ended batch, one per line the provider reported on. */
  results(id: string, signal?: AbortSignal): Promise<BatchLineResult[]>;
}

export function createBatchClient(endpoint: BatchEndpoint): BatchClient {
  return endpoint.provider === 'openai' ? new OpenAIBatchClient(endpoint) : new AnthropicBatchClient(endpoint);
}

abstract class HttpBatchClient {
  constructor(protected readonly endpoint: BatchEndpoint) {}

  protected abstract headers(): Record<string, string>;

  protected async call(method: string, url: string, body: string | FormData | undefined, signal: AbortSignal | undefined, json = true): Promise<Response> {
    const provider = this.endpoint.provider;
    const full = url.startsWith('http') ? url : `${this.endpoint.baseURL}${url}`;
    let response: Response;
    try {
      response = await fetch(full, {
        method,
        headers: { ...this.headers(), ...(json && body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body === undefined ? {} : { body }),
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      if (signal?.aborted) throw new ModelCallError('aborted', `${provider} batch: cancelled`, { provider, cause: error });
      throw new ModelCallError('connection', `${provider} batch: ${method} ${new URL(full).pathname} failed (${(error as Error).message})`, { provider, cause: error });
    }
    if (!response.ok) {
      const text = scrubSecrets(await response.text().catch(() => ''), [this.endpoint.apiKey]);
      throw new ModelCallError(
        classifyStatus(response.status, text),
        `${provider} batch: ${method} ${new URL(full).pathname} answered ${response.status}: ${text.slice(0, 300)}`,
        { provider, status: response.status },
      );
    }
    return response;
  }

  protected async json<T>(response: Response): Promise<T> {
    try {
      return (await response.json()) as T;
    } catch (error) {
      throw new ModelCallError('malformed', `${this.endpoint.provider} batch: unparseable JSON from ${response.url}`, { provider: this.endpoint.provider, cause: error });
    }
  }

  protected parseJsonl(text: string, what: string): unknown[] {
    const out: unknown[] = [];
    for (const [index, line] of text.split('\n').entries()) {
      if (line.trim() === '') continue;
      try {
        out.push(JSON.parse(line));
      } catch (error) {
        throw new ModelCallError('malformed', `${this.endpoint.provider} batch: ${what} line ${index + 1} is not JSON`, { provider: this.endpoint.provider, cause: error });
      }
    }
    return out;
  }
}

interface OpenAIBatch {
  id: string;
  status: string;
  output_file_id?: string | null;
  error_file_id?: string | null;
  request_counts?: { total?: number; completed?: number; failed?: number } | null;
  errors?: { data?: Array<{ code?: string; message?: string; line?: number | null }> } | null;
}

interface OpenAIResultLine {
  custom_id?: string;
  response?: { status_code?: number; body?: unknown } | null;
  error?: { code?: string | null; message?: string | null } | null;
}

const OPENAI_ENDED = new Set(['completed', 'failed', 'expired', 'cancelled']);

class OpenAIBatchClient extends HttpBatchClient implements BatchClient {
  readonly provider = 'openai' as const;
  readonly maxLines = 50_000;
  readonly maxBytes = 200 * 1024 * 1024;

  protected headers(): Record<string, string> {
    return { authorization: `Bearer ${this.endpoint.apiKey}` };
  }

  async submit(lines: readonly BatchLine[], signal?: AbortSignal): Promise<{ id: string }> {
    const jsonl = lines
      .map((line) => JSON.stringify({ custom_id: line.customId, method: 'POST', url: '/v1/chat/completions', body: line.body }))
      .join('\n');
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob([`${jsonl}\n`], { type: 'application/jsonl' }), 'echolens-batch.jsonl');
    const file = await this.json<{ id?: string }>(await this.call('POST', '/files', form, signal, false));
    if (typeof file.id !== 'string') throw new ModelCallError('malformed', 'openai batch: the file upload returned no id', { provider: 'openai' });
    const body = JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const batch = await this.json<OpenAIBatch>(await this.call('POST', '/batches', body, signal));
    if (typeof batch.id !== 'string') throw new ModelCallError('malformed', 'openai batch: batch creation returned no id', { provider: 'openai' });
    return { id: batch.id };
  }

  async state(id: string, signal?: AbortSignal): Promise<BatchState> {
    const batch = await this.json<OpenAIBatch>(await this.call('GET', `/batches/${encodeURIComponent(id)}`, undefined, signal));
    const total = batch.request_counts?.total ?? 0;
    const succeeded = batch.request_counts?.completed ?? 0;
    const failed = batch.request_counts?.failed ?? 0;
    const ended = OPENAI_ENDED.has(batch.status);
    const state: BatchState = {
      ended,
      providerStatus: batch.status,
      counts: { total, succeeded, failed, processing: ended ? 0 : Math.max(0, total - succeeded - failed) },
    };
    if (batch.status === 'failed') {
      const reasons = (batch.errors?.data ?? []).map((e) => `${e.code ?? 'error'}${e.line == null ? '' : ` (line ${e.line})`}: ${e.message ?? ''}`);
      state.failure = reasons.length > 0 ? reasons.slice(0, 3).join('; ') : 'the batch failed';
    }
    return state;
  }

  async results(id: string, signal?: AbortSignal): Promise<BatchLineResult[]> {
    const batch = await this.json<OpenAIBatch>(await this.call('GET', `/batches/${encodeURIComponent(id)}`, undefined, signal));
    const lines: OpenAIResultLine[] = [];
    for (const fileId of [batch.output_file_id, batch.error_file_id]) {
      if (typeof fileId !== 'string' || fileId === '') continue;
      const text = await (await this.call('GET', `/files/${encodeURIComponent(fileId)}/content`, undefined, signal)).text();
      lines.push(...(this.parseJsonl(text, `file ${fileId}`) as OpenAIResultLine[]));
    }
    return lines.filter((line) => typeof line.custom_id === 'string').map((line) => openAIResult(line));
  }
}

function openAIResult(line: OpenAIResultLine): BatchLineResult {
  const customId = line.custom_id!;
  const status = line.response?.status_code;
  if (status === 200 && line.error == null) return { customId, kind: 'succeeded', body: line.response?.body };
  const code = line.error?.code ?? '';
  const message = line.error?.message ?? errorMessageOf(line.response?.body) ?? `status ${status ?? 'unknown'}`;
  if (code === 'batch_expired') return { customId, kind: 'expired', message };
  if (code === 'batch_cancelled') return { customId, kind: 'canceled', message };
  const bodyText = JSON.stringify(line.response?.body ?? line.error ?? {});
  return { customId, kind: 'errored', errorClass: status === undefined ? 'bad_request' : classifyStatus(status, bodyText), message };
}

function errorMessageOf(body: unknown): string | undefined {
  const error = (body as { error?: { message?: unknown } } | undefined)?.error;
  return typeof error?.message === 'string' ? error.message : undefined;
}

interface AnthropicBatch {
  id: string;
  processing_status: string;
  results_url?: string | null;
  request_counts?: { processing?: number; succeeded?: number; errored?: number; canceled?: number; expired?: number } | null;
}

interface AnthropicResultLine {
  custom_id?: string;
  result?: { type?: string; message?: unknown; error?: { type?: string; error?: { type?: string; message?: string } } };
}

class AnthropicBatchClient extends HttpBatchClient implements BatchClient {
  readonly provider = 'anthropic' as const;
  readonly maxLines = 100_000;
  readonly maxBytes = 256 * 1024 * 1024;

  protected headers(): Record<string, string> {
    return { 'x-api-key': this.endpoint.apiKey, 'anthropic-version': '2023-06-01' };
  }

  async submit(lines: readonly BatchLine[], signal?: AbortSignal): Promise<{ id: string }> {
    const body = JSON.stringify({ requests: lines.map((line) => ({ custom_id: line.customId, params: line.body })) });
    const batch = await this.json<AnthropicBatch>(await this.call('POST', '/messages/batches', body, signal));
    if (typeof batch.id !== 'string') throw new ModelCallError('malformed', 'anthropic batch: batch creation returned no id', { provider: 'anthropic' });
    return { id: batch.id };
  }

  private async get(id: string, signal?: AbortSignal): Promise<AnthropicBatch> {
    return this.json<AnthropicBatch>(await this.call('GET', `/messages/batches/${encodeURIComponent(id)}`, undefined, signal));
  }

  async state(id: string, signal?: AbortSignal): Promise<BatchState> {
    const batch = await this.get(id, signal);
    const c = batch.request_counts ?? {};
    const succeeded = c.succeeded ?? 0;
    const failed = (c.errored ?? 0) + (c.canceled ?? 0) + (c.expired ?? 0);
    const processing = c.processing ?? 0;
    return {
      ended: batch.processing_status === 'ended',
      providerStatus: batch.processing_status,
      counts: { total: succeeded + failed + processing, succeeded, failed, processing },
    };
  }

  async results(id: string, signal?: AbortSignal): Promise<BatchLineResult[]> {
    const batch = await this.get(id, signal);
    if (typeof batch.results_url !== 'string' || batch.results_url === '') {
      throw new ModelCallError('malformed', `anthropic batch ${id}: ended without a results_url`, { provider: 'anthropic' });
    }
    const text = await (await this.call('GET', batch.results_url, undefined, signal)).text();
    return (this.parseJsonl(text, `results of ${id}`) as AnthropicResultLine[])
      .filter((line) => typeof line.custom_id === 'string')
      .map((line) => anthropicResult(line));
  }
}

function anthropicResult(line: AnthropicResultLine): BatchLineResult {
  const customId = line.custom_id!;
  const result = line.result ?? {};
  switch (result.type) {
    case 'succeeded':
      return { customId, kind: 'succeeded', body: result.message };
    case 'expired':
      return { customId, kind: 'expired', message: 'the batch expired before this request was processed' };
    case 'canceled':
      return { customId, kind: 'canceled', message: 'the batch was cancelled before this request was processed' };
    default: {
      const inner = result.error?.error;
      return { customId, kind: 'errored', errorClass: anthropicErrorKind(inner?.type), message: inner?.message ?? `result type ${result.type ?? 'missing'}` };
    }
  }
}

function anthropicErrorKind(type: string | undefined): ModelErrorKind {
  switch (type) {
    case 'authentication_error':
    case 'permission_error':
      return 'auth';
    case 'not_found_error':
      return 'not_found';
    case 'rate_limit_error':
      return 'rate_limit';
    case 'api_error':
    case 'overloaded_error':
      return 'server';
    default:
      return 'bad_request';
  }
}
