import type { RunSummary } from './runner-types.js';

/**
 * One line after a stage: what its calls were billed against what they would have cost
 * online with no prompt cache (both from the usage the providers reported), and how many
 * answered cells read the prompt cache. Null when nothing priced was called.
 */
export function billingLine(
  label: string,
  summary: Pick<RunSummary, 'spendUsd' | 'naiveUsd' | 'cacheReadCells' | 'done' | 'empty'> & Pick<Partial<RunSummary>, 'batchCache'>,
): string | null {
  if (!(summary.naiveUsd > 0)) return null;
  const answered = summary.done + summary.empty;
  const cache = summary.batchCache;
  // --batch stages with prefix groups: the followers' reads against expected (src/store/batch-cache-watch.ts).
  const followers =
    cache === undefined || cache.expectedReads === 0
      ? ''
      : `; followers read the cache in ${cache.billedReads} of ${cache.expectedReads} expected${cache.lost ? ' (cache lost)' : ''}`;
  return (
    `${label}: billed $${summary.spendUsd.toFixed(4)} vs naive $${summary.naiveUsd.toFixed(4)} ` +
    `(${(summary.spendUsd / summary.naiveUsd).toFixed(3)} of naive); prompt-cache reads in ${summary.cacheReadCells} of ${answered} answered cells${followers}`
  );
}
