import { chunkText, type FakeReply, type FakeRequest, fakeServerStarter, roughTokens, type WireFormat, wireToolCalls } from './fake-server.js';
import { answerModel, messageTexts, statusNamer } from './wire-parts.js';

function promptText(request: FakeRequest): string {
  const system = request.body?.system;
  const head = typeof system === 'string' ? [system] : Array.isArray(system) ? [JSON.stringify(system)] : [];
  return [...head, ...messageTexts(request)].join('\n');
}

function usageOf(request: FakeRequest, reply: FakeReply, text: string) {
  const u = reply.usage ?? {};
  const cacheRead = u.cachedInputTokens ?? 0;
  const cacheWrite = u.cacheWriteTokens ?? 0;
  const total = u.inputTokens ?? roughTokens(promptText(request)) + cacheRead + cacheWrite;
  return {
    input_tokens: Math.max(0, total - cacheRead - cacheWrite),
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
    output_tokens: u.outputTokens ?? (text === '' ? 0 : roughTokens(text)),
  };
}

/** An answer's message object (the JSON body, and the stream's `message_start`). */
function messageOf(request: FakeRequest, reply: FakeReply, content: unknown[], stopReason: string | null, usage: object) {
  return {
    id: `msg_fake_${request.index}`,
    type: 'message',
    role: 'assistant',
    model: answerModel(request, reply, 'claude-fake'),
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage,
  };
}

function sse(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

const errorTypeOf = statusNamer(
  { 429: 'rate_limit_error', 529: 'overloaded_error', 401: 'authentication_error', 404: 'not_found_error' },
  'api_error',
  'invalid_request_error',
);

export const anthropicWire: WireFormat = {
  endpoint: '/messages',
  readKey(request) {
    return request.headers['x-api-key'];
  },
  errorBody(status, message, errorType) {
    const type = errorType ?? errorTypeOf(status);
    return { type: 'error', error: { type, message } };
  },
  jsonBody(request, reply) {
    const text = reply.text ?? '';
    const content: Array<Record<string, unknown>> = [];
    if (reply.reasoning !== undefined) content.push({ type: 'thinking', thinking: reply.reasoning, signature: 'fake-signature' });
    const calls = wireToolCalls(request, reply);
    if (calls.length === 0 || text !== '') content.push({ type: 'text', text });
    for (const call of calls) {
      // Anthropic sends parsed input; a string that is not JSON is sent as the string it is.
      let input: unknown = call.arguments;
      try {
        input = JSON.parse(call.argumentsText);
      } catch {
        // not JSON: left as the string
      }
      content.push({ type: 'tool_use', id: call.id.replace(/^call_/, 'toolu_'), name: call.name, input });
    }
    return messageOf(request, reply, content, reply.finishReason ?? (calls.length > 0 ? 'tool_use' : 'end_turn'), usageOf(request, reply, text));
  },
  streamEvents(request, reply) {
    const text = reply.text ?? '';
    const usage = usageOf(request, reply, text);
    const events = [sse('message_start', { message: messageOf(request, reply, [], null, { ...usage, output_tokens: 1 }) })];
    let index = 0;
    /** One content block: its start, `value` streamed in chunks as `{ type: deltaType, [field]: chunk }` deltas, its stop. */
    const block = (start: Record<string, unknown>, deltaType: string, field: string, value: string, extra: { ping?: true; last?: object } = {}) => {
      events.push(sse('content_block_start', { index, content_block: start }));
      if (extra.ping) events.push(sse('ping', {}));
      for (const piece of chunkText(value, reply.chunkSize ?? 8))
        events.push(sse('content_block_delta', { index, delta: { type: deltaType, [field]: piece } }));
      if (extra.last !== undefined) events.push(sse('content_block_delta', { index, delta: extra.last }));
      events.push(sse('content_block_stop', { index }));
      index++;
    };
    if (reply.reasoning !== undefined) {
      block({ type: 'thinking', thinking: '' }, 'thinking_delta', 'thinking', reply.reasoning, {
        last: { type: 'signature_delta', signature: 'fake-signature' },
      });
    }
    const calls = wireToolCalls(request, reply);
    if (calls.length === 0 || text !== '') block({ type: 'text', text: '' }, 'text_delta', 'text', text, { ping: true });
    for (const call of calls) {
      block({ type: 'tool_use', id: call.id.replace(/^call_/, 'toolu_'), name: call.name, input: {} }, 'input_json_delta', 'partial_json', call.argumentsText);
    }
    events.push(
      sse('message_delta', {
        delta: { stop_reason: reply.finishReason ?? (calls.length > 0 ? 'tool_use' : 'end_turn'), stop_sequence: null },
        usage: { output_tokens: usage.output_tokens },
      }),
    );
    events.push(sse('message_stop', {}));
    return events;
  },
  streamErrorEvent(errorType, message) {
    return sse('error', { error: { type: errorType, message } });
  },
};

/**
 * A fake Anthropic Messages server: `POST /v1/messages`, JSON or SSE
 * (`message_start`, `content_block_*`, `message_delta`, `message_stop`), the key
 * in `x-api-key`. `FakeReply.usage.inputTokens` is the total prompt size; the
 * wire `input_tokens` is that minus cache reads and writes, as Anthropic counts.
 */
export const startFakeAnthropic = fakeServerStarter(anthropicWire);
