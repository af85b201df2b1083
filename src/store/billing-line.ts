import type { RunSummary } from './runner-types.js';

/**
 * One line after a stage: what its calls were billed against what they would have cost
 * online with no prompt cache (both from the usage the providers reported), and how many
 * answered cells read the prompt cache. Null when nothing priced was called.
 */
export function billingLine(label: string, summary: Pick<RunSummary, 'spendUsd' | 'naiveUsd' | 'cacheReadCells' | 'done' | 'empty'>): string | null {
  if (!(summary.naiveUsd > 0)) return null;
  const answered = summary.done + summary.empty;
  return (
    `${label}: billed $${summary.spendUsd.toFixed(4)} vs naive $${summary.naiveUsd.toFixed(4)} ` +
    `(${(summary.spendUsd / summary.naiveUsd).toFixed(3)} of naive); prompt-cache reads in ${summary.cacheReadCells} of ${answered} answered cells`
  );
}
