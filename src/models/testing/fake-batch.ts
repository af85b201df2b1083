import type { IncomingMessage, ServerResponse } from 'node:http';
import { startFakeAnthropic } from './fake-anthropic.js';
import { startFakeOpenAI } from './fake-openai.js';
import { bodyOf, type FakeServer, type FakeServerOptions, listenLocally, sendJson as send } from './fake-server.js';

/**
 * A fake batch API on 127.0.0.1 in the wire format of OpenAI's Batch API or
 * Anthropic's Message Batches, in front of the matching online fake: online
 * calls (`/chat/completions`, `/messages`) are forwarded to it, and every batch
 * line is answered by POSTing its body to it, so a batch answer is exactly the
 * online answer for the same body (each forwarded line carries `x-fake-batch-id`,
 * `x-fake-batch-line` and `x-fake-batch-lines`, so a billing fake can price batch traffic).
 * Batches stay `in_progress` for a number of polls, then end; a test can make single
 * lines fail or expire, corrupt or repeat results lines, hold a create call, list
 * batches (with OpenAI metadata) and cancel them.
 */

/** What happens to one line: answered normally, an error with a status, or expiry before processing. */
export type FakeLineOutcome = 'answer' | 'expired' | 'canceled' | { status: number; type?: string; message?: string };

export interface FakeBatchOptions extends FakeServerOptions {
  provider: 'openai' | 'anthropic';
  /** Status polls a batch answers `in_progress` before it ends (default 1). */
  pollsUntilDone?: number;
  /** Per line (default: every line answered). */
  lineOutcome?: (customId: string, body: Record<string, unknown>) => FakeLineOutcome;
  /** The first n result downloads (OpenAI file content, Anthropic results) answer 500. */
  failResultDownloads?: number;
  /** OpenAI only: batches fail as a whole at validation with this error (code and message). */
  failBatches?: { code: string; message: string };
  /**
   * Rewrites the JSONL lines of every results download (OpenAI output and error files, Anthropic
   * results): a test corrupts a line, duplicates one, or appends a conflicting one.
   */
  mangleResults?: (lines: string[], batchId: string) => string[];
  /**
   * Awaited after a batch is created and before the create call is answered: a test kills the
   * client in the window where the provider has the batch and the client has no id yet.
   */
  holdCreate?: (batchId: string) => Promise<void>;
  /**
   * One entry per create call, consumed in order: `before` drops the connection without making
   * the batch, `after` makes it and then drops the connection (the client never hears its id).
   */
  dropCreates?: Array<'before' | 'after' | 'answer'>;
  /**
   * Keep each line's request body and each uploaded input file after the batch has been made and
   * answered (default true: tests read them). A benchmark of many large batches sets false, so
   * the fake's memory does not grow with everything ever submitted.
   */
  keepBodies?: boolean;
}

export interface FakeBatchRecord {
  id: string;
  customIds: string[];
  polls: number;
  ended: boolean;
  /** OpenAI metadata given at creation (Anthropic batches have none). */
  metadata: Record<string, string> | null;
  /** Cancelled through the cancel endpoint. */
  canceled: boolean;
  /** The lines as submitted: custom_id and the request body. */
  lines: Array<{ customId: string; body: Record<string, unknown> }>;
}

export interface FakeBatchServer {
  provider: 'openai' | 'anthropic';
  /** Base URL including `/v1` (online and batch endpoints alike). */
  baseURL: string;
  /** The online fake that answers every line (its request log shows each processed line). */
  online: FakeServer;
  /** Every HTTP request to the batch endpoints: method and path. */
  requests: Array<{ method: string; path: string }>;
  batches: FakeBatchRecord[];
  /** How many times each custom_id was submitted, over all batches. */
  submissions: Map<string, number>;
  setLineOutcome(fn: FakeBatchOptions['lineOutcome']): void;
  close(): Promise<void>;
}

interface Batch extends FakeBatchRecord {
  failure?: { code: string; message: string };
  createdAt: number;
  results?: { output: string[]; errors: string[]; anthropic: string[]; succeeded: number; failed: number; expired: boolean };
}

/** OpenAI's error record of a batch line that never ran. */
const NOT_RUN_ERRORS = {
  canceled: { code: 'batch_cancelled', message: 'This request was cancelled with its batch.' },
  expired: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' },
} as const;

export async function startFakeBatch(options: FakeBatchOptions): Promise<FakeBatchServer> {
  const online = options.provider === 'openai' ? await startFakeOpenAI(options) : await startFakeAnthropic(options);
  const pollsUntilDone = options.pollsUntilDone ?? 1;
  let lineOutcome = options.lineOutcome;
  let resultFaults = options.failResultDownloads ?? 0;
  const resultFault = (res: ServerResponse): boolean => {
    if (resultFaults <= 0) return false;
    resultFaults -= 1;
    send(res, 500, { error: { message: 'fake results outage', type: 'server_error' } });
    return true;
  };
  const requests: FakeBatchServer['requests'] = [];
  const drops = [...(options.dropCreates ?? [])];
  const batches: Batch[] = [];
  const files = new Map<string, string>();
  const submissions = new Map<string, number>();
  let baseURL = '';
  const openai = options.provider === 'openai';
  /** The online endpoint, and the root of the batch endpoints. */
  const onlinePath = openai ? '/chat/completions' : '/messages';
  const batchesPath = openai ? '/batches' : '/messages/batches';
  const errorBody = (type: string, message: string) => (openai ? { error: { message, type } } : { type: 'error', error: { type, message } });
  const notFound = (res: ServerResponse, what: string) => send(res, 404, errorBody(openai ? 'invalid_request_error' : 'not_found_error', `no ${what}`));
  const keyOk = (req: IncomingMessage) =>
    options.apiKey === undefined || (openai ? req.headers.authorization === `Bearer ${options.apiKey}` : req.headers['x-api-key'] === options.apiKey);

  const register = (lines: Batch['lines'], metadata: Record<string, string> | null = null): Batch => {
    for (const line of lines) submissions.set(line.customId, (submissions.get(line.customId) ?? 0) + 1);
    const batch: Batch = {
      id: `${openai ? 'batch' : 'msgbatch'}_fake_${batches.length}`,
      customIds: lines.map((l) => l.customId),
      lines,
      polls: 0,
      ended: false,
      metadata,
      canceled: false,
      createdAt: Math.floor(Date.now() / 1000),
    };
    batches.push(batch);
    return batch;
  };
  /** Runs every line against the online fake (once: when the batch ends, or at creation when bodies are not kept). */
  const answerBatch = async (batch: Batch) => {
    const out: NonNullable<Batch['results']> = { output: [], errors: [], anthropic: [], succeeded: 0, failed: 0, expired: false };
    /** A line that never ran: its batch was canceled, or the window expired before it. */
    const notRun = (index: number, customId: string, kind: 'canceled' | 'expired') => {
      out.failed += 1;
      if (openai) {
        out.errors.push(JSON.stringify({ id: `batch_req_${index}`, custom_id: customId, response: null, error: NOT_RUN_ERRORS[kind] }));
      } else {
        out.anthropic.push(JSON.stringify({ custom_id: customId, result: { type: kind } }));
      }
    };
    for (const [index, line] of batch.lines.entries()) {
      const outcome = batch.canceled ? 'canceled' : (lineOutcome?.(line.customId, line.body) ?? 'answer');
      if (outcome === 'canceled' || outcome === 'expired') {
        if (outcome === 'expired') out.expired = true;
        notRun(index, line.customId, outcome);
        continue;
      }
      let status: number;
      let body: unknown;
      if (outcome === 'answer') {
        const response = await fetch(`${online.baseURL}${onlinePath}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${options.apiKey ?? 'k'}`,
            'x-api-key': options.apiKey ?? 'k',
            // Which batch line this is, so a billing fake behind this one can price and time batch traffic.
            'x-fake-batch-id': batch.id,
            'x-fake-batch-line': String(index),
            'x-fake-batch-lines': String(batch.lines.length),
          },
          body: JSON.stringify(line.body),
        });
        status = response.status;
        body = await response.json();
      } else {
        status = outcome.status;
        const type = outcome.type ?? 'invalid_request_error';
        const message = outcome.message ?? `fake line error ${outcome.status}`;
        body = openai ? { error: { message, type, param: null, code: null } } : errorBody(type, message);
      }
      if (status === 200) out.succeeded += 1;
      else out.failed += 1;
      if (openai) {
        const record = JSON.stringify({
          id: `batch_req_${index}`,
          custom_id: line.customId,
          response: { status_code: status, request_id: `req_${index}`, body },
          error: null,
        });
        (status === 200 ? out.output : out.errors).push(record);
      } else {
        const result = status === 200 ? { type: 'succeeded', message: body } : { type: 'errored', error: body };
        out.anthropic.push(JSON.stringify({ custom_id: line.customId, result }));
      }
    }
    // Anthropic does not promise result order: serve them reversed so order is never relied on.
    out.anthropic.reverse();
    batch.results = out;
    if (options.keepBodies === false) for (const line of batch.lines) line.body = {};
  };

  const processBatch = async (batch: Batch) => {
    if (batch.results === undefined) await answerBatch(batch);
    const out = batch.results!;
    batch.ended = true;
    if (openai) {
      if (out.output.length > 0) files.set(`file-out-${batch.id}`, `${out.output.join('\n')}\n`);
      if (out.errors.length > 0) files.set(`file-err-${batch.id}`, `${out.errors.join('\n')}\n`);
    }
  };

  const poll = async (batch: Batch) => {
    batch.polls += 1;
    if (batch.failure) {
      batch.ended = true;
      return;
    }
    if (!batch.ended && batch.polls > pollsUntilDone) await processBatch(batch);
  };

  const openAIBatch = (batch: Batch) => {
    const r = batch.results;
    return {
      id: batch.id,
      object: 'batch',
      endpoint: '/v1/chat/completions',
      errors:
        batch.failure && batch.ended ? { object: 'list', data: [{ code: batch.failure.code, message: batch.failure.message, line: null, param: null }] } : null,
      input_file_id: `file-in-${batch.id}`,
      completion_window: '24h',
      status: openAIStatus(batch),
      output_file_id: r && r.output.length > 0 ? `file-out-${batch.id}` : null,
      error_file_id: r && r.errors.length > 0 ? `file-err-${batch.id}` : null,
      created_at: batch.createdAt,
      request_counts: { total: batch.lines.length, completed: r?.succeeded ?? 0, failed: r?.failed ?? 0 },
      metadata: batch.metadata,
    };
  };

  const openAIStatus = (batch: Batch) => {
    if (batch.failure && batch.ended) return 'failed';
    if (!batch.ended) return batch.polls === 0 ? 'validating' : 'in_progress';
    return batch.canceled ? 'cancelled' : batch.results?.expired ? 'expired' : 'completed';
  };

  const anthropicBatch = (batch: Batch) => {
    const r = batch.results;
    const expired = r ? batch.lines.length - r.succeeded - r.failed : 0;
    const counts = { errored: 0, expired: 0, canceled: 0 };
    for (const line of r?.anthropic ?? []) {
      const type = (JSON.parse(line) as { result: { type: string } }).result.type;
      if (type in counts) counts[type as keyof typeof counts] += 1;
    }
    return {
      id: batch.id,
      type: 'message_batch',
      processing_status: batch.ended ? 'ended' : 'in_progress',
      request_counts: {
        processing: batch.ended ? expired : batch.lines.length,
        succeeded: r?.succeeded ?? 0,
        errored: counts.errored,
        canceled: counts.canceled,
        expired: counts.expired,
      },
      created_at: new Date(batch.createdAt * 1000).toISOString(),
      ended_at: batch.ended ? new Date().toISOString() : null,
      results_url: batch.ended ? `${baseURL}/messages/batches/${batch.id}/results` : null,
    };
  };

  /** A list endpoint's page, newest first: `limit` and the cursor (`after` / `after_id`) of the real APIs. */
  const listPage = (url: string) => {
    const query = new URL(url, 'http://fake').searchParams;
    const limit = Math.max(1, Math.min(100, Number(query.get('limit') ?? 20) || 20));
    const newest = [...batches].reverse();
    const cursor = query.get(openai ? 'after' : 'after_id');
    const start = cursor === null ? 0 : newest.findIndex((b) => b.id === cursor) + 1;
    const page = newest.slice(start, start + limit);
    return {
      ...(openai ? { object: 'list' } : {}),
      data: page.map(wireBatch),
      first_id: page[0]?.id ?? null,
      last_id: page.at(-1)?.id ?? null,
      has_more: start + limit < newest.length,
    };
  };

  /** A results download as `mangleResults` rewrites it (the lines are never blank, so the text is unchanged without it). */
  const mangled = (lines: string[], batchId: string) => `${(options.mangleResults?.(lines, batchId) ?? lines).join('\n')}\n`;

  /** The batch a path names (its id URL-encoded there). */
  const batchNamed = (encodedId: string) => batches.find((b) => b.id === decodeURIComponent(encodedId));

  /** A GET (the poll may move the batch along) or a cancel of the batch a path names; the answer is the provider's batch object. */
  async function onBatch(res: ServerResponse, encodedId: string, act: (batch: Batch) => Promise<void>): Promise<void> {
    const batch = batchNamed(encodedId);
    if (!batch) return notFound(res, 'batch');
    await act(batch);
    send(res, 200, wireBatch(batch));
  }

  /** Cancel: a batch not yet ended ends now, every line cancelled (the fake processes lines only at the end). */
  const cancel = async (batch: Batch) => {
    if (!batch.ended) {
      batch.canceled = true;
      await processBatch(batch);
    }
  };

  const wireBatch: (batch: Batch) => unknown = openai ? openAIBatch : anthropicBatch;

  /**
   * The create call: the batch registered and answered, with the connection drops (`before`:
   * nothing made; `after`: made but the reply lost) and holds the options ask for.
   */
  async function create(req: IncomingMessage, res: ServerResponse, lines: Batch['lines'], metadata: Record<string, string> | null, made?: () => void) {
    const drop = drops.shift();
    if (drop === 'before') return void req.socket.destroy();
    made?.();
    const batch = register(lines, metadata);
    // Without kept bodies a batch is answered as it is made, so its bodies are dropped at once (a cancel then changes nothing).
    if (options.keepBodies === false) await answerBatch(batch);
    if (drop === 'after') return void req.socket.destroy();
    if (options.failBatches && openai) batch.failure = options.failBatches;
    await options.holdCreate?.(batch.id);
    send(res, 200, wireBatch(batch));
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await bodyOf(req);
    const method = req.method ?? 'GET';
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const sub = path.replace(/^\/v1/, '');
    if (method === 'POST' && sub === onlinePath) {
      // Online call: forward verbatim to the online fake.
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
      const response = await fetch(`${online.baseURL}${onlinePath}`, { method: 'POST', headers, body: raw });
      res.writeHead(response.status, { 'content-type': response.headers.get('content-type') ?? 'application/json' });
      res.end(Buffer.from(await response.arrayBuffer()));
      return;
    }
    requests.push({ method, path });
    if (!keyOk(req)) {
      send(res, 401, { error: { message: 'invalid api key', type: 'authentication_error' } });
      return;
    }
    const badRequest = (message: string) => send(res, 400, errorBody('invalid_request_error', message));
    if (method === 'GET' && sub === batchesPath) return send(res, 200, listPage(req.url ?? ''));
    const [, batchId, action] = new RegExp(`^${batchesPath}/([^/]+)(?:/(cancel|results))?$`).exec(sub) ?? [];
    if (method === 'POST' && batchId !== undefined && action === 'cancel') return onBatch(res, batchId, cancel);
    if (method === 'GET' && batchId !== undefined && action === undefined) return onBatch(res, batchId, poll);
    if (openai) {
      if (method === 'POST' && sub === '/files') {
        const form = await new Request('http://fake/files', {
          method: 'POST',
          headers: { 'content-type': req.headers['content-type'] ?? '' },
          body: raw,
        }).formData();
        const file = form.get('file');
        if (form.get('purpose') !== 'batch' || !(file instanceof Blob)) return badRequest('purpose must be batch and file must be given');
        const id = `file-in-${files.size}`;
        files.set(id, await file.text());
        send(res, 200, { id, object: 'file', purpose: 'batch', bytes: file.size, filename: 'input.jsonl' });
        return;
      }
      if (method === 'POST' && sub === '/batches') {
        const body = JSON.parse(raw.toString('utf8')) as {
          input_file_id?: string;
          endpoint?: string;
          completion_window?: string;
          metadata?: Record<string, string>;
        };
        const content = body.input_file_id === undefined ? undefined : files.get(body.input_file_id);
        if (content === undefined || body.endpoint !== '/v1/chat/completions' || body.completion_window !== '24h') return badRequest('bad batch creation');
        const lines = content
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as { custom_id: string; method: string; url: string; body: Record<string, unknown> });
        if (lines.some((l) => l.method !== 'POST' || l.url !== '/v1/chat/completions' || typeof l.custom_id !== 'string')) return badRequest('bad batch line');
        return create(
          req,
          res,
          lines.map((l) => ({ customId: l.custom_id, body: l.body })),
          body.metadata ?? null,
          () => {
            if (options.keepBodies === false) files.delete(body.input_file_id!);
          },
        );
      }
      const fileMatch = /^\/files\/([^/]+)\/content$/.exec(sub);
      if (method === 'GET' && fileMatch) {
        if (resultFault(res)) return;
        const fileId = decodeURIComponent(fileMatch[1]!);
        const content = files.get(fileId);
        if (content === undefined) return notFound(res, 'file');
        const resultsOf = /^file-(?:out|err)-(.+)$/.exec(fileId)?.[1];
        const text = resultsOf === undefined ? content : mangled(content.split('\n').slice(0, -1), resultsOf);
        return send(res, 200, text, { 'content-type': 'application/octet-stream' });
      }
    } else {
      if (method === 'POST' && sub === batchesPath) {
        const body = JSON.parse(raw.toString('utf8')) as { requests?: Array<{ custom_id?: unknown; params?: Record<string, unknown> }> };
        const lines = body.requests ?? [];
        if (
          lines.length === 0 ||
          lines.some((l) => typeof l.custom_id !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(l.custom_id) || typeof l.params !== 'object')
        ) {
          return badRequest('bad batch requests');
        }
        return create(
          req,
          res,
          lines.map((l) => ({ customId: l.custom_id as string, body: l.params! })),
          null,
        );
      }
      if (method === 'GET' && batchId !== undefined && action === 'results') {
        const batch = batchNamed(batchId);
        if (!batch?.results) return notFound(res, 'results');
        if (resultFault(res)) return;
        return send(res, 200, mangled(batch.results.anthropic, batch.id), { 'content-type': 'application/x-jsonl' });
      }
    }
    notFound(res, `route ${method} ${path}`);
  }

  const server = await listenLocally(handle, (error) => ({ error: { message: `fake batch server error: ${String(error)}`, type: 'server_error' } }));
  baseURL = `http://127.0.0.1:${server.port}/v1`;

  return {
    provider: options.provider,
    baseURL,
    online,
    requests,
    batches,
    submissions,
    setLineOutcome(fn) {
      lineOutcome = fn;
    },
    async close() {
      await server.close();
      await online.close();
    },
  };
}
