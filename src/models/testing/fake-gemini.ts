import { chunkText, type FakeReply, type FakeRequest, fakeServerStarter, roughTokens, type WireFormat, wireToolCalls } from './fake-server.js';
import { blocksText, statusNamer, turnsText } from './wire-parts.js';

const ROUTE = /\/models\/[^/]+:(generateContent|streamGenerateContent)$/;

/** The model id named in a Gemini request path. */
export function geminiModelOf(request: FakeRequest): string {
  const match = /\/models\/([^/:]+):/.exec(request.path.split('?')[0] ?? '');
  return match?.[1] ?? 'fake-gemini';
}

function usageOf(request: FakeRequest, reply: FakeReply, text: string) {
  const u = reply.usage ?? {};
  const system = blocksText((request.body?.systemInstruction as { parts?: Array<{ text?: string }> } | undefined)?.parts);
  const prompt = u.inputTokens ?? roughTokens(system + turnsText(request, 'contents', 'parts'));
  const candidates = u.outputTokens ?? (text === '' ? 0 : roughTokens(text));
  const usage: Record<string, number> = {
    promptTokenCount: prompt,
    candidatesTokenCount: candidates,
    totalTokenCount: prompt + candidates + (u.reasoningTokens ?? 0),
  };
  if (u.cachedInputTokens !== undefined) usage.cachedContentTokenCount = u.cachedInputTokens;
  if (u.reasoningTokens !== undefined) usage.thoughtsTokenCount = u.reasoningTokens;
  return usage;
}

function parts(request: FakeRequest, reply: FakeReply, text: string): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  if (reply.reasoning !== undefined) out.push({ text: reply.reasoning, thought: true });
  if (text !== '') out.push({ text });
  for (const call of wireToolCalls(request, reply)) {
    out.push({ functionCall: { name: call.name, args: JSON.parse(call.argumentsText) as unknown } });
  }
  return out;
}

function response(request: FakeRequest, reply: FakeReply, partList: Array<Record<string, unknown>>, last: boolean, text: string) {
  const candidate: Record<string, unknown> = { content: { role: 'model', parts: partList }, index: 0 };
  if (last) candidate.finishReason = reply.finishReason ?? 'STOP';
  const body: Record<string, unknown> = {
    candidates: [candidate],
    modelVersion: reply.model ?? geminiModelOf(request),
    responseId: `fake-gemini-${request.index}`,
  };
  if (last) body.usageMetadata = usageOf(request, reply, text);
  return body;
}

const grpcStatusOf = statusNamer(
  { 429: 'RESOURCE_EXHAUSTED', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND' },
  'UNAVAILABLE',
  'INVALID_ARGUMENT',
);

export const geminiWire: WireFormat = {
  endpoint: ':generateContent',
  routes: (path) => ROUTE.test(path),
  isStream: (request) => request.path.includes(':streamGenerateContent'),
  readKey(request) {
    const auth = request.headers.authorization;
    return request.headers['x-goog-api-key'] ?? (auth?.startsWith('Bearer ') ? auth.slice('Bearer '.length) : undefined);
  },
  errorBody(status, message, errorType) {
    const grpc = errorType ?? grpcStatusOf(status);
    return { error: { code: status, message, status: grpc } };
  },
  jsonBody(request, reply) {
    const text = reply.text ?? '';
    return response(request, reply, parts(request, reply, text), true, text);
  },
  streamEvents(request, reply) {
    const text = reply.text ?? '';
    const chunks = chunkText(text, reply.chunkSize ?? 8);
    const events = chunks.map((chunk, i) => {
      const partList: Array<Record<string, unknown>> = [{ text: chunk }];
      if (i === 0 && reply.reasoning !== undefined) partList.unshift({ text: reply.reasoning, thought: true });
      return `data: ${JSON.stringify(response(request, reply, partList, false, text))}\r\n\r\n`;
    });
    // The last event: no new text, the finish reason and the usage.
    const closing = response(request, reply, [{ text: '' }], true, text);
    events.push(`data: ${JSON.stringify(closing)}\r\n\r\n`);
    return events;
  },
};

/**
 * A fake Gemini `generateContent` server: what the Gemini API
 * (`POST /v1beta/models/<model>:generateContent`) and Vertex AI
 * (`POST /v1beta1/projects/<p>/locations/<l>/publishers/google/models/<model>:generateContent`)
 * both speak. JSON answers, or SSE from `:streamGenerateContent?alt=sse` where each
 * `data:` line is a whole GenerateContentResponse and the last one carries
 * `finishReason` and `usageMetadata`.
 */
export const startFakeGemini = fakeServerStarter(geminiWire);
