import type { PlanEstimate } from '../models/estimate.js';

/** The token and dollar lines every `--dry-run` prints under its plan line. */
export function estimateLines(e: PlanEstimate): string[] {
  return [
    `input tokens ≈ ${e.inputTokens.toLocaleString('en-US')}; output tokens expected ≈ ${e.outputTokens.expected.toLocaleString('en-US')}, at most ${e.outputTokens.max.toLocaleString('en-US')}`,
    `cost ≈ $${e.dollars.low.toFixed(2)} – $${e.dollars.high.toFixed(2)}${e.unpricedModels.length > 0 ? ` (no price for: ${e.unpricedModels.join(', ')})` : ''}`,
    'nothing was called (--dry-run)',
  ];
}
