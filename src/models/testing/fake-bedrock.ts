import { crc32 } from 'node:zlib';
import { chunkText, type FakeReply, type FakeRequest, fakeServerStarter, roughTokens, type WireFormat, wireToolCalls } from './fake-server.js';
import { blocksText, turnsText } from './wire-parts.js';

const ROUTE = /\/model\/[^/]+\/(converse|converse-stream)$/;

function usageOf(request: FakeRequest, reply: FakeReply, text: string) {
  const u = reply.usage ?? {};
  const system = blocksText(request.body?.system as Array<{ text?: string }> | undefined);
  const input = u.inputTokens ?? roughTokens(system + turnsText(request, 'messages', 'content'));
  const output = u.outputTokens ?? (text === '' ? 0 : roughTokens(text));
  const usage: Record<string, number> = { inputTokens: input, outputTokens: output, totalTokens: input + output };
  if (u.cachedInputTokens !== undefined) usage.cacheReadInputTokens = u.cachedInputTokens;
  if (u.cacheWriteTokens !== undefined) usage.cacheWriteInputTokens = u.cacheWriteTokens;
  return usage;
}

/** One AWS event-stream frame: prelude (lengths + CRC), string headers, JSON payload, message CRC. */
export function eventStreamFrame(headers: Record<string, string>, payload: unknown): Uint8Array {
  const headerBytes: Buffer[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const nameBuf = Buffer.from(name, 'utf8');
    const valueBuf = Buffer.from(value, 'utf8');
    const head = Buffer.alloc(1 + nameBuf.length + 1 + 2);
    head.writeUInt8(nameBuf.length, 0);
    nameBuf.copy(head, 1);
    head.writeUInt8(7, 1 + nameBuf.length); // 7 = string
    head.writeUInt16BE(valueBuf.length, 2 + nameBuf.length);
    headerBytes.push(head, valueBuf);
  }
  const headersBuf = Buffer.concat(headerBytes);
  const body = Buffer.from(JSON.stringify(payload), 'utf8');
  const total = 12 + headersBuf.length + body.length + 4;
  const frame = Buffer.alloc(total);
  frame.writeUInt32BE(total, 0);
  frame.writeUInt32BE(headersBuf.length, 4);
  frame.writeUInt32BE(crc32(frame.subarray(0, 8)), 8);
  headersBuf.copy(frame, 12);
  body.copy(frame, 12 + headersBuf.length);
  frame.writeUInt32BE(crc32(frame.subarray(0, total - 4)), total - 4);
  return frame;
}

function event(type: string, payload: unknown): Uint8Array {
  return eventStreamFrame({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, payload);
}

export const bedrockWire: WireFormat = {
  endpoint: '/converse',
  routes: (path) => ROUTE.test(path),
  isStream: (request) => request.path.split('?')[0]?.endsWith('/converse-stream') === true,
  streamContentType: 'application/vnd.amazon.eventstream',
  readKey(request) {
    return request.headers.authorization;
  },
  errorBody(_status, message) {
    return { message };
  },
  jsonBody(request, reply) {
    const text = reply.text ?? '';
    const content: Array<Record<string, unknown>> = [];
    if (reply.reasoning !== undefined) content.push({ reasoningContent: { reasoningText: { text: reply.reasoning } } });
    if (text !== '') content.push({ text });
    const calls = wireToolCalls(request, reply);
    for (const call of calls) content.push({ toolUse: { toolUseId: call.id, name: call.name, input: JSON.parse(call.argumentsText) } });
    return {
      output: { message: { role: 'assistant', content } },
      stopReason: reply.finishReason ?? (calls.length > 0 ? 'tool_use' : 'end_turn'),
      usage: usageOf(request, reply, text),
      metrics: { latencyMs: 12 },
    };
  },
  streamEvents(request, reply) {
    const text = reply.text ?? '';
    const frames: Uint8Array[] = [event('messageStart', { role: 'assistant' })];
    for (const chunk of chunkText(text, reply.chunkSize ?? 8)) {
      frames.push(event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: chunk } }));
    }
    frames.push(event('contentBlockStop', { contentBlockIndex: 0 }));
    frames.push(event('messageStop', { stopReason: reply.finishReason ?? 'end_turn' }));
    frames.push(event('metadata', { usage: usageOf(request, reply, text), metrics: { latencyMs: 12 } }));
    return frames;
  },
};

/**
 * A fake Amazon Bedrock runtime speaking the Converse API:
 * `POST /model/<modelId>/converse` (JSON) and `/converse-stream` (the AWS
 * binary event stream: `messageStart`, `contentBlockDelta`…, `messageStop`,
 * `metadata`). The SigV4 signature is not checked; `authorization` is logged.
 */
export const startFakeBedrock = fakeServerStarter(bedrockWire);
