import type { BatchProvider } from './batch/wire-body.js';

/**
 * Price factor of a batch call against the same call online. OpenAI's Batch API
 * and Anthropic's Message Batches both bill every token class (input, cached
 * input, cache writes, output) at half the online rate, so a batch cell's cost is
 * its online cost (src/models/prices.ts, prompt-cache discounts included) × 0.5.
 * Recorded costs are therefore simulated from the published rule, not read from
 * an invoice (docs/decisions.md, "Batch runs").
 */
export const BATCH_DISCOUNT: Readonly<Record<BatchProvider, number>> = Object.freeze({ openai: 0.5, anthropic: 0.5 });

/** The batch price of a call whose online price is `onlineUsd` (null stays null: unknown is never 0). */
export function batchCost(provider: BatchProvider, onlineUsd: number | null | undefined): number | null {
  if (onlineUsd === null || onlineUsd === undefined || !Number.isFinite(onlineUsd)) return null;
  return onlineUsd * BATCH_DISCOUNT[provider];
}
