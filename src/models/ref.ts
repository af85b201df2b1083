import { InvalidArgumentError } from '../core/errors.js';
import { didYouMean } from '../core/suggest.js';
import { getProvider, providerNames } from './providers.js';

/**
 * A parsed model reference `provider:model[@baseURL]`.
 * Model ids may themselves contain ':' and '/' (`ollama:qwen3:4b`,
 * `vllm:Qwen/Qwen3-4B`); only the first ':' separates the provider, and only
 * an `@` followed by an http(s) URL (the last such `@`) starts a base URL.
 */
export interface ModelRef {
  provider: string;
  model: string;
  baseURL?: string;
}

/** Index of the last '@' that is followed by http:// or https://, or -1. */
function lastUrlAt(text: string): number {
  const lower = text.toLowerCase();
  return Math.max(lower.lastIndexOf('@http://'), lower.lastIndexOf('@https://'));
}

export function parseModelRef(ref: string): ModelRef {
  if (typeof ref !== 'string' || ref.trim() === '') {
    throw new InvalidArgumentError('model', 'a model reference is required, e.g. openai:gpt-4.1-mini');
  }
  const text = ref.trim();
  const colon = text.indexOf(':');
  if (colon <= 0) {
    // Inspect and LiteLLM spell a model provider/model: name the echolens spelling when the first part is a provider.
    const slash = text.indexOf('/');
    const head = slash > 0 ? text.slice(0, slash).toLowerCase() : '';
    const hint = head !== '' && getProvider(head) !== undefined ? `; did you mean ${head}:${text.slice(slash + 1)}?` : '';
    throw new InvalidArgumentError(
      'model',
      `"${text}" is not a model reference: expected provider:model[@baseURL] with provider one of ${providerNames().join(', ')}${hint}`,
    );
  }
  const provider = text.slice(0, colon).toLowerCase();
  const spec = getProvider(provider);
  if (spec === undefined) {
    throw new InvalidArgumentError(
      'model',
      `unknown provider "${text.slice(0, colon)}" in "${text}"${didYouMean(provider, providerNames())}; valid providers: ${providerNames().join(', ')}`,
    );
  }
  let model = text.slice(colon + 1);
  let baseURL: string | undefined;
  // replay: takes a path; it is never split on '@'.
  const at = spec.kind === 'replay' ? -1 : lastUrlAt(model);
  if (at >= 0) {
    baseURL = normalizeBaseURL(model.slice(at + 1), text);
    model = model.slice(0, at);
  }
  if (model === '') {
    throw new InvalidArgumentError('model', `"${text}" names no model after "${provider}:"`);
  }
  if (baseURL !== undefined && (spec.kind === 'sim' || spec.kind === 'local')) {
    throw new InvalidArgumentError('model', `"${text}": ${provider}: models take no @baseURL`);
  }
  if (spec.baseURLRequired && baseURL === undefined) {
    throw new InvalidArgumentError('model', `"${text}": ${provider}: needs a base URL, e.g. ${spec.example}`);
  }
  return baseURL === undefined ? { provider, model } : { provider, model, baseURL };
}

export function formatModelRef(ref: ModelRef): string {
  return ref.baseURL === undefined ? `${ref.provider}:${ref.model}` : `${ref.provider}:${ref.model}@${ref.baseURL}`;
}

function normalizeBaseURL(raw: string, ref: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new InvalidArgumentError('model', `"${ref}": "${raw}" is not a valid base URL`);
  }
  if (url.username !== '' || url.password !== '') {
    // Credentials in a URL would end up in the store with the reference.
    throw new InvalidArgumentError('model', 'the base URL must not contain credentials (user:password@); use the API key variable');
  }
  return raw.replace(/\/+$/, '');
}
