import { createHash } from 'node:crypto';
import type { ChatMessage, ModelRequest } from '../models/types.js';
import { messageDigest } from './request-hash.js';

/** Shortest shared prefix worth warming a provider's prompt cache for (~1,000 tokens). */
export const DEFAULT_PREFIX_MIN_CHARS = 4_000;

/**
 * The messages a provider can cache for this request: up to and including the
 * last message marked `cacheBreakpoint`, else every message but the last.
 */
export function cacheablePrefix(messages: readonly ChatMessage[]): readonly ChatMessage[] {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    if (messages[index]!.cacheBreakpoint) return messages.slice(0, index + 1);
  }
  return messages.slice(0, -1);
}

/** Identity of a request's cacheable prefix on its model, or null when too short to matter. */
export function prefixSignature(request: ModelRequest, minChars = DEFAULT_PREFIX_MIN_CHARS): string | null {
  const prefix = cacheablePrefix(request.messages);
  let chars = 0;
  for (const message of prefix) chars += message.content.length;
  if (prefix.length === 0 || chars < minChars) return null;
  // Per-message digests are cached on the message objects (request-hash.ts): a grid whose cells
  // share a session prefix hashes it once, not once per cell.
  const hash = createHash('sha256').update(request.model);
  for (const message of prefix) hash.update(`\u0000${message.role}\u0000${messageDigest(message)}`);
  return hash.digest('hex');
}

/**
 * Rough input-token count of a request (≈ 4 characters per token plus a few
 * tokens of framing per message). Used for token-per-minute limits and cost
 * ceilings, never for reporting.
 */
export function estimateInputTokens(request: ModelRequest): number {
  let chars = 0;
  for (const message of request.messages) chars += message.content.length;
  return Math.ceil(chars / 4) + 4 * request.messages.length + 3;
}
