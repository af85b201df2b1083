import { createHash } from 'node:crypto';
import { openAIWire } from './fake-openai.js';
import { type FakeRequest, type FakeServer, type FakeServerOptions, roughTokens, startFakeServer, type WireFormat } from './fake-server.js';

/**
 * A fake OpenAI `/v1/embeddings` server (127.0.0.1): answers each input string with
 * `embed(text, model)` — by default {@link fakeEmbedding}, a deterministic 8-d vector
 * derived from SHA-256 of the text — and supports the same request log, keys, model list
 * and scripted faults as the chat fakes.
 */
export interface FakeEmbeddingsOptions extends Pick<FakeServerOptions, 'faults' | 'apiKey' | 'models'> {
  embed?: (text: string, model: string) => number[];
}

/** Deterministic stand-in embedding: 8 components in [−1, 1) from SHA-256 of the text. */
export function fakeEmbedding(text: string): number[] {
  const digest = createHash('sha256').update(text).digest();
  return Array.from({ length: 8 }, (_, i) => digest.readInt16BE(2 * i) / 32768);
}

function inputsOf(request: FakeRequest): string[] {
  const input = request.body?.input;
  if (typeof input === 'string') return [input];
  return Array.isArray(input) ? input.map(String) : [];
}

export function startFakeEmbeddings(options: FakeEmbeddingsOptions = {}): Promise<FakeServer> {
  const embed = options.embed ?? ((text: string) => fakeEmbedding(text));
  const wire: WireFormat = {
    endpoint: '/embeddings',
    readKey: openAIWire.readKey,
    errorBody: openAIWire.errorBody,
    jsonBody(request: FakeRequest) {
      const model = typeof request.body?.model === 'string' ? request.body.model : 'fake-embedding';
      const inputs = inputsOf(request);
      const tokens = inputs.reduce((sum, text) => sum + roughTokens(text), 0);
      return {
        object: 'list',
        data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: embed(text, model) })),
        model,
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      };
    },
    // Embeddings are never streamed.
    streamEvents: () => [],
  };
  // The server reads only its own options (faults, key, models); `embed` is used above.
  return startFakeServer(wire, options);
}
