import { afterEach, describe, expect, it } from 'vitest';
import { createAdapter } from '../models/index.js';
import { type FakeServer, lastUserText, startFakeOpenAI } from '../models/testing/index.js';
import { RunStore } from './run-store.js';
import { FatalBurstError, runCells } from './runner.js';
import { makeSpecs, TEST_MANIFEST } from './testing/fakes.js';

// The runner against the real adapter over HTTP (127.0.0.1 fake OpenAI-compatible server).
let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup() {
  const store = RunStore.open(':memory:');
  return { store, runId: await store.createRun(TEST_MANIFEST) };
}

describe('runCells over the OpenAI wire format', () => {
  it('waits the Retry-After of a real 429, retries a 503, and stores the answers', async () => {
    server = await startFakeOpenAI({
      respond: (request) => ({ text: `echo ${lastUserText(request)}` }),
      faults: [
        { fault: 'status', status: 429, retryAfter: '3' },
        { fault: 'status', status: 503, retryAfterMs: '250' },
      ],
    });
    const { store, runId } = await setup();
    const waits: number[] = [];
    const ref = `vllm:fake-model@${server.baseURL}`;
    const summary = await runCells(store, runId, makeSpecs(3, ref), {
      adapterFor: (model) => createAdapter(model),
      concurrency: 1,
      sleep: async (ms) => void waits.push(ms),
    });
    expect(summary).toMatchObject({ done: 3, failed: 0, calls: 5 });
    expect(waits).toEqual([3000, 250]);
    expect(summary.results[0]).toMatchObject({ status: 'done', attempts: 3, text: 'echo Question number 0?' });
    expect(server.requests).toHaveLength(5);
  });

  it('stops on repeated 401s with the provider’s message and never retries them', async () => {
    server = await startFakeOpenAI({ apiKey: 'right-key-123456' });
    const { store, runId } = await setup();
    const waits: number[] = [];
    const error = await runCells(store, runId, makeSpecs(10, `vllm:fake-model@${server.baseURL}`), {
      adapterFor: (model) => createAdapter(model, { env: { VLLM_API_KEY: 'wrong-key-654321' } }),
      concurrency: 1,
      sleep: async (ms) => void waits.push(ms),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FatalBurstError);
    expect((error as FatalBurstError).errorKind).toBe('auth');
    expect(server.requests).toHaveLength(3);
    expect(waits).toEqual([]);
    expect(JSON.stringify(await store.cellsOfRun(runId))).not.toContain('wrong-key-654321');
  });
});

describe('runCells and the prompt caches on the wire', () => {
  const long = (tag: string) => `${tag} `.repeat(3000);
  const specsFor = (model: string) =>
    ['a', 'b'].flatMap((group) =>
      [1, 2, 3].map((probe) => ({
        request: {
          model,
          messages: [
            { role: 'user' as const, content: long(group), cacheBreakpoint: true },
            { role: 'user' as const, content: `probe ${probe}` },
          ],
          params: { maxTokens: 16 },
          sample: 0,
        },
        labels: { group, probe },
      })),
    );

  it('sends one prompt_cache_key per prefix group to OpenAI and records cache reads per cell', async () => {
    server = await startFakeOpenAI({
      respond: (request) => ({
        text: 'ok',
        usage: { inputTokens: 3100, cachedInputTokens: request.index < 2 ? 0 : 2048 },
      }),
    });
    const { store, runId } = await setup();
    // Virtual time: any wait would move the clock.
    let clock = 0;
    const summary = await runCells(store, runId, specsFor(`openai:gpt-4.1@${server.baseURL}`), {
      adapterFor: (model) => createAdapter(model, { env: { OPENAI_API_KEY: 'test-key-1234' } }),
      concurrency: 2,
      now: () => clock,
      sleep: async (ms) => {
        clock += ms;
      },
    });
    // Pacing only reorders: with both groups at their pace and nothing else to send, the run never idles.
    expect(clock).toBe(0);
    expect(summary.done).toBe(6);
    const keys = server.requests.map((request) => request.body?.prompt_cache_key);
    expect(keys.every((key) => typeof key === 'string' && key.startsWith('echolens-'))).toBe(true);
    expect(new Set(keys).size).toBe(2);
    const byGroup = new Map<string, Set<unknown>>();
    for (const request of server.requests) {
      const group = JSON.stringify(request.body?.messages).includes('a a a') ? 'a' : 'b';
      byGroup.set(group, (byGroup.get(group) ?? new Set()).add(request.body?.prompt_cache_key));
    }
    expect([...byGroup.values()].map((set) => set.size)).toEqual([1, 1]);
    // The first call of each group is its leader; the followers wait for it.
    expect(summary.tokens.cachedInputTokens).toBe(4 * 2048);
    expect((await store.cellsOfRun(runId)).filter((cell) => (cell.result?.usage.cachedInputTokens ?? 0) > 0)).toHaveLength(4);

    server.requests.length = 0;
    const other = await setup();
    await runCells(other.store, other.runId, specsFor(`openai:gpt-4.1@${server.baseURL}`), {
      adapterFor: (model) => createAdapter(model, { env: { OPENAI_API_KEY: 'test-key-1234' } }),
      cache: { promptCacheKey: false },
      now: () => clock,
      sleep: async (ms) => {
        clock += ms;
      },
    });
    expect(server.requests.some((request) => 'prompt_cache_key' in (request.body ?? {}))).toBe(false);
  });

  it('sends the configured OpenAI prompt_cache_retention on every call, and none when the config sets none', async () => {
    server = await startFakeOpenAI({ respond: () => ({ text: 'ok' }) });
    const adapterFor = (model: string) => createAdapter(model, { env: { OPENAI_API_KEY: 'test-key-1234' } });
    const specs = specsFor(`openai:gpt-4.1@${server.baseURL}`);
    const first = await setup();
    await runCells(first.store, first.runId, specs, { adapterFor, cache: { openaiCacheRetention: '24h' }, sleep: async () => undefined });
    expect(server.requests).toHaveLength(6);
    expect(server.requests.map((request) => request.body?.prompt_cache_retention)).toEqual(Array(6).fill('24h'));
    server.requests.length = 0;
    const second = await setup();
    await runCells(second.store, second.runId, specs, { adapterFor, sleep: async () => undefined });
    expect(server.requests).toHaveLength(6);
    expect(server.requests.some((request) => 'prompt_cache_retention' in (request.body ?? {}))).toBe(false);
  });

  it('sends the 1-hour cache TTL on Anthropic breakpoints when chosen, and records cache writes', async () => {
    const { startFakeAnthropic } = await import('../models/testing/index.js');
    server = await startFakeAnthropic({
      respond: (request) => ({ text: 'ok', usage: { cacheWriteTokens: request.index === 0 ? 3000 : 0, cachedInputTokens: request.index === 0 ? 0 : 3000 } }),
    });
    const { store, runId } = await setup();
    const summary = await runCells(store, runId, specsFor(`anthropic:claude-sonnet-4-5@${server.baseURL}`).slice(0, 3), {
      adapterFor: (model) => createAdapter(model, { env: { ANTHROPIC_API_KEY: 'test-key-1234' } }),
      cache: { cacheTtl: '1h' },
      sleep: async () => undefined,
    });
    expect(summary.done).toBe(3);
    for (const request of server.requests) {
      const messages = request.body?.messages as Array<{ content: Array<{ text: string; cache_control?: unknown }> }>;
      const marked = messages.flatMap((message) => message.content).filter((part) => part.cache_control !== undefined);
      expect(marked).toHaveLength(1);
      expect(marked[0]!.text.startsWith('a a a')).toBe(true);
      expect(marked[0]!.cache_control).toEqual({ type: 'ephemeral', ttl: '1h' });
      expect('prompt_cache_key' in (request.body ?? {})).toBe(false);
    }
    expect(summary.tokens.cacheWriteTokens).toBe(3000);
    expect(summary.tokens.cachedInputTokens).toBe(6000);
  });
});
