import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { createAdapter } from './create-adapter.js';
import type { ModelErrorKind } from './errors.js';
import { type FakeFault, startFakeOpenAI } from './testing/index.js';
import { GENEROUS_TIMEOUTS, helloRequest, rejectionOf, useFakeProviders } from './testing/harness.js';

const KEY = 'sk-test-SECRET-0123456789';
const ENV = { OPENAI_API_KEY: KEY, ANTHROPIC_API_KEY: KEY, VLLM_API_KEY: KEY };
// Generous limits (GENEROUS_TIMEOUTS) for calls that should succeed; short ones only where a stall is the point.
const STALL_TIMEOUTS = { timeoutMs: 1_500, stallTimeoutMs: 500 };

const fakes = useFakeProviders(KEY);

describe('openai: chat completions', () => {
  it('sends the request in the chat-completions format and maps the answer and usage', async () => {
    fakes.openai.setRespond({
      text: 'Hello.',
      usage: { inputTokens: 1200, outputTokens: 30, cachedInputTokens: 1024, reasoningTokens: 12 },
    });
    const ref = `openai:gpt-4.1-mini@${fakes.openai.baseURL}`;
    const adapter = createAdapter(ref, { env: ENV, ...GENEROUS_TIMEOUTS });
    const response = await adapter.generate(helloRequest(ref, { params: { temperature: 0.5, topP: 0.9, maxTokens: 77, stop: ['END'], seed: 7 } }));
    expect(response.text).toBe('Hello.');
    expect(response.finishReason).toBe('stop');
    expect(response.usage).toEqual({
      inputTokens: 1200,
      outputTokens: 30,
      cachedInputTokens: 1024,
      cacheWriteTokens: 0,
      reasoningTokens: 12,
    });
    expect(response.responseModel).toBe('gpt-4.1-mini');
    const sent = fakes.openai.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.body).toMatchObject({
      model: 'gpt-4.1-mini',
      temperature: 0.5,
      top_p: 0.9,
      max_tokens: 77,
      stop: ['END'],
      seed: 7,
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Say hello.' },
      ],
    });
    expect(sent.stream).toBe(false);
    // The key travels in the Authorization header and nowhere else.
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent.rawBody).not.toContain(KEY);
    expect(sent.path).not.toContain(KEY);
  });

  it('streams deltas to onDelta and asks for the usage chunk', async () => {
    fakes.openai.setRespond({ text: 'A streamed answer, in pieces.', chunkSize: 5, usage: { inputTokens: 50, cachedInputTokens: 20 } });
    const ref = `openai:gpt-4.1-mini@${fakes.openai.baseURL}`;
    const deltas: string[] = [];
    const response = await createAdapter(ref, { env: ENV, ...GENEROUS_TIMEOUTS }).generate(helloRequest(ref), {
      onDelta: (d) => deltas.push(d),
    });
    expect(response.text).toBe('A streamed answer, in pieces.');
    expect(deltas.join('')).toBe(response.text);
    expect(deltas.length).toBeGreaterThan(1);
    expect(response.usage.inputTokens).toBe(50);
    expect(response.usage.cachedInputTokens).toBe(20);
    const sent = fakes.openai.requests.at(-1)!;
    expect(sent.stream).toBe(true);
    expect(sent.body?.stream_options).toEqual({ include_usage: true });
  });

  it('passes providerOptions into the body verbatim', async () => {
    fakes.openai.setRespond('ok');
    const ref = `openai:gpt-5@${fakes.openai.baseURL}`;
    await createAdapter(ref, { env: ENV }).generate(
      helloRequest(ref, { params: { maxTokens: 10, providerOptions: { reasoning_effort: 'low', service_tier: 'flex' } } }),
    );
    // Reasoning models take max_completion_tokens (the SDK knows which ones).
    expect(fakes.openai.requests.at(-1)!.body).toMatchObject({
      reasoning_effort: 'low',
      service_tier: 'flex',
      max_completion_tokens: 10,
    });
  });

  it('sends max_tokens even when the request leaves it out', async () => {
    fakes.openai.setRespond('ok');
    const ref = `openai:gpt-4o@${fakes.openai.baseURL}`;
    await createAdapter(ref, { env: ENV }).generate(helloRequest(ref, { params: {} }));
    expect(fakes.openai.requests.at(-1)!.body?.max_tokens).toBe(4096);
  });
});

describe('anthropic: messages', () => {
  it('maps usage with cache reads and writes, thinking budget, cache_control and the x-api-key header', async () => {
    fakes.anthropic.setRespond({
      text: 'Bonjour.',
      reasoning: 'The user wants a greeting.',
      usage: { inputTokens: 5000, outputTokens: 40, cachedInputTokens: 3000, cacheWriteTokens: 1500 },
    });
    const ref = `anthropic:claude-sonnet-4-5@${fakes.anthropic.baseURL}`;
    const adapter = createAdapter(ref, { env: ENV, ...GENEROUS_TIMEOUTS });
    const response = await adapter.generate({
      model: ref,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'A long shared prefix.', cacheBreakpoint: true },
        { role: 'assistant', content: 'Understood.' },
        { role: 'user', content: 'Greet me in French.' },
      ],
      params: { maxTokens: 300, thinkingBudget: 1024, topK: 5 },
      sample: 0,
    });
    expect(response.text).toBe('Bonjour.');
    expect(response.reasoning).toBe('The user wants a greeting.');
    expect(response.usage).toEqual({
      inputTokens: 5000,
      outputTokens: 40,
      cachedInputTokens: 3000,
      cacheWriteTokens: 1500,
      reasoningTokens: 0,
    });
    const sent = fakes.anthropic.requests.at(-1)!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(KEY);
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.rawBody).not.toContain(KEY);
    const body = sent.body as Record<string, unknown>;
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    // The SDK adds the thinking budget to max_tokens.
    expect(body.max_tokens).toBe(300 + 1024);
    // Anthropic rejects top_k with thinking; the SDK drops it and says so.
    expect(body.top_k).toBeUndefined();
    expect(response.warnings?.some((w) => w.includes('topK'))).toBe(true);
    expect(body.system).toEqual([{ type: 'text', text: 'Be brief.' }]);
    const messages = body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
    expect(messages[0]?.content.at(-1)?.cache_control).toEqual({ type: 'ephemeral' });
    expect(messages[2]?.content.at(-1)?.cache_control).toBeUndefined();
  });

  it('streams the Messages SSE format', async () => {
    fakes.anthropic.setRespond({ text: 'Streaming from the fake Claude.', usage: { inputTokens: 900, cachedInputTokens: 800 } });
    const ref = `anthropic:claude-haiku-4-5@${fakes.anthropic.baseURL}`;
    const deltas: string[] = [];
    const response = await createAdapter(ref, { env: ENV, ...GENEROUS_TIMEOUTS }).generate(helloRequest(ref), {
      onDelta: (d) => deltas.push(d),
    });
    expect(response.text).toBe('Streaming from the fake Claude.');
    expect(deltas.join('')).toBe(response.text);
    expect(response.usage.inputTokens).toBe(900);
    expect(response.usage.cachedInputTokens).toBe(800);
    expect(response.finishReason).toBe('stop');
  });

  it('puts cache_control on a system message marked as a cache breakpoint', async () => {
    fakes.anthropic.setRespond('ok');
    const ref = `anthropic:claude-sonnet-4-5@${fakes.anthropic.baseURL}`;
    await createAdapter(ref, { env: ENV }).generate({
      model: ref,
      messages: [
        { role: 'system', content: 'a long shared system prompt', cacheBreakpoint: true },
        { role: 'user', content: 'q' },
      ],
      params: {},
      sample: 0,
    });
    const body = fakes.anthropic.requests.at(-1)!.body as Record<string, unknown>;
    expect(body.system).toEqual([{ type: 'text', text: 'a long shared system prompt', cache_control: { type: 'ephemeral' } }]);
    expect(JSON.stringify(body.messages)).not.toContain('cache_control');
  });

  it('sends top_k, temperature and stop sequences without thinking', async () => {
    fakes.anthropic.setRespond('ok');
    const ref = `anthropic:claude-sonnet-4-5@${fakes.anthropic.baseURL}`;
    await createAdapter(ref, { env: ENV }).generate(helloRequest(ref, { params: { maxTokens: 50, topK: 5, temperature: 0.2, stop: ['###'] } }));
    expect(fakes.anthropic.requests.at(-1)!.body).toMatchObject({
      top_k: 5,
      temperature: 0.2,
      stop_sequences: ['###'],
      max_tokens: 50,
    });
  });

  it('always sends max_tokens (the SDK would cap unknown models at 4096)', async () => {
    fakes.anthropic.setRespond('ok');
    const ref = `anthropic:claude-sonnet-4-5@${fakes.anthropic.baseURL}`;
    await createAdapter(ref, { env: ENV }).generate(helloRequest(ref, { params: { maxTokens: 9000 } }));
    expect(fakes.anthropic.requests.at(-1)!.body?.max_tokens).toBe(9000);
  });
});

describe('OpenAI-compatible servers', () => {
  it('vllm: sends top_k and chat_template_kwargs in the body and the optional key', async () => {
    const server = await startFakeOpenAI({ respond: { text: 'ok', reasoning: 'thinking…', usage: { reasoningTokens: 9 } } });
    try {
      const ref = `vllm:Qwen/Qwen3-4B@${server.baseURL}`;
      const response = await createAdapter(ref, { env: ENV }).generate(
        helloRequest(ref, { params: { topK: 20, chatTemplateKwargs: { enable_thinking: false }, maxTokens: 32 } }),
      );
      expect(response.reasoning).toBe('thinking…');
      expect(response.usage.reasoningTokens).toBe(9);
      const sent = server.requests[0]!;
      expect(sent.body).toMatchObject({
        model: 'Qwen/Qwen3-4B',
        top_k: 20,
        chat_template_kwargs: { enable_thinking: false },
        max_tokens: 32,
      });
      expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    } finally {
      await server.close();
    }
  });

  it('ollama: model ids with colons, no key sent, streaming usage requested', async () => {
    const server = await startFakeOpenAI({ respond: 'hi' });
    try {
      const ref = `ollama:qwen3:4b@${server.baseURL}`;
      const response = await createAdapter(ref, { env: {} }).generate(helloRequest(ref), { onDelta: () => {} });
      expect(response.text).toBe('hi');
      const sent = server.requests[0]!;
      expect(sent.body?.model).toBe('qwen3:4b');
      expect(sent.body?.stream_options).toEqual({ include_usage: true });
      expect(sent.headers.authorization).toBeUndefined();
    } finally {
      await server.close();
    }
  });

  it('openai-compatible: uses the given base URL and OPENAI_COMPATIBLE_API_KEY', async () => {
    const server = await startFakeOpenAI({ respond: 'compatible', apiKey: 'compat-key-42' });
    try {
      const ref = `openai-compatible:my/model@${server.baseURL}`;
      const response = await createAdapter(ref, { env: { OPENAI_COMPATIBLE_API_KEY: 'compat-key-42' } }).generate(helloRequest(ref));
      expect(response.text).toBe('compatible');
    } finally {
      await server.close();
    }
  });

  it('reports ignored settings as warnings', async () => {
    const server = await startFakeOpenAI({ respond: 'ok' });
    try {
      const ref = `lmstudio:m@${server.baseURL}`;
      const response = await createAdapter(ref, { env: {} }).generate(helloRequest(ref, { params: { thinkingBudget: 100 } }));
      expect(response.warnings?.some((w) => w.includes('thinkingBudget'))).toBe(true);
    } finally {
      await server.close();
    }
  });
});

describe('the HTTP client', () => {
  it('one-shot calls of every wire go through the provider client, not the global fetch (which stays for what it does not handle)', async () => {
    const global = vi.spyOn(globalThis, 'fetch');
    try {
      for (const ref of [`openai:gpt-4o@${fakes.openai.baseURL}`, `anthropic:claude-sonnet-4-5@${fakes.anthropic.baseURL}`]) {
        const response = await createAdapter(ref, { env: ENV }).generate(helloRequest(ref));
        expect(response.text.length).toBeGreaterThan(0);
      }
      expect(global).not.toHaveBeenCalled();
    } finally {
      global.mockRestore();
    }
  });
});

describe('failures are classified', () => {
  const httpDate = new Date(Date.now() + 120_000).toUTCString();
  const cases: Array<{ name: string; fault: FakeFault; kind: ModelErrorKind; status?: number; retryAfter?: [number, number] }> = [
    { name: '429 Retry-After seconds', fault: { fault: 'status', status: 429, retryAfter: '7' }, kind: 'rate_limit', status: 429, retryAfter: [7000, 7000] },
    { name: '429 Retry-After HTTP date', fault: { fault: 'status', status: 429, retryAfter: httpDate }, kind: 'rate_limit', retryAfter: [60_000, 121_000] },
    {
      name: '429 retry-after-ms',
      fault: { fault: 'status', status: 429, retryAfterMs: '1500', retryAfter: '9' },
      kind: 'rate_limit',
      retryAfter: [1500, 1500],
    },
    { name: '500', fault: { fault: 'status', status: 500 }, kind: 'server', status: 500 },
    { name: '503', fault: { fault: 'status', status: 503 }, kind: 'server', status: 503 },
    { name: '529 overloaded', fault: { fault: 'status', status: 529 }, kind: 'server', status: 529 },
    { name: '401', fault: { fault: 'status', status: 401 }, kind: 'auth', status: 401 },
    { name: '403', fault: { fault: 'status', status: 403 }, kind: 'auth', status: 403 },
    { name: '404', fault: { fault: 'status', status: 404 }, kind: 'not_found', status: 404 },
    { name: '400 unknown model', fault: { fault: 'status', status: 400, message: 'The model `nope` does not exist' }, kind: 'not_found', status: 400 },
    { name: '400', fault: { fault: 'status', status: 400, message: 'messages: too long' }, kind: 'bad_request', status: 400 },
    { name: '422', fault: { fault: 'status', status: 422 }, kind: 'bad_request', status: 422 },
    { name: 'connection reset', fault: { fault: 'reset' }, kind: 'connection' },
    { name: 'truncated (socket dropped)', fault: { fault: 'truncate' }, kind: 'connection' },
    { name: 'malformed JSON', fault: { fault: 'malformed' }, kind: 'malformed' },
    { name: 'empty content', fault: { fault: 'empty' }, kind: 'empty' },
    { name: 'whitespace-only content', fault: { fault: 'empty', text: ' \n\t ' }, kind: 'empty' },
    { name: 'stalled response', fault: { fault: 'stall' }, kind: 'timeout' },
  ];
  for (const provider of ['openai', 'anthropic'] as const) {
    for (const streaming of [false, true]) {
      for (const c of cases) {
        it(`${provider} ${streaming ? 'stream' : 'json'}: ${c.name} → ${c.kind}`, async () => {
          const server = fakes[provider];
          server.setRespond('fine');
          server.pushFaults(c.fault);
          const ref = provider === 'openai' ? `openai:gpt-4o@${server.baseURL}` : `anthropic:claude-sonnet-4-5@${server.baseURL}`;
          const limits = c.fault.fault === 'stall' ? STALL_TIMEOUTS : GENEROUS_TIMEOUTS;
          const adapter = createAdapter(ref, { env: ENV, ...limits });
          const error = await rejectionOf(adapter.generate(helloRequest(ref), streaming ? { onDelta: () => {} } : {}));
          expect(error.kind).toBe(c.kind);
          expect(error.provider).toBe(provider);
          if (c.status !== undefined) expect(error.status).toBe(c.status);
          if (c.retryAfter !== undefined) {
            expect(error.retryAfterMs).toBeGreaterThanOrEqual(c.retryAfter[0]);
            expect(error.retryAfterMs).toBeLessThanOrEqual(c.retryAfter[1]);
          }
          expect(error.message).not.toContain(KEY);
          expect(error.message).not.toMatch(/\n/);
          if (c.kind === 'empty') {
            // The empty answer still cost tokens: it rides on the error.
            expect(error.response?.text.trim()).toBe('');
            expect(error.response?.usage.inputTokens).toBeGreaterThan(0);
          }
          // The next call works: nothing is left broken on either side.
          const ok = await createAdapter(ref, { env: ENV, ...GENEROUS_TIMEOUTS }).generate(helloRequest(ref));
          expect(ok.text).toBe('fine');
        });
      }
    }
  }

  it('a stream that ends cleanly before the finish event is a truncated stream (connection)', async () => {
    for (const server of [fakes.openai, fakes.anthropic]) {
      server.pushFaults({ fault: 'truncate', mode: 'end', afterChunks: 3 });
      const ref = server === fakes.openai ? `openai:gpt-4o@${server.baseURL}` : `anthropic:claude-sonnet-4-5@${server.baseURL}`;
      const error = await rejectionOf(createAdapter(ref, { env: ENV, ...GENEROUS_TIMEOUTS }).generate(helloRequest(ref), { onDelta: () => {} }));
      expect(error.kind).toBe('connection');
      expect(error.message).toMatch(/truncated/);
    }
  });

  it('a stream that stalls after some text times out', async () => {
    fakes.openai.pushFaults({ fault: 'stall', afterChunks: 2 });
    const ref = `openai:gpt-4o@${fakes.openai.baseURL}`;
    const deltas: string[] = [];
    const error = await rejectionOf(
      createAdapter(ref, { env: ENV, timeoutMs: 30_000, stallTimeoutMs: 2_000 }).generate(helloRequest(ref), {
        onDelta: (d) => deltas.push(d),
      }),
    );
    expect(error.kind).toBe('timeout');
    expect(error.message).toMatch(/stalled/);
    expect(deltas.length).toBeGreaterThan(0);
  });

  it('Anthropic overloaded_error event inside a stream → server', async () => {
    fakes.anthropic.pushFaults({ fault: 'stream-error', errorType: 'overloaded_error', message: 'Overloaded' });
    const ref = `anthropic:claude-sonnet-4-5@${fakes.anthropic.baseURL}`;
    const error = await rejectionOf(createAdapter(ref, { env: ENV, ...GENEROUS_TIMEOUTS }).generate(helloRequest(ref), { onDelta: () => {} }));
    expect(error.kind).toBe('server');
    expect(error.message).toMatch(/Overloaded/);
  });

  it('Anthropic rate_limit_error event inside a stream → rate_limit', async () => {
    fakes.anthropic.pushFaults({ fault: 'stream-error', errorType: 'rate_limit_error', message: 'slow down' });
    const ref = `anthropic:claude-sonnet-4-5@${fakes.anthropic.baseURL}`;
    const error = await rejectionOf(createAdapter(ref, { env: ENV, ...GENEROUS_TIMEOUTS }).generate(helloRequest(ref), { onDelta: () => {} }));
    expect(error.kind).toBe('rate_limit');
  });

  it('connection refused → connection', async () => {
    const server = await startFakeOpenAI();
    const baseURL = server.baseURL;
    await server.close();
    const ref = `ollama:m@${baseURL}`;
    const error = await rejectionOf(createAdapter(ref, { env: {}, ...GENEROUS_TIMEOUTS }).generate(helloRequest(ref)));
    expect(error.kind).toBe('connection');
  });

  it('a key echoed back in an error body never reaches the message', async () => {
    fakes.openai.pushFaults({ fault: 'status', status: 401, message: `Incorrect API key provided: ${KEY}.` });
    const ref = `openai:gpt-4o@${fakes.openai.baseURL}`;
    const error = await rejectionOf(createAdapter(ref, { env: ENV }).generate(helloRequest(ref)));
    expect(error.kind).toBe('auth');
    expect(error.message).not.toContain(KEY);
    expect(error.message).toContain('***');
  });

  it('a wrong key is an auth error', async () => {
    const ref = `anthropic:claude-sonnet-4-5@${fakes.anthropic.baseURL}`;
    const error = await rejectionOf(createAdapter(ref, { env: { ANTHROPIC_API_KEY: 'wrong-key-xyz' } }).generate(helloRequest(ref)));
    expect(error.kind).toBe('auth');
    expect(error.retryable).toBe(false);
  });

  it('a redirecting endpoint is a config error naming the fix, sent once and not followed', async () => {
    let hits = 0;
    let followed = 0;
    const target = createServer((_req, res) => {
      followed += 1;
      res.end('{}');
    });
    const redirecting = createServer((_req, res) => {
      hits += 1;
      res.writeHead(307, { location: `http://127.0.0.1:${(target.address() as AddressInfo).port}/v1/chat/completions` });
      res.end();
    });
    await Promise.all([target, redirecting].map((server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))));
    try {
      const ref = `openai:gpt-4o@http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/v1`;
      const error = await rejectionOf(createAdapter(ref, { env: ENV }).generate(helloRequest(ref)));
      expect(error.kind).toBe('config');
      expect(error.retryable).toBe(false);
      expect(error.message).toContain('redirect');
      expect(error.message).toContain('base URL');
      expect({ hits, followed }).toEqual({ hits: 1, followed: 0 });
    } finally {
      await Promise.all([target, redirecting].map((server) => new Promise((resolve) => server.close(resolve))));
    }
  });

  it('an unusable request (no messages) is a bad_request, not retried', async () => {
    const ref = `openai:gpt-4o@${fakes.openai.baseURL}`;
    const before = fakes.openai.requests.length;
    const error = await rejectionOf(createAdapter(ref, { env: ENV }).generate({ model: ref, messages: [], params: {}, sample: 0 }));
    expect(error.kind).toBe('bad_request');
    expect(error.retryable).toBe(false);
    expect(fakes.openai.requests.length).toBe(before);
  });

  it('an onDelta callback that throws surfaces as the caller error, unclassified', async () => {
    fakes.openai.setRespond('some streamed text');
    const ref = `openai:gpt-4o@${fakes.openai.baseURL}`;
    const bug = new RangeError('bug in the caller');
    await expect(
      createAdapter(ref, { env: ENV, ...GENEROUS_TIMEOUTS }).generate(helloRequest(ref), {
        onDelta: () => {
          throw bug;
        },
      }),
    ).rejects.toBe(bug);
  });

  it('a cancelled call is aborted, not retried', async () => {
    fakes.openai.pushFaults({ fault: 'stall' });
    const ref = `openai:gpt-4o@${fakes.openai.baseURL}`;
    const controller = new AbortController();
    const pending = createAdapter(ref, { env: ENV, timeoutMs: 60_000 }).generate(helloRequest(ref), { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const error = await rejectionOf(pending);
    expect(error.kind).toBe('aborted');
    expect(error.retryable).toBe(false);
  });
});
