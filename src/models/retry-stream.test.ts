import { describe, expect, it } from 'vitest';
import { createAdapter } from './create-adapter.js';
import { type RetryEvent, callWithRetry } from './retry.js';
import type { FakeFault, FakeServer } from './testing/index.js';
import { useFakeProviders } from './testing/harness.js';
import type { ModelRequest } from './types.js';

/** callWithRetry with onDelta against the fake OpenAI and Anthropic SSE servers on 127.0.0.1. */

const KEY = 'sk-test-retry-stream-0123456789';
const ENV = { OPENAI_API_KEY: KEY, ANTHROPIC_API_KEY: KEY };
// Generous limits: shared, loaded machines; nothing here waits for a timeout.
const LIMITS = { timeoutMs: 60_000, stallTimeoutMs: 30_000 };
const NO_WAIT = { sleep: async () => {}, policy: { maxAttempts: 4 } };
const ANSWER = 'Rivers: the Danube, the Mekong and the Paraná — in that order.';

const fakes = useFakeProviders(KEY);

function request(model: string): ModelRequest {
  return { model, messages: [{ role: 'user', content: 'Name three rivers.' }], params: { temperature: 0, maxTokens: 64 }, sample: 0 };
}

/** Runs one streamed call and logs deltas and retries in the order they reached the caller. */
async function streamedCall(server: FakeServer, ref: string) {
  const log: Array<{ delta: string } | { retry: RetryEvent }> = [];
  const before = server.requests.length;
  const result = await callWithRetry(createAdapter(ref, { env: ENV, ...LIMITS }), request(ref), {
    ...NO_WAIT,
    onDelta: (delta) => log.push({ delta }),
    onRetry: (retry) => log.push({ retry }),
  });
  return { result, log, sent: server.requests.slice(before) };
}

/** What a caller that discards on retry ends up with: the deltas after the last retry event. */
function shownAfterLastRetry(log: Array<{ delta: string } | { retry: RetryEvent }>): string {
  let shown = '';
  for (const entry of log) shown = 'retry' in entry ? '' : shown + entry.delta;
  return shown;
}

const servers = [
  {
    name: 'openai',
    server: () => fakes.openai,
    ref: () => `openai:gpt-4o@${fakes.openai.baseURL}`,
    // Role chunk + 2 text chunks, then the socket drops; the fake's cut-off text starts "this answer…".
    midStreamFault: { fault: 'truncate', afterChunks: 3 } as FakeFault,
    cutText: 'this answer is cut off in the middle',
  },
  {
    name: 'anthropic',
    server: () => fakes.anthropic,
    ref: () => `anthropic:claude-sonnet-4-5@${fakes.anthropic.baseURL}`,
    // message_start, content_block_start, ping, 2 text deltas, then `event: error` overloaded_error.
    midStreamFault: { fault: 'stream-error', errorType: 'overloaded_error', message: 'Overloaded', afterChunks: 5 } as FakeFault,
    cutText: 'an answer interrupted by an error',
  },
];

describe.each(servers)('callWithRetry streaming over SSE: $name', (setup) => {
  it('delivers deltas in order; they concatenate to the response text, which equals the non-streaming text', async () => {
    const server = setup.server();
    server.setRespond({ text: ANSWER, chunkSize: 5 });
    const { result, log, sent } = await streamedCall(server, setup.ref());
    const deltas = log.map((entry) => ('delta' in entry ? entry.delta : '<retry>'));
    expect(deltas.length).toBe(Math.ceil(ANSWER.length / 5));
    expect(deltas.join('')).toBe(ANSWER);
    expect(result.response.text).toBe(ANSWER);
    expect(result.attempts).toBe(1);
    expect(sent.map((r) => r.stream)).toEqual([true]);

    const plain = await callWithRetry(createAdapter(setup.ref(), { env: ENV, ...LIMITS }), request(setup.ref()), NO_WAIT);
    expect(plain.response.text).toBe(result.response.text);
    expect(server.requests.at(-1)!.stream).toBe(false);
  });

  it('a stream that fails midway is retried: the retry reports the discarded deltas and the final text holds no duplicate', async () => {
    const server = setup.server();
    server.setRespond({ text: ANSWER, chunkSize: 7 });
    server.pushFaults(setup.midStreamFault);
    const { result, log, sent } = await streamedCall(server, setup.ref());
    expect(sent.map((r) => r.stream)).toEqual([true, true]);

    const retryAt = log.findIndex((entry) => 'retry' in entry);
    expect(retryAt).toBeGreaterThan(0);
    const before = log.slice(0, retryAt).map((entry) => ('delta' in entry ? entry.delta : ''));
    const event = (log[retryAt] as { retry: RetryEvent }).retry;
    expect(event.attempt).toBe(1);
    expect(['connection', 'server']).toContain(event.error.kind);
    expect(event.deltasDiscarded).toBe(before.length);
    expect(event.charsDiscarded).toBe(before.join('').length);
    expect(setup.cutText.startsWith(before.join(''))).toBe(true);
    expect(log.filter((entry) => 'retry' in entry)).toHaveLength(1);

    expect(result.attempts).toBe(2);
    expect(result.response.text).toBe(ANSWER);
    expect(shownAfterLastRetry(log)).toBe(ANSWER);
    expect(result.response.text).not.toContain(before.join(''));
  });

  it('the non-streaming path is unchanged: no onDelta, every attempt asks for JSON, retries report zero deltas', async () => {
    const server = setup.server();
    server.setRespond({ text: ANSWER });
    server.pushFaults({ fault: 'status', status: 503 });
    const before = server.requests.length;
    const events: RetryEvent[] = [];
    const result = await callWithRetry(createAdapter(setup.ref(), { env: ENV, ...LIMITS }), request(setup.ref()), {
      ...NO_WAIT,
      onRetry: (event) => events.push(event),
    });
    expect(result.response.text).toBe(ANSWER);
    expect(server.requests.slice(before).map((r) => r.stream)).toEqual([false, false]);
    expect(events.map((e) => [e.error.kind, e.deltasDiscarded, e.charsDiscarded])).toEqual([['server', 0, 0]]);
  });
});
