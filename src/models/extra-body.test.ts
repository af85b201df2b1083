import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdapter } from './create-adapter.js';
import { startFakeOpenAI } from './testing/fake-openai.js';
import type { FakeServer } from './testing/fake-server.js';
import { helloRequest } from './testing/harness.js';

/**
 * Extra body fields of OpenAI-compatible servers (top_k, chat_template_kwargs) go into the
 * SDK's own body, which is sent as built: no fetch wrapper parses and re-serialises each
 * request (issue 34). Fields the SDK would keep out of the body still go through verbatim.
 */
describe('extra body fields on OpenAI-compatible servers', () => {
  let server: FakeServer;
  beforeAll(async () => {
    server = await startFakeOpenAI({ respond: 'ok' });
  });
  afterAll(async () => {
    await server.close();
  });

  it('top_k and chat_template_kwargs sit in the body the SDK built (before the messages), not appended after it', async () => {
    const ref = `vllm:Qwen/Qwen3-4B@${server.baseURL}`;
    const adapter = createAdapter(ref, { env: {} });
    for (const topK of [20, 50]) {
      await adapter.generate(helloRequest(ref, { params: { topK, chatTemplateKwargs: { enable_thinking: false }, maxTokens: 32 } }));
      const sent = server.requests.at(-1)!;
      expect(sent.body).toMatchObject({ top_k: topK, chat_template_kwargs: { enable_thinking: false }, max_tokens: 32 });
      // A body re-serialised with the fields merged in would end with them.
      const keys = Object.keys(sent.body!);
      expect(keys.indexOf('top_k')).toBeLessThan(keys.indexOf('messages'));
    }
  });

  it('a field the SDK reads for itself (reasoning_effort) is still sent verbatim', async () => {
    const ref = `vllm:Qwen/Qwen3-4B@${server.baseURL}`;
    await createAdapter(ref, { env: {} }).generate(
      helloRequest(ref, { params: { maxTokens: 8, topK: 3, providerOptions: { reasoning_effort: 'low', user: 'u1' } } }),
    );
    expect(server.requests.at(-1)!.body).toMatchObject({ top_k: 3, reasoning_effort: 'low', user: 'u1' });
  });
});
