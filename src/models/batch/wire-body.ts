import { AiSdkAdapter } from '../ai-adapter.js';
import { ModelCallError } from '../errors.js';
import { getProvider } from '../providers.js';
import { parseModelRef } from '../ref.js';
import type { GenerateOptions, ModelRequest, ModelResponse } from '../types.js';

/**
 * The batch path sends exactly what the online path sends and reads answers
 * exactly as the online path reads them: the request body is taken from the
 * same SDK adapter through a fetch that records it instead of sending it, and
 * a batch result is parsed by the same adapter through a fetch that answers
 * with the stored result. No second body builder to drift from the first.
 */

export type BatchProvider = 'openai' | 'anthropic';

export interface BatchEndpoint {
  provider: BatchProvider;
  /** Base URL of the provider's API (with `/v1`), from the ref, its variable or the default. */
  baseURL: string;
  apiKey: string;
  /** The ref's model id, e.g. `gpt-4.1-mini`. */
  modelId: string;
}

/** `openai` / `anthropic` when the ref's provider has a batch API echolens speaks; null otherwise (sim:, compatible servers, local, Azure, …). */
export function batchProviderOf(ref: string): BatchProvider | null {
  let provider: string;
  try {
    provider = parseModelRef(ref).provider;
  } catch {
    return null;
  }
  const kind = getProvider(provider)?.kind;
  return kind === 'openai' || kind === 'anthropic' ? kind : null;
}

/** Where a batch-capable ref is reached and with which key (read from `env`, never stored). */
export function batchEndpointOf(ref: string, env: Record<string, string | undefined> = process.env): BatchEndpoint {
  const provider = batchProviderOf(ref);
  if (provider === null) throw new ModelCallError('config', `${ref}: this provider has no batch API`, {});
  const adapter = adapterFor(ref, env, undefined);
  const spec = getProvider(adapter.provider)!;
  const apiKey = (spec.keyEnv === undefined ? '' : env[spec.keyEnv]?.trim()) ?? '';
  return { provider, baseURL: adapter.baseURL, apiKey, modelId: adapter.modelId };
}

export interface WireRequest {
  /** Path relative to the base URL: `/chat/completions` or `/messages`. */
  path: string;
  body: Record<string, unknown>;
}

class Captured extends Error {
  constructor(readonly wire: WireRequest) {
    super('captured');
  }
}

/**
 * The JSON body the online adapter would POST for `request`, with the call's cache options
 * (OpenAI `prompt_cache_key` of its prefix group, Anthropic breakpoint lifetime) as online.
 */
export async function wireRequestOf(
  request: ModelRequest,
  env: Record<string, string | undefined> = process.env,
  cache: Pick<GenerateOptions, 'promptCacheKey' | 'cacheTtl' | 'promptCacheRetention'> = {},
): Promise<WireRequest> {
  let captured: WireRequest | undefined;
  let base = '';
  const adapter = adapterFor(request.model, env, async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const body = JSON.parse(String(init?.body ?? '{}')) as Record<string, unknown>;
    captured = { path: url.startsWith(base) ? url.slice(base.length) : new URL(url).pathname, body };
    throw new Captured(captured);
  });
  base = adapter.baseURL;
  try {
    await adapter.generate(request, cache);
  } catch {
    // Expected: the capturing fetch never answers.
  }
  if (captured === undefined) {
    throw new ModelCallError('config', `${request.model}: the adapter built no request body`, { provider: adapter.provider });
  }
  // A batch line is answered as a whole: never a stream.
  delete captured.body.stream;
  delete captured.body.stream_options;
  return captured;
}

/**
 * Reads one batch result body (an OpenAI chat completion or an Anthropic message)
 * exactly as the online adapter reads the same body from the HTTP response: text,
 * usage, finish reason, tool calls; an empty answer throws ModelCallError('empty').
 */
export async function decodeWireResponse(
  request: ModelRequest,
  responseBody: unknown,
  env: Record<string, string | undefined> = process.env,
): Promise<ModelResponse> {
  const adapter = adapterFor(
    request.model,
    env,
    async () => new Response(JSON.stringify(responseBody), { status: 200, headers: { 'content-type': 'application/json' } }),
  );
  return adapter.generate(request);
}

function adapterFor(ref: string, env: Record<string, string | undefined>, fetch: typeof globalThis.fetch | undefined): AiSdkAdapter {
  const parsed = parseModelRef(ref);
  const spec = getProvider(parsed.provider);
  if (spec === undefined) throw new ModelCallError('config', `${ref}: unknown provider`, {});
  return new AiSdkAdapter(ref, parsed, spec, { env, stream: false, ...(fetch === undefined ? {} : { fetch }) });
}
