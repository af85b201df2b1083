import type { EmbeddingModel } from 'ai';
import { InvalidArgumentError } from '../core/errors.js';
import { classifyError } from './classify.js';
import { resolveAiSdkTarget } from './ai-target.js';
import { ModelCallError } from './errors.js';
import { getProvider } from './providers.js';
import { parseModelRef } from './ref.js';

/**
 * Text embeddings from an OpenAI-compatible `/v1/embeddings` endpoint, named by a model
 * reference like every other model (`openai:text-embedding-3-small`, `vllm:<model>`,
 * `ollama:all-minilm`, `openai-compatible:<model>@http://127.0.0.1:8080/v1`). Keys and base-URL
 * overrides are read from the environment only, as for chat models.
 */
export interface TextEmbedder {
  readonly ref: string;
  /** One vector per value, in order. */
  embed(values: readonly string[], options?: { signal?: AbortSignal }): Promise<number[][]>;
}

export interface EmbedderOptions {
  /** Where API keys and base-URL overrides are read (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Retries of a failed request inside the AI SDK (default 2). */
  maxRetries?: number;
}

/** True when a model reference names a provider with an embeddings endpoint here (openai or OpenAI-compatible). */
export function isEmbeddingModelRef(ref: string): boolean {
  try {
    const kind = getProvider(parseModelRef(ref).provider)?.kind;
    return kind === 'openai' || kind === 'compatible';
  } catch {
    return false;
  }
}

export function createEmbedder(ref: string, options: EmbedderOptions = {}): TextEmbedder {
  const parsed = parseModelRef(ref);
  const spec = getProvider(parsed.provider);
  if (spec === undefined || (spec.kind !== 'openai' && spec.kind !== 'compatible')) {
    throw new InvalidArgumentError(
      'model',
      `"${ref}": ${parsed.provider}: has no embeddings endpoint; use openai:, an OpenAI-compatible provider (vllm:, ollama:, llamacpp:, lmstudio:, openrouter:, together:, openai-compatible:…@url) or a JSON file`,
    );
  }
  const { baseURL, apiKey } = resolveAiSdkTarget(ref, parsed, spec, options.env ?? process.env, false);
  // The AI SDK loads on the first call: commands that only read a store never load it.
  let model: Promise<EmbeddingModel> | undefined;
  const makeModel = async (): Promise<EmbeddingModel> =>
    spec.kind === 'openai'
      ? (await import('@ai-sdk/openai')).createOpenAI({ baseURL, apiKey: apiKey ?? '' }).embedding(parsed.model)
      : (await import('@ai-sdk/openai-compatible'))
          .createOpenAICompatible({ name: parsed.provider, baseURL, ...(apiKey === undefined ? {} : { apiKey }) })
          .embeddingModel(parsed.model);
  const secrets = apiKey === undefined ? [] : [apiKey];
  return {
    ref,
    async embed(values, callOptions = {}) {
      if (values.length === 0) return [];
      let embeddings: number[][];
      try {
        model ??= makeModel();
        const { embedMany } = await import('ai');
        const result = await embedMany({
          model: await model,
          values: [...values],
          maxRetries: options.maxRetries ?? 2,
          ...(callOptions.signal === undefined ? {} : { abortSignal: callOptions.signal }),
        });
        embeddings = result.embeddings;
      } catch (error) {
        throw classifyError(error, { provider: parsed.provider, secrets });
      }
      if (embeddings.length !== values.length) {
        throw new ModelCallError('malformed', `${parsed.provider}: ${embeddings.length} embeddings for ${values.length} inputs`, { provider: parsed.provider });
      }
      embeddings.forEach((vector, i) => {
        if (!Array.isArray(vector) || vector.length === 0 || !vector.every((c) => typeof c === 'number' && Number.isFinite(c))) {
          throw new ModelCallError('malformed', `${parsed.provider}: the embedding of input ${i} is not a non-empty vector of finite numbers`, {
            provider: parsed.provider,
          });
        }
      });
      return embeddings;
    },
  };
}
