import { countTokens } from './token-count.js';

/**
 * Anthropic's shortest cacheable prefix per model, in tokens, as published in its
 * prompt-caching guide: 4,096 for Claude Opus 4.5 and Haiku 4.5, 2,048 for the
 * Haiku 3 family, 1,024 for the other Claude models. A breakpoint on a shorter
 * prefix is ignored by the provider (no write, no read).
 */
export function anthropicCacheMinimumTokens(modelId: string): number {
  const id = modelId.toLowerCase();
  if (/opus-4-5|haiku-4-5/.test(id)) return 4096;
  if (/haiku-3|3-haiku|3-5-haiku/.test(id)) return 2048;
  return 1024;
}

const counted = new Map<string, boolean>();

/**
 * Whether a static system prompt is long enough to carry its own Anthropic cache
 * breakpoint (docs/decisions.md#cost-estimates-and-caching). Counted with o200k,
 * which counts Claude text 0–20 % low, so a prompt that passes here passes there.
 * Remembered per text: judges and labelers send the same system prompt on every call.
 */
export function systemPromptCacheable(text: string, modelId: string): boolean {
  const minimum = anthropicCacheMinimumTokens(modelId);
  // Under ~2 characters a token no text reaches the minimum: skip the count.
  if (text.length < minimum * 2) return false;
  const key = `${minimum}\u0000${text}`;
  let cacheable = counted.get(key);
  if (cacheable === undefined) {
    cacheable = countTokens(text) >= minimum;
    if (counted.size > 256) counted.clear();
    counted.set(key, cacheable);
  }
  return cacheable;
}
