import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * Plumbing shared by the fake provider servers (OpenAI, Anthropic, Gemini, Bedrock,
 * embeddings): a node:http server
 * on 127.0.0.1 (random port) that logs every request and lets a test script
 * each answer (a reply computed from the request, or a fault).
 */

/** One request as the fake server received it. */
export interface FakeRequest {
  method: string;
  /** Path with query string, e.g. `/v1/chat/completions`. */
  path: string;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  rawBody: string;
  /** Parsed JSON body (undefined when the body is not JSON). */
  body: Record<string, unknown> | undefined;
  stream: boolean;
  /** 0-based index of this request on this server. */
  index: number;
}

/** A normal answer; fields left out get defaults derived from the request. */
export interface FakeReply {
  text?: string;
  reasoning?: string;
  model?: string;
  /** OpenAI wire: the `system_fingerprint` of the answer (absent when unset). */
  systemFingerprint?: string;
  /** OpenAI `finish_reason` / Anthropic `stop_reason` (wire value). Default stop / end_turn. */
  finishReason?: string;
  usage?: {
    inputTokens?: number;
    outputTokens?: number;
    cachedInputTokens?: number;
    cacheWriteTokens?: number;
    reasoningTokens?: number;
  };
  /** Characters per streamed text chunk (default 8). */
  chunkSize?: number;
  /**
   * Tool calls in the answer, in the provider's native format (OpenAI `tool_calls`,
   * Anthropic `tool_use` blocks). `arguments` as a string is sent verbatim (so a test can
   * send malformed JSON); an object is serialized. With tool calls and no `text`, the
   * answer has no text block, and the finish reason defaults to the provider's tool value.
   */
  toolCalls?: FakeToolCall[];
}

export interface FakeToolCall {
  id?: string;
  name: string;
  arguments: string | Record<string, unknown>;
}

/** A reply's tool call with what every wire writes resolved: its id and its arguments as JSON text. */
export interface WireToolCall extends FakeToolCall {
  id: string;
  argumentsText: string;
}

/** The reply's tool calls (none when it has none), ids defaulted from the request index. */
export function wireToolCalls(request: FakeRequest, reply: FakeReply): WireToolCall[] {
  return (reply.toolCalls ?? []).map((call, i) => ({
    id: call.id ?? `call_fake_${request.index}_${i}`,
    name: call.name,
    arguments: call.arguments,
    argumentsText: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
  }));
}

/** Scriptable failures, in the shape each provider really produces them. */
export type FakeFault =
  /** HTTP error with the provider's JSON error body; `retryAfter` sets the Retry-After header. */
  | { fault: 'status'; status: number; message?: string; errorType?: string; retryAfter?: string; retryAfterMs?: string }
  /** Socket destroyed before any response byte. */
  | { fault: 'reset' }
  /** Nothing is sent (or, when streaming, headers and `afterChunks` chunks, then silence). */
  | { fault: 'stall'; afterChunks?: number }
  /** Streams `afterChunks` chunks then drops the socket; JSON: half the body then drop. `end` closes cleanly instead. */
  | { fault: 'truncate'; afterChunks?: number; mode?: 'destroy' | 'end' }
  /** A 200 with unparseable JSON (or, streaming, an unparseable data line). */
  | { fault: 'malformed' }
  /** A normal-looking answer whose text is empty (or whitespace, when `text` is given). */
  | { fault: 'empty'; text?: string }
  /** Anthropic only: an `event: error` in the middle of the stream. */
  | { fault: 'stream-error'; errorType?: string; message?: string; afterChunks?: number };

export type FakeOutcome = FakeReply | FakeFault;
export type FakeBehaviour = (request: FakeRequest) => FakeOutcome | Promise<FakeOutcome>;

export interface FakeServerOptions {
  /** Answer for each request: a fixed text, a reply, or a function of the request. Default: echoes the last user message. */
  respond?: string | FakeOutcome | FakeBehaviour;
  /** Faults served, in order, to the first requests before `respond` takes over. */
  faults?: FakeFault[];
  /** When set, a request without exactly this key gets the provider's 401. */
  apiKey?: string;
  /** Model ids that exist; any other gets the provider's 404. Default: every id exists. */
  models?: string[];
}

export interface FakeServer {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:40123/v1`. */
  baseURL: string;
  port: number;
  /** Every request received, in order. */
  requests: FakeRequest[];
  /** Replace the behaviour for later requests. */
  setRespond(respond: FakeServerOptions['respond']): void;
  /** Queue more faults for the next requests. */
  pushFaults(...faults: FakeFault[]): void;
  close(): Promise<void>;
}

export function isFault(outcome: FakeOutcome): outcome is FakeFault {
  return typeof (outcome as FakeFault).fault === 'string';
}

/** What a provider-specific fake must do with one routed request. */
export interface WireFormat {
  /** Path (after the base path) this fake serves, e.g. `/chat/completions`. */
  endpoint: string;
  /** Returns the key the request carried, or undefined. */
  readKey(request: FakeRequest): string | undefined;
  errorBody(status: number, message: string, errorType?: string): Record<string, unknown>;
  /** The body of a non-streamed 200 answer (the server sends it as JSON). */
  jsonBody(request: FakeRequest, reply: FakeReply): unknown;
  /** SSE events (already framed, `event:`/`data:` lines plus blank line) for a reply; binary frames for Bedrock. */
  streamEvents(request: FakeRequest, reply: FakeReply): Array<string | Uint8Array>;
  /** True when this request is served by this fake (default: the path ends with `endpoint`). */
  routes?(path: string): boolean;
  /** True when the request asks for a stream (default: `"stream": true` in the body). */
  isStream?(request: FakeRequest): boolean;
  /** Content type of a streamed answer (default `text/event-stream`). */
  streamContentType?: string;
  /** An SSE event that fails the stream with an error (Anthropic `event: error`). */
  streamErrorEvent?(errorType: string, message: string): string;
}

export function lastUserText(request: FakeRequest): string {
  const body = request.body ?? {};
  const messages = Array.isArray(body.messages) ? (body.messages as Array<{ role?: string; content?: unknown }>) : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role !== 'user') continue;
    const content = message.content;
    if (typeof content === 'string') return content;
    if (Array.isArray(content)) {
      return content.map((part) => (part !== null && typeof part === 'object' && typeof part.text === 'string' ? part.text : '')).join('');
    }
  }
  return '';
}

/** Rough token count used for default usage figures (4 characters a token). */
export function roughTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

export function chunkText(text: string, size: number): string[] {
  if (text === '') return [];
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
  return chunks;
}

/**
 * A node:http server on 127.0.0.1 (random port) running `handle` for each request. When
 * `handle` fails, the answer is a 500 with the JSON body `failure(error)`, or a dropped socket
 * once headers are out. `close()` cuts every open connection.
 */
export async function listenLocally(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  failure: (error: unknown) => unknown,
): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (res.headersSent) res.destroy();
      else sendJson(res, 500, failure(error));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The whole body of a request. */
export async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Answers `body`: a string as it is, anything else as JSON; the content type is JSON unless `headers` say otherwise. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

export async function startFakeServer(format: WireFormat, options: FakeServerOptions): Promise<FakeServer> {
  const requests: FakeRequest[] = [];
  const faults: FakeFault[] = [...(options.faults ?? [])];
  let respond = options.respond;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawBody = (await bodyOf(req)).toString('utf8');
    let body: Record<string, unknown> | undefined;
    try {
      const parsed = JSON.parse(rawBody) as unknown;
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
    } catch {
      body = undefined;
    }
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers[key.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
    }
    const request: FakeRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers,
      rawBody,
      body,
      stream: body?.stream === true,
      index: requests.length,
    };
    if (format.isStream !== undefined) request.stream = format.isStream(request);
    requests.push(request);

    const sendError = (status: number, message: string, errorType?: string, extraHeaders: Record<string, string> = {}) =>
      sendJson(res, status, format.errorBody(status, message, errorType), extraHeaders);

    const path = request.path.split('?')[0] ?? '';
    const routed = format.routes === undefined ? path.endsWith(format.endpoint) : format.routes(path);
    if (request.method !== 'POST' || !routed) return sendError(404, `no route for ${request.method} ${path}`);
    if (options.apiKey !== undefined && format.readKey(request) !== options.apiKey) return sendError(401, 'invalid api key', 'authentication_error');
    const model = typeof body?.model === 'string' ? body.model : '';
    if (options.models !== undefined && !options.models.includes(model)) return sendError(404, `The model \`${model}\` does not exist`, 'not_found_error');

    const outcome: FakeOutcome = faults.shift() ?? (await resolveOutcome(respond, request));
    if (!isFault(outcome) || outcome.fault === 'empty') {
      const reply: FakeReply = isFault(outcome) ? { text: outcome.text ?? '', usage: { outputTokens: 0 } } : outcome;
      if (request.stream) writeStream(res, format.streamEvents(request, reply), undefined);
      else sendJson(res, 200, format.jsonBody(request, reply));
      return;
    }
    switch (outcome.fault) {
      case 'status': {
        const extra: Record<string, string> = {};
        if (outcome.retryAfter !== undefined) extra['retry-after'] = outcome.retryAfter;
        if (outcome.retryAfterMs !== undefined) extra['retry-after-ms'] = outcome.retryAfterMs;
        sendError(outcome.status, outcome.message ?? `fake status ${outcome.status}`, outcome.errorType, extra);
        return;
      }
      case 'reset':
        req.socket.destroy();
        return;
      case 'stall': {
        if (request.stream) {
          const events = format.streamEvents(request, { text: 'partial answer that never ends', chunkSize: 4 });
          writeStream(res, events.slice(0, 1 + (outcome.afterChunks ?? 0)), 'stall');
        }
        // Non-streaming: say nothing; close() destroys the socket.
        return;
      }
      case 'truncate': {
        if (request.stream) {
          const events = format.streamEvents(request, { text: 'this answer is cut off in the middle', chunkSize: 4 });
          writeStream(res, events.slice(0, 1 + (outcome.afterChunks ?? 2)), outcome.mode === 'end' ? 'end' : 'destroy');
        } else {
          const full = JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ message: { content: 'cut' } }] });
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(full.length) });
          res.write(full.slice(0, Math.floor(full.length / 2)));
          setTimeout(() => res.destroy(), 10);
        }
        return;
      }
      case 'malformed': {
        if (request.stream) {
          const events = format.streamEvents(request, { text: 'ok', chunkSize: 4 });
          writeStream(res, [events[0] ?? '', 'data: {"this is": not json\n\n'], 'end');
        } else {
          sendJson(res, 200, '{"id": "broken", "choices": [ {"message": ');
        }
        return;
      }
      case 'stream-error': {
        const events = format.streamEvents(request, { text: 'an answer interrupted by an error', chunkSize: 4 });
        const errorEvent =
          format.streamErrorEvent?.(outcome.errorType ?? 'overloaded_error', outcome.message ?? 'Overloaded') ??
          `data: ${JSON.stringify({ error: { message: outcome.message ?? 'stream error', type: outcome.errorType ?? 'server_error' } })}\n\n`;
        writeStream(res, [...events.slice(0, 1 + (outcome.afterChunks ?? 1)), errorEvent], 'end');
        return;
      }
    }
  }

  function writeStream(res: ServerResponse, events: Array<string | Uint8Array>, ending: 'stall' | 'destroy' | 'end' | undefined): void {
    const contentType = format.streamContentType ?? 'text/event-stream';
    res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache', connection: 'keep-alive' });
    for (const event of events) res.write(event);
    if (ending === undefined || ending === 'end') res.end();
    else if (ending === 'destroy') setTimeout(() => res.destroy(), 10);
  }

  const { port, close } = await listenLocally(handle, (error) => format.errorBody(500, `fake server error: ${String(error)}`));
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    setRespond(next) {
      respond = next;
    },
    pushFaults(...more) {
      faults.push(...more);
    },
    close,
  };
}

/** `startFake<Provider>(options)` for one wire format. */
export function fakeServerStarter(format: WireFormat): (options?: FakeServerOptions) => Promise<FakeServer> {
  return (options = {}) => startFakeServer(format, options);
}

async function resolveOutcome(respond: FakeServerOptions['respond'], request: FakeRequest): Promise<FakeOutcome> {
  if (respond === undefined) return { text: `echo: ${lastUserText(request)}` };
  if (typeof respond === 'string') return { text: respond };
  if (typeof respond === 'function') return respond(request);
  return respond;
}
