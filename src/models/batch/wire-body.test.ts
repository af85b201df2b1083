import { afterEach, describe, expect, it } from 'vitest';
import { createAdapter } from '../create-adapter.js';
import { type FakeServer, startFakeAnthropic, startFakeOpenAI } from '../testing/index.js';
import type { ModelRequest } from '../types.js';
import { batchProviderOf, decodeWireResponse, wireRequestOf } from './wire-body.js';

const env = { OPENAI_API_KEY: 'sk-test', ANTHROPIC_API_KEY: 'ak-test' };
let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function requestFor(model: string): ModelRequest {
  return {
    model,
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'a long shared prefix', cacheBreakpoint: true },
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: 'What is 2+2?' },
    ],
    params: { temperature: 0.7, maxTokens: 64, topP: 0.9, stop: ['END'], seed: 3 },
    sample: 0,
    tools: [{ name: 'add', description: 'adds', inputSchema: { type: 'object', properties: { a: { type: 'number' } } } }],
    toolChoice: 'auto',
  };
}

describe('batch wire bodies', () => {
  it('knows which refs have a batch API', () => {
    expect(batchProviderOf('openai:gpt-4.1-mini')).toBe('openai');
    expect(batchProviderOf('anthropic:claude-sonnet-4-5@http://127.0.0.1:9/v1')).toBe('anthropic');
    expect(batchProviderOf('sim:persona')).toBeNull();
    expect(batchProviderOf('vllm:Qwen/Qwen3-4B')).toBeNull();
    expect(batchProviderOf('openai-compatible:m@http://127.0.0.1:9/v1')).toBeNull();
    expect(batchProviderOf('not a ref')).toBeNull();
  });

  for (const provider of ['openai', 'anthropic'] as const) {
    it(`${provider}: the batch body is the body the online adapter sends`, async () => {
      server = provider === 'openai' ? await startFakeOpenAI() : await startFakeAnthropic();
      const request = requestFor(`${provider}:model-x@${server.baseURL}`);
      await createAdapter(request.model, { env }).generate(request);
      const online = server.requests[0]!;
      const batch = await wireRequestOf(request, env);
      const { stream: _s, stream_options: _o, ...onlineBody } = online.body!;
      expect(batch.body).toEqual(onlineBody);
      expect(online.path).toBe(`/v1${batch.path}`);
      expect(server.requests).toHaveLength(1); // capturing sent nothing
    });

    it(`${provider}: a result body decodes as the online response does`, async () => {
      server = provider === 'openai' ? await startFakeOpenAI() : await startFakeAnthropic();
      server.setRespond({ text: 'four', usage: { inputTokens: 50, outputTokens: 2, cachedInputTokens: 20 } });
      const request = requestFor(`${provider}:model-x@${server.baseURL}`);
      const online = await createAdapter(request.model, { env }).generate(request);
      // The fake's JSON answer for the same request, fetched raw.
      const wire = await wireRequestOf(request, env);
      const raw = await fetch(`${server.baseURL}${wire.path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer x', 'x-api-key': 'x' },
        body: JSON.stringify(wire.body),
      });
      const decoded = await decodeWireResponse(request, await raw.json(), env);
      expect({ ...decoded, latencyMs: 0 }).toEqual({ ...online, latencyMs: 0 });
      expect(decoded.text).toBe('four');
      expect(decoded.usage.cachedInputTokens).toBe(20);
    });
  }

  it('openai: the prompt-cache retention is sent as `prompt_cache_retention` online and on the batch line alike; anthropic ignores it', async () => {
    server = await startFakeOpenAI();
    const request = requestFor(`openai:gpt-4.1@${server.baseURL}`);
    const cache = { promptCacheKey: 'echolens-abc', promptCacheRetention: '24h' as const };
    await createAdapter(request.model, { env }).generate(request, cache);
    await createAdapter(request.model, { env }).generate(request, { promptCacheRetention: 'in_memory' });
    await createAdapter(request.model, { env }).generate(request);
    const [extended, inMemory, unset] = server.requests.map((r) => r.body!);
    expect(server.requests[0]!.path).toBe('/v1/chat/completions');
    expect(extended).toMatchObject({ prompt_cache_key: 'echolens-abc', prompt_cache_retention: '24h' });
    expect(inMemory!.prompt_cache_retention).toBe('in_memory');
    expect('prompt_cache_retention' in unset!).toBe(false);
    const line = await wireRequestOf(request, env, cache);
    expect(line.path).toBe('/chat/completions');
    const { stream: _s, stream_options: _o, ...onlineBody } = extended!;
    expect(line.body).toEqual(onlineBody);

    const anthropic = await wireRequestOf(requestFor('anthropic:claude-sonnet-4-5@http://127.0.0.1:9/v1'), env, cache);
    expect(JSON.stringify(anthropic.body)).not.toMatch(/retention|prompt_cache_key/);
  });

  it('an empty result body is the online empty error', async () => {
    const request = requestFor('openai:m@http://127.0.0.1:9/v1');
    const body = {
      id: 'x',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 0, total_tokens: 3 },
    };
    await expect(decodeWireResponse(request, body, env)).rejects.toMatchObject({ kind: 'empty' });
  });
});
