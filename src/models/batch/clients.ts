import { openAsBlob } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
 *
 * Bodies are never gathered in memory: a batch's input is written line by line to a
 * temporary file (`openInput`) and uploaded from it as a stream; results files are read as
 * a stream, one JSONL line at a time.
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

/**
 * A batch input being written to a temporary file, one line per cell. `add` takes the body's
 * JSON text (stringified once by the caller) and returns the bytes it added; `submit` ends the
 * file, uploads it as a stream and creates the batch (it may be called again after a lost
 * connection); `discard` removes the file, and the caller calls it once done.
 */
export interface BatchInput {
  /** The temporary file (in a folder of its own, removed by `discard`). */
  readonly path: string;
  readonly lines: number;
  readonly bytes: number;
  add(customId: string, bodyJson: string): Promise<number>;
  submit(signal?: AbortSignal, tag?: BatchTag): Promise<{ id: string }>;
  discard(): Promise<void>;
}

export interface BatchClient {
  readonly provider: BatchProvider;
  /** Most lines one batch may hold. */
  readonly maxLines: number;
  /** Largest input (bytes of JSONL / JSON) one batch may hold. */
  readonly maxBytes: number;
  /** Creates one batch; `tag` goes into its metadata where the provider keeps metadata (OpenAI). */
  submit(lines: readonly BatchLine[], signal?: AbortSignal, tag?: BatchTag): Promise<{ id: string }>;
  /** Starts a batch input file (see {@link BatchInput}): the streaming form of `submit`. */
  openInput(): Promise<BatchInput>;
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

  abstract openInput(): Promise<BatchInput>;

  /** `submit` of an array of lines: written to an input file and uploaded from it like a streamed batch. */
  async submit(lines: readonly BatchLine[], signal?: AbortSignal, tag?: BatchTag): Promise<{ id: string }> {
    const input = await this.openInput();
    try {
      for (const line of lines) await input.add(line.customId, JSON.stringify(line.body));
      return await input.submit(signal, tag);
    } finally {
      await input.discard();
    }
  }

  protected async call(
    method: string,
    url: string,
    body: string | FormData | Blob | undefined,
    signal: AbortSignal | undefined,
    json = true,
  ): Promise<Response> {
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

  /**
   * Reads a JSONL results response as a stream, one line at a time, keeping the result of every
   * valid line with a custom_id (as `toResult` reads it) and noting the invalid ones (the caller
   * decides what they cost).
   */
  protected async readResults<L extends { custom_id?: unknown }>(
    response: Response,
    source: string,
    toResult: (line: L) => BatchLineResult,
    into: BatchResults,
  ): Promise<void> {
    let lineNo = 0;
    const take = (line: string) => {
      lineNo += 1;
      if (line.trim() === '') return;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        // A torn or garbled line may still show whose result it was.
        const customId = /"custom_id"\s*:\s*"([A-Za-z0-9_-]{1,64})"/.exec(line)?.[1];
        into.invalid.push({ source, line: lineNo, ...(customId === undefined ? {} : { customId }) });
        return;
      }
      if (typeof (value as L | null)?.custom_id === 'string') into.lines.push(toResult(value as L));
    };
    if (response.body === null) return;
    const decoder = new TextDecoder();
    let pending = '';
    try {
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        pending += decoder.decode(chunk, { stream: true });
        let newline = pending.indexOf('\n');
        while (newline >= 0) {
          take(pending.slice(0, newline));
          pending = pending.slice(newline + 1);
          newline = pending.indexOf('\n');
        }
      }
    } catch (error) {
      throw new ModelCallError('connection', `${this.endpoint.provider} batch: reading ${source} failed (${(error as Error).message})`, {
        provider: this.endpoint.provider,
        cause: error,
      });
    }
    pending += decoder.decode();
    if (pending !== '') take(pending);
  }

  /** A batch input file in a fresh temporary folder; `line` frames one cell, `head` / `tail` the whole file. */
  protected async inputFile(
    frame: { head: string; line: (customId: string, bodyJson: string) => string; separator: string; tail: string; type: string },
    upload: (file: Blob, signal?: AbortSignal, tag?: BatchTag) => Promise<{ id: string }>,
  ): Promise<BatchInput> {
    const dir = await mkdtemp(join(tmpdir(), 'echolens-batch-'));
    const path = join(dir, 'input.jsonl');
    const handle = await open(path, 'w');
    let closed = false;
    let lines = 0;
    let bytes = 0;
    const write = async (text: string) => {
      const n = Buffer.byteLength(text);
      await handle.write(text);
      bytes += n;
      return n;
    };
    const close = async () => {
      if (closed) return;
      closed = true;
      await handle.close();
    };
    const discard = async () => {
      await close().catch(() => {});
      await rm(dir, { recursive: true, force: true });
    };
    await write(frame.head);
    return {
      path,
      get lines() {
        return lines;
      },
      get bytes() {
        return bytes;
      },
      async add(customId, bodyJson) {
        const n = await write(`${lines > 0 ? frame.separator : ''}${frame.line(customId, bodyJson)}`);
        lines += 1;
        return n;
      },
      async submit(signal, tag) {
        if (!closed) {
          await write(frame.tail);
          await close();
        }
        return upload(await openAsBlob(path, { type: frame.type }), signal, tag);
      },
      discard,
    };
  }

  /** Walks a newest-first list endpoint until a page reaches batches older than `since`. */
  protected async listPages<T extends { id: string }>(
    path: string,
    cursorParam: string,
    since: number,
    createdAt: (item: T) => number,
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
      cursor = last.id;
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

  openInput(): Promise<BatchInput> {
    return this.inputFile(
      {
        head: '',
        line: (customId, bodyJson) => `{"custom_id":${JSON.stringify(customId)},"method":"POST","url":"/v1/chat/completions","body":${bodyJson}}`,
        separator: '\n',
        tail: '\n',
        type: 'application/jsonl',
      },
      (file, signal, tag) => this.upload(file, signal, tag),
    );
  }

  private async upload(jsonl: Blob, signal?: AbortSignal, tag?: BatchTag): Promise<{ id: string }> {
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', jsonl, 'echolens-batch.jsonl');
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
    const out: BatchResults = { lines: [], invalid: [] };
    for (const fileId of [batch.output_file_id, batch.error_file_id]) {
      if (typeof fileId !== 'string' || fileId === '') continue;
      const response = await this.call('GET', `/files/${encodeURIComponent(fileId)}/content`, undefined, signal);
      await this.readResults(response, `file ${fileId}`, openAIResult, out);
    }
    return out;
  }

  async list(since: number, signal?: AbortSignal): Promise<ListedBatch[]> {
    const created = (b: OpenAIBatch) => (b.created_at ?? 0) * 1000;
    const items = await this.listPages<OpenAIBatch>('/batches', 'after', since, created, signal);
    return items.map((b) => ({
      id: b.id,
      createdAt: created(b),
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
  const bodyMessage = (line.response?.body as { error?: { message?: unknown } } | undefined)?.error?.message;
  const message = line.error?.message ?? (typeof bodyMessage === 'string' ? bodyMessage : undefined) ?? `status ${status ?? 'unknown'}`;
  if (code === 'batch_expired') return { customId, kind: 'expired', message };
  if (code === 'batch_cancelled') return { customId, kind: 'canceled', message };
  const bodyText = JSON.stringify(line.response?.body ?? line.error ?? {});
  return { customId, kind: 'errored', errorClass: status === undefined ? 'bad_request' : classifyStatus(status, bodyText), message };
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

  /** The create call's JSON body (`{"requests":[…]}`), written one request at a time. */
  openInput(): Promise<BatchInput> {
    return this.inputFile(
      {
        head: '{"requests":[',
        line: (customId, bodyJson) => `{"custom_id":${JSON.stringify(customId)},"params":${bodyJson}}`,
        separator: ',\n',
        tail: ']}',
        type: 'application/json',
      },
      async (file, signal) => {
        const batch = await this.json<AnthropicBatch>(await this.call('POST', '/messages/batches', file, signal));
        if (typeof batch.id !== 'string') throw new ModelCallError('malformed', 'anthropic batch: batch creation returned no id', { provider: 'anthropic' });
        return { id: batch.id };
      },
    );
  }

  private async get(id: string, signal?: AbortSignal): Promise<AnthropicBatch> {
    return this.json<AnthropicBatch>(await this.call('GET', `/messages/batches/${encodeURIComponent(id)}`, undefined, signal));
  }

  async state(id: string, signal?: AbortSignal): Promise<BatchState> {
    const batch = await this.get(id, signal);
    return { ended: batch.processing_status === 'ended', providerStatus: batch.processing_status, counts: anthropicCounts(batch) };
  }

  async results(id: string, signal?: AbortSignal): Promise<BatchResults> {
    const batch = await this.get(id, signal);
    if (typeof batch.results_url !== 'string' || batch.results_url === '') {
      throw new ModelCallError('malformed', `anthropic batch ${id}: ended without a results_url`, { provider: 'anthropic' });
    }
    const out: BatchResults = { lines: [], invalid: [] };
    await this.readResults(await this.call('GET', batch.results_url, undefined, signal), `results of ${id}`, anthropicResult, out);
    return out;
  }

  /**
   * Anthropic keeps no metadata on a batch: a resume matches a job to a listed batch by
   * creation time and request count, and collection then checks the custom_ids.
   */
  async list(since: number, signal?: AbortSignal): Promise<ListedBatch[]> {
    const created = (b: AnthropicBatch) => Date.parse(b.created_at ?? '') || 0;
    const items = await this.listPages<AnthropicBatch>('/messages/batches', 'after_id', since, created, signal);
    return items.map((b) => ({ id: b.id, createdAt: created(b), total: anthropicCounts(b).total, ended: b.processing_status === 'ended' }));
  }

  async cancel(id: string, signal?: AbortSignal): Promise<void> {
    await this.call('POST', `/messages/batches/${encodeURIComponent(id)}/cancel`, undefined, signal);
  }
}

/** Anthropic's request counts as ours: errored, cancelled and expired lines count as failed. */
function anthropicCounts(batch: AnthropicBatch): BatchCounts {
  const c = batch.request_counts ?? {};
  const succeeded = c.succeeded ?? 0;
  const failed = (c.errored ?? 0) + (c.canceled ?? 0) + (c.expired ?? 0);
  const processing = c.processing ?? 0;
  return { total: succeeded + failed + processing, succeeded, failed, processing };
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
      return {
        customId,
        kind: 'errored',
        errorClass: ANTHROPIC_ERROR_KINDS.get(inner?.type) ?? 'bad_request',
        message: inner?.message ?? `result type ${result.type ?? 'missing'}`,
      };
    }
  }
}

/** Anthropic's error types; any other is the request's fault. */
const ANTHROPIC_ERROR_KINDS = new Map<string | undefined, ModelErrorKind>([
  ['authentication_error', 'auth'],
  ['permission_error', 'auth'],
  ['not_found_error', 'not_found'],
  ['rate_limit_error', 'rate_limit'],
  ['api_error', 'server'],
  ['overloaded_error', 'server'],
]);
