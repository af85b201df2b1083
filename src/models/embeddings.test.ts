import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../core/errors.js';
import { createEmbedder, isEmbeddingModelRef } from './embeddings.js';
import { ModelCallError } from './errors.js';
import { fakeEmbedding, startFakeEmbeddings } from './testing/fake-embeddings.js';
import type { FakeServer } from './testing/index.js';

describe('createEmbedder against a fake /v1/embeddings server (127.0.0.1)', () => {
  let server: FakeServer;
  beforeAll(async () => {
    server = await startFakeEmbeddings({ apiKey: 'sk-test-secret', models: ['text-embedding-3-small', 'all-minilm'] });
  });
  afterAll(() => server.close());

  it('embeds through openai: with the key and base URL from the environment, in order', async () => {
    const embedder = createEmbedder('openai:text-embedding-3-small', {
      env: { OPENAI_API_KEY: 'sk-test-secret', OPENAI_BASE_URL: server.baseURL },
      maxRetries: 0,
    });
    const before = server.requests.length;
    const vectors = await embedder.embed(['Recall/Fact', 'Compute/Arithmetic']);
    expect(vectors).toEqual([fakeEmbedding('Recall/Fact'), fakeEmbedding('Compute/Arithmetic')]);
    const request = server.requests[before];
    expect(request?.path).toBe('/v1/embeddings');
    expect(request?.body?.model).toBe('text-embedding-3-small');
    expect(request?.body?.input).toEqual(['Recall/Fact', 'Compute/Arithmetic']);
    expect(request?.headers.authorization).toBe('Bearer sk-test-secret');
  });

  it('embeds through an OpenAI-compatible reference with @baseURL (no key needed by the provider)', async () => {
    const keyless = await startFakeEmbeddings();
    try {
      const embedder = createEmbedder(`openai-compatible:all-minilm@${keyless.baseURL}`, { env: {}, maxRetries: 0 });
      expect(await embedder.embed(['unmapped'])).toEqual([fakeEmbedding('unmapped')]);
      expect(await embedder.embed([])).toEqual([]);
      expect(keyless.requests).toHaveLength(1);
    } finally {
      await keyless.close();
    }
  });

  it('classifies provider failures and never leaks the key', async () => {
    const wrongKey = createEmbedder(`openai:text-embedding-3-small@${server.baseURL}`, { env: { OPENAI_API_KEY: 'sk-wrong-key' }, maxRetries: 0 });
    const auth = await wrongKey.embed(['x']).catch((error: unknown) => error);
    expect(auth).toBeInstanceOf(ModelCallError);
    expect((auth as ModelCallError).kind).toBe('auth');
    expect((auth as Error).message).not.toContain('sk-wrong-key');

    const unknownModel = createEmbedder(`openai:nope@${server.baseURL}`, { env: { OPENAI_API_KEY: 'sk-test-secret' }, maxRetries: 0 });
    expect(((await unknownModel.embed(['x']).catch((e: unknown) => e)) as ModelCallError).kind).toBe('not_found');

    server.pushFaults({ fault: 'status', status: 503 });
    const good = createEmbedder(`openai:text-embedding-3-small@${server.baseURL}`, { env: { OPENAI_API_KEY: 'sk-test-secret' }, maxRetries: 0 });
    expect(((await good.embed(['x']).catch((e: unknown) => e)) as ModelCallError).kind).toBe('server');
  });

  it('refuses a reply whose vectors are empty', async () => {
    const short = await startFakeEmbeddings({ embed: () => [] });
    try {
      const embedder = createEmbedder(`openai-compatible:m@${short.baseURL}`, { env: {}, maxRetries: 0 });
      const error = (await embedder.embed(['a']).catch((e: unknown) => e)) as ModelCallError;
      expect(error).toBeInstanceOf(ModelCallError);
      expect(error.kind).toBe('malformed');
    } finally {
      await short.close();
    }
  });

  it('needs a key where the provider requires one, and an HTTP provider', () => {
    expect(() => createEmbedder('openai:text-embedding-3-small', { env: {} })).toThrow(/set the OPENAI_API_KEY environment variable/);
    expect(() => createEmbedder('sim:echo')).toThrow(InvalidArgumentError);
    expect(() => createEmbedder('anthropic:claude-sonnet-4-5')).toThrow(/has no embeddings endpoint/);
    expect(isEmbeddingModelRef('vllm:BAAI/bge-small')).toBe(true);
    expect(isEmbeddingModelRef('sim:echo')).toBe(false);
    expect(isEmbeddingModelRef('emb.json')).toBe(false);
  });
});
