/** The token counts a provider reports for one call (and their sums over calls or a session). */
export interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  /** Input tokens served from the provider's prompt cache. */
  cachedInputTokens: number;
  /** Input tokens written to the provider's prompt cache (Anthropic). */
  cacheWriteTokens: number;
  reasoningTokens: number;
}

/** Adds `usage` into `total` field by field; a missing usage or field adds nothing. */
export function addTokenCounts(total: TokenCounts, usage: TokenCounts | undefined): void {
  if (!usage) return;
  total.inputTokens += usage.inputTokens || 0;
  total.outputTokens += usage.outputTokens || 0;
  total.cachedInputTokens += usage.cachedInputTokens || 0;
  total.cacheWriteTokens += usage.cacheWriteTokens || 0;
  total.reasoningTokens += usage.reasoningTokens || 0;
}
