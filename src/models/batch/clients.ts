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

/** What tags a batch as echolens's: the run and one job's tag (OpenAI `metadata`; matched on resume). */
export interface BatchTag {
  run: string;
  tag: string;
}

/** One batch the provider lists (newest first), as much as a resume needs to match it to a job. */
export interface ListedBatch {
  id: string;
  /** Creation time (ms since the epoch). */
  createdAt: number;
  /** Requests the batch holds. */
  total: number;
  ended: boolean;
  /** The echolens tag from the batch's metadata (OpenAI), when it has one. */
  tag?: string;
  run?: string;
}

/** A results line that is not JSON: where it was, and the custom_id when one can be read from its text. */
export interface InvalidResultLine {
  source: string;
  line: number;
  customId?: string;
}

export interface BatchResults {
  lines: BatchLineResult[];
  /** Lines that did not parse; the valid ones are in `lines` all the same. */
  invalid: InvalidResultLine[];
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
  /** Creates one batch; `tag` goes into its metadata where the provider keeps metadata (OpenAI). */
  submit(lines: readonly BatchLine[], signal?: AbortSignal, tag?: BatchTag): Promise<{ id: string }>;
  state(id: string, signal?: AbortSignal): Promise<BatchState>;
  /** Results of an ended batch, one per line the provider reported on (in the provider's order, duplicates kept). */
  results(id: string, signal?: AbortSignal): Promise<BatchResults>;
  /** Batches created at or after `since` (ms), newest first, walking the provider's pages. */
  list(since: number, signal?: AbortSignal): Promise<ListedBatch[]>;
  /** Asks the provider to cancel a batch (it ends soon after; lines already processed keep their results). */
  cancel(id: string, signal?: AbortSignal): Promise<void>;
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
      throw new ModelCallError('connection', `${provider} batch: ${method} ${new URL(full).pathname} failed (${(error as Error).message})`, {
        provider,
        cause: error,
      });
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
      throw new ModelCallError('malformed', `${this.endpoint.provider} batch: unparseable JSON from ${response.url}`, {
        provider: this.endpoint.provider,
        cause: error,
      });
    }
  }

  /** Parses JSONL, keeping every valid line and noting the invalid ones (the caller decides what they cost). */
  protected parseJsonl(text: string, source: string): { values: unknown[]; invalid: InvalidResultLine[] } {
    const values: unknown[] = [];
    const invalid: InvalidResultLine[] = [];
    for (const [index, line] of text.split('\n').entries()) {
      if (line.trim() === '') continue;
      try {
        values.push(JSON.parse(line));
      } catch {
        // A torn or garbled line may still show whose result it was.
        const customId = /"custom_id"\s*:\s*"([A-Za-z0-9_-]{1,64})"/.exec(line)?.[1];
        invalid.push({ source, line: index + 1, ...(customId === undefined ? {} : { customId }) });
      }
    }
    return { values, invalid };
  }

  /** Walks a newest-first list endpoint until a page reaches batches older than `since`. */
  protected async listPages<T>(
    path: string,
    cursorParam: string,
    since: number,
    createdAt: (item: T) => number,
    idOf: (item: T) => string,
    signal?: AbortSignal,
  ): Promise<T[]> {
    const out: T[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page += 1) {
      const query = `?limit=100${cursor === undefined ? '' : `&${cursorParam}=${encodeURIComponent(cursor)}`}`;
      const body = await this.json<{ data?: T[]; has_more?: boolean }>(await this.call('GET', `${path}${query}`, undefined, signal));
      const data = body.data ?? [];
      for (const item of data) if (createdAt(item) >= since) out.push(item);
      const last = data.at(-1);
      if (!body.has_more || last === undefined || createdAt(last) < since) break;
      cursor = idOf(last);
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
  created_at?: number;
  metadata?: Record<string, string> | null;
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

  async submit(lines: readonly BatchLine[], signal?: AbortSignal, tag?: BatchTag): Promise<{ id: string }> {
    const jsonl = lines.map((line) => JSON.stringify({ custom_id: line.customId, method: 'POST', url: '/v1/chat/completions', body: line.body })).join('\n');
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob([`${jsonl}\n`], { type: 'application/jsonl' }), 'echolens-batch.jsonl');
    const file = await this.json<{ id?: string }>(await this.call('POST', '/files', form, signal, false));
    if (typeof file.id !== 'string') throw new ModelCallError('malformed', 'openai batch: the file upload returned no id', { provider: 'openai' });
    const body = JSON.stringify({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      ...(tag === undefined ? {} : { metadata: { echolens_run: tag.run.slice(0, 512), echolens_batch_tag: tag.tag } }),
    });
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

  async results(id: string, signal?: AbortSignal): Promise<BatchResults> {
    const batch = await this.json<OpenAIBatch>(await this.call('GET', `/batches/${encodeURIComponent(id)}`, undefined, signal));
    const lines: OpenAIResultLine[] = [];
    const invalid: InvalidResultLine[] = [];
    for (const fileId of [batch.output_file_id, batch.error_file_id]) {
      if (typeof fileId !== 'string' || fileId === '') continue;
      const text = await (await this.call('GET', `/files/${encodeURIComponent(fileId)}/content`, undefined, signal)).text();
      const parsed = this.parseJsonl(text, `file ${fileId}`);
      lines.push(...(parsed.values as OpenAIResultLine[]));
      invalid.push(...parsed.invalid);
    }
    return { lines: lines.filter((line) => typeof line?.custom_id === 'string').map((line) => openAIResult(line)), invalid };
  }

  async list(since: number, signal?: AbortSignal): Promise<ListedBatch[]> {
    const items = await this.listPages<OpenAIBatch>(
      '/batches',
      'after',
      since,
      (b) => (b.created_at ?? 0) * 1000,
      (b) => b.id,
      signal,
    );
    return items.map((b) => ({
      id: b.id,
      createdAt: (b.created_at ?? 0) * 1000,
      total: b.request_counts?.total ?? 0,
      ended: OPENAI_ENDED.has(b.status),
      ...(typeof b.metadata?.echolens_batch_tag === 'string' ? { tag: b.metadata.echolens_batch_tag } : {}),
      ...(typeof b.metadata?.echolens_run === 'string' ? { run: b.metadata.echolens_run } : {}),
    }));
  }

  async cancel(id: string, signal?: AbortSignal): Promise<void> {
    await this.call('POST', `/batches/${encodeURIComponent(id)}/cancel`, '{}', signal);
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
  created_at?: string;
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

  async results(id: string, signal?: AbortSignal): Promise<BatchResults> {
    const batch = await this.get(id, signal);
    if (typeof batch.results_url !== 'string' || batch.results_url === '') {
      throw new ModelCallError('malformed', `anthropic batch ${id}: ended without a results_url`, { provider: 'anthropic' });
    }
    const text = await (await this.call('GET', batch.results_url, undefined, signal)).text();
    const parsed = this.parseJsonl(text, `results of ${id}`);
    const lines = (parsed.values as AnthropicResultLine[]).filter((line) => typeof line?.custom_id === 'string').map((line) => anthropicResult(line));
    return { lines, invalid: parsed.invalid };
  }

  /**
   * Anthropic keeps no metadata on a batch: a resume matches a job to a listed batch by
   * creation time and request count, and collection then checks the custom_ids.
   */
  async list(since: number, signal?: AbortSignal): Promise<ListedBatch[]> {
    const created = (b: AnthropicBatch) => Date.parse(b.created_at ?? '') || 0;
    const items = await this.listPages<AnthropicBatch>('/messages/batches', 'after_id', since, created, (b) => b.id, signal);
    return items.map((b) => {
      const c = b.request_counts ?? {};
      const total = (c.processing ?? 0) + (c.succeeded ?? 0) + (c.errored ?? 0) + (c.canceled ?? 0) + (c.expired ?? 0);
      return { id: b.id, createdAt: created(b), total, ended: b.processing_status === 'ended' };
    });
  }

  async cancel(id: string, signal?: AbortSignal): Promise<void> {
    await this.call('POST', `/messages/batches/${encodeURIComponent(id)}/cancel`, undefined, signal);
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
