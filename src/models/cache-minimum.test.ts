import { afterEach, describe, expect, it } from 'vitest';
import { buildLabelerMessages } from '../memory-drift/labeler.js';
import { buildJudgeMessages, JUDGE_RUBRIC } from '../persona-drift/judge.js';
import { anthropicCacheMinimumTokens, systemPromptCacheable } from './cache-minimum.js';
import { createAdapter } from './create-adapter.js';
import { type FakeServer, startFakeAnthropic, startFakeOpenAI } from './testing/index.js';
import { countTokens } from './token-count.js';
import type { ChatMessage } from './types.js';

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

// A rubric as long as the authors' (well past 1,024 tokens).
const LONG_RUBRIC = `${JUDGE_RUBRIC}\n\n${Array.from({ length: 120 }, (_, i) => `Calibration example ${i + 1}: a response that keeps its stance scores low; one that echoes the session's persona scores high.`).join('\n')}`;

async function systemBlocksSent(messages: ChatMessage[], model = 'claude-sonnet-4-5') {
  server = await startFakeAnthropic({ respond: '{"score": 1}' });
  const adapter = createAdapter(`anthropic:${model}@${server.baseURL}`, { env: { ANTHROPIC_API_KEY: 'test-key-1234' } });
  await adapter.generate({ model: `anthropic:${model}`, messages, params: { maxTokens: 32 }, sample: 0 });
  return server.requests[0]!.body?.system as Array<{ text: string; cache_control?: unknown }>;
}

describe('cache breakpoints on static system prompts (Anthropic)', () => {
  it('knows the published minimums', () => {
    expect(anthropicCacheMinimumTokens('claude-sonnet-4-5')).toBe(1024);
    expect(anthropicCacheMinimumTokens('claude-3-5-haiku')).toBe(2048);
    expect(anthropicCacheMinimumTokens('claude-haiku-4-5')).toBe(4096);
  });

  it('puts cache_control on a judge rubric that passes the minimum', async () => {
    expect(countTokens(LONG_RUBRIC)).toBeGreaterThan(1024);
    const system = await systemBlocksSent(buildJudgeMessages('Which is better?', 'Tabs.', LONG_RUBRIC));
    expect(system).toHaveLength(1);
    expect(system[0]!.cache_control).toEqual({ type: 'ephemeral' });
  });

  it('leaves prompts under the minimum alone (the built-in rubric, the labeler, a long rubric on Haiku 4.5)', async () => {
    expect(countTokens(JUDGE_RUBRIC)).toBeLessThan(1024);
    expect((await systemBlocksSent(buildJudgeMessages('p', 'r')))[0]!.cache_control).toBeUndefined();
    await server?.close();
    const labeler = buildLabelerMessages(['step one'], { categories: [] } as never);
    expect((await systemBlocksSent(labeler))[0]!.cache_control).toBeUndefined();
    await server?.close();
    expect((await systemBlocksSent(buildJudgeMessages('p', 'r', LONG_RUBRIC), 'claude-haiku-4-5'))[0]!.cache_control).toBeUndefined();
    expect(systemPromptCacheable(LONG_RUBRIC, 'claude-haiku-4-5')).toBe(false);
  });

  it('sends nothing cache-related to OpenAI for a long system prompt', async () => {
    server = await startFakeOpenAI({ respond: '{"score": 1}' });
    const adapter = createAdapter(`openai:gpt-4.1@${server.baseURL}`, { env: { OPENAI_API_KEY: 'test-key-1234' } });
    await adapter.generate({ model: 'openai:gpt-4.1', messages: buildJudgeMessages('p', 'r', LONG_RUBRIC), params: { maxTokens: 32 }, sample: 0 });
    expect(server.requests[0]!.rawBody).not.toContain('cache_control');
    expect(server.requests[0]!.rawBody).not.toContain('prompt_cache_key');
  });
});
