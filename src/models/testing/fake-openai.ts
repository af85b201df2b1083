import { chunkText, type FakeReply, type FakeRequest, fakeServerStarter, roughTokens, type WireFormat, wireToolCalls } from './fake-server.js';
import { answerModel, messageTexts, statusNamer } from './wire-parts.js';

function usageOf(request: FakeRequest, reply: FakeReply, text: string) {
  const u = reply.usage ?? {};
  const prompt = u.inputTokens ?? roughTokens(messageTexts(request).join('\n'));
  const completion = u.outputTokens ?? (text === '' ? 0 : roughTokens(text));
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: u.cachedInputTokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: u.reasoningTokens ?? 0 },
  };
}

const CREATED = 1_780_000_000;

const errorTypeOf = statusNamer({ 429: 'rate_limit_exceeded' }, 'server_error', 'invalid_request_error');

export const openAIWire: WireFormat = {
  endpoint: '/chat/completions',
  readKey(request) {
    const auth = request.headers.authorization;
    return auth?.startsWith('Bearer ') ? auth.slice('Bearer '.length) : undefined;
  },
  errorBody(status, message, errorType) {
    const type = errorType ?? errorTypeOf(status);
    return { error: { message, type, param: null, code: status === 404 ? 'model_not_found' : null } };
  },
  jsonBody(request, reply) {
    const text = reply.text ?? '';
    const calls = wireToolCalls(request, reply);
    const message: Record<string, unknown> = { role: 'assistant', content: calls.length > 0 && text === '' ? null : text };
    if (reply.reasoning !== undefined) message.reasoning_content = reply.reasoning;
    if (calls.length > 0) {
      message.tool_calls = calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.argumentsText } }));
    }
    const finish = reply.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop');
    return {
      id: `chatcmpl-fake-${request.index}`,
      object: 'chat.completion',
      created: CREATED,
      model: answerModel(request, reply, 'fake-model'),
      choices: [{ index: 0, message, finish_reason: finish, logprobs: null }],
      usage: usageOf(request, reply, text),
      ...(reply.systemFingerprint === undefined ? {} : { system_fingerprint: reply.systemFingerprint }),
    };
  },
  streamEvents(request, reply) {
    const text = reply.text ?? '';
    const id = `chatcmpl-fake-${request.index}`;
    const model = answerModel(request, reply, 'fake-model');
    const chunk = (delta: Record<string, unknown>, finish: string | null) =>
      `data: ${JSON.stringify({
        id,
        object: 'chat.completion.chunk',
        created: CREATED,
        model,
        choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
      })}\n\n`;
    const events = [chunk({ role: 'assistant', content: '' }, null)];
    for (const piece of chunkText(reply.reasoning ?? '', reply.chunkSize ?? 8)) events.push(chunk({ reasoning_content: piece }, null));
    for (const piece of chunkText(text, reply.chunkSize ?? 8)) events.push(chunk({ content: piece }, null));
    const calls = wireToolCalls(request, reply);
    calls.forEach((call, i) => {
      const head = { index: i, id: call.id, type: 'function', function: { name: call.name, arguments: '' } };
      events.push(chunk({ tool_calls: [head] }, null));
      for (const piece of chunkText(call.argumentsText, reply.chunkSize ?? 8)) {
        events.push(chunk({ tool_calls: [{ index: i, function: { arguments: piece } }] }, null));
      }
    });
    events.push(chunk({}, reply.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop')));
    const streamOptions = request.body?.stream_options as { include_usage?: boolean } | undefined;
    if (streamOptions?.include_usage === true) {
      events.push(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: CREATED, model, choices: [], usage: usageOf(request, reply, text) })}\n\n`,
      );
    }
    events.push('data: [DONE]\n\n');
    return events;
  },
};

/**
 * A fake OpenAI chat-completions server (also what vLLM, Ollama, llama.cpp,
 * OpenRouter and Together speak): `POST /v1/chat/completions`, JSON or SSE
 * (`chat.completion.chunk` events, a final usage chunk when
 * `stream_options.include_usage` is set, then `data: [DONE]`).
 */
export const startFakeOpenAI = fakeServerStarter(openAIWire);
