import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdapter } from './create-adapter.js';
import { type FakeServer, startFakeOpenAI } from './testing/index.js';
import { GENEROUS_TIMEOUTS, helloRequest, thrownBy } from './testing/harness.js';

/**
 * Azure OpenAI, Mistral, Groq and DeepSeek through their own AI SDK provider
 * packages, against a local chat-completions server: the path, the key
 * header, the body the package sends, and the answer and usage mapped back.
 */

const KEY = 'sk-test-SECRET-provider-42';
const request = (model: string) => helloRequest(model, { params: { temperature: 0.2, maxTokens: 64 } });

let server: FakeServer;
beforeAll(async () => {
  server = await startFakeOpenAI({ respond: { text: 'Hello.', usage: { inputTokens: 21, outputTokens: 3 } } });
});
afterAll(() => server.close());

const CASES = [
  { provider: 'azure', env: 'AZURE_API_KEY', model: 'my-deployment', keyHeader: 'api-key', bearer: false },
  { provider: 'mistral', env: 'MISTRAL_API_KEY', model: 'mistral-small-latest', keyHeader: 'authorization', bearer: true },
  { provider: 'groq', env: 'GROQ_API_KEY', model: 'llama-3.3-70b-versatile', keyHeader: 'authorization', bearer: true },
  { provider: 'deepseek', env: 'DEEPSEEK_API_KEY', model: 'deepseek-chat', keyHeader: 'authorization', bearer: true },
] as const;

describe.each(CASES)('$provider: through its AI SDK package', ({ provider, env, model, keyHeader, bearer }) => {
  it('sends a chat-completions request with the key and maps the answer', async () => {
    const ref = `${provider}:${model}@${server.baseURL}`;
    const adapter = createAdapter(ref, { env: { [env]: KEY }, ...GENEROUS_TIMEOUTS });
    const before = server.requests.length;
    const response = await adapter.generate(request(ref));
    expect(response.text).toBe('Hello.');
    expect(response.usage.inputTokens).toBe(21);
    expect(response.usage.outputTokens).toBe(3);
    const sent = server.requests[before]!;
    expect(sent.path.split('?')[0]).toMatch(/\/chat\/completions$/);
    expect(sent.headers[keyHeader]).toBe(bearer ? `Bearer ${KEY}` : KEY);
    const body = sent.body as { model?: string; messages?: Array<{ role: string }>; temperature?: number };
    // Azure names the deployment in the body's model field too (v1 API).
    expect(body.model).toBe(model);
    expect(body.messages?.map((m) => m.role)).toEqual(['system', 'user']);
    expect(body.temperature).toBe(0.2);
  });

  it(`needs ${env}`, () => {
    const error = thrownBy(() => createAdapter(`${provider}:${model}@${server.baseURL}`, { env: {} }));
    expect(error.kind).toBe('auth');
    expect(error.message).toContain(env);
  });
});

describe('azure base URL', () => {
  it('comes from the reference or AZURE_OPENAI_BASE_URL; without either the error says how to write it', () => {
    expect(() => createAdapter('azure:my-deployment', { env: { AZURE_API_KEY: KEY } })).toThrow(/no base URL; write it as azure:/);
    expect(createAdapter('azure:my-deployment', { env: { AZURE_API_KEY: KEY, AZURE_OPENAI_BASE_URL: server.baseURL } }).ref).toBe('azure:my-deployment');
  });
});
