import { parseModelRef } from './ref.js';

/**
 * OpenAI's prompt-cache retention (`prompt_cache_retention`), as its prompt-caching guide and
 * API reference publish it (docs/decisions.md#openai-cache-retention). Pure.
 *
 * - `in_memory`: a cached prefix is typically dropped after 5–10 minutes without use, and
 *   always within an hour of its last use.
 * - `24h` (extended retention): the prefix is kept up to 24 hours (offloaded from GPU memory
 *   to GPU-local storage). Same price as `in_memory`; not eligible for Zero Data Retention.
 */
export type OpenAICacheRetention = 'in_memory' | '24h';

const MINUTE = 60_000;

/**
 * The lifetime echolens plans with for each retention: the short end of the in-memory range
 * (a follower planned inside 5 minutes finds the cache however the provider evicts), and the
 * published 24 hours for extended retention.
 */
export function openaiRetentionTtlMs(retention: OpenAICacheRetention | undefined): number {
  return retention === '24h' ? 24 * 60 * MINUTE : 5 * MINUTE;
}

/**
 * Models OpenAI lists as taking `prompt_cache_retention: "24h"` (the guide's list, plus
 * gpt-5.3-codex from Azure's). GPT-5.6 and later replace the field with `prompt_cache_options`,
 * so they are not listed: echolens sends them no retention unless the config asks.
 */
const EXTENDED_RETENTION_MODELS = new Set([
  'gpt-4.1',
  'gpt-5',
  'gpt-5-codex',
  'gpt-5.1',
  'gpt-5.1-codex',
  'gpt-5.1-codex-mini',
  'gpt-5.1-codex-max',
  'gpt-5.1-chat-latest',
  'gpt-5.2',
  'gpt-5.3-codex',
  'gpt-5.4',
  'gpt-5.5',
  'gpt-5.5-pro',
]);

/** Whether an OpenAI model id (a dated snapshot counts as its model) takes 24-hour retention. */
export function supportsExtendedRetention(modelId: string): boolean {
  const id = modelId.toLowerCase().replace(/-\d{4}-\d{2}-\d{2}$/, '');
  return EXTENDED_RETENTION_MODELS.has(id);
}

/**
 * The retention a call of an OpenAI model asks for: the config's when it sets one; otherwise,
 * when followers wait in a batch for their leaders' cache (`--batch`), `24h` for a model that
 * takes it (the in-memory cache rarely outlives a batch queue); otherwise none (the provider's
 * default, which depends on the organisation's data-retention setting).
 */
export function openaiRetentionFor(modelId: string, configured: OpenAICacheRetention | undefined, followersWait: boolean): OpenAICacheRetention | undefined {
  if (configured !== undefined) return configured;
  return followersWait && supportsExtendedRetention(modelId) ? '24h' : undefined;
}

/**
 * The retention each `openai:` model of a plan asks for (the dry run lists it). `batch`: the
 * run goes through `--batch` with its prefix groups in two waves. Refs of other providers, and
 * refs that do not parse, are left out.
 */
export function openaiRetentionByModel(
  refs: readonly string[],
  configured: OpenAICacheRetention | undefined,
  batch: boolean,
): Array<{ ref: string; retention: OpenAICacheRetention | undefined }> {
  const out: Array<{ ref: string; retention: OpenAICacheRetention | undefined }> = [];
  for (const ref of [...new Set(refs)].sort()) {
    let parsed: { provider: string; model: string };
    try {
      parsed = parseModelRef(ref);
    } catch {
      continue;
    }
    if (parsed.provider !== 'openai') continue;
    out.push({ ref, retention: openaiRetentionFor(parsed.model, configured, batch) });
  }
  return out;
}
