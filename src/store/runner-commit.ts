import type { CellOutcome, RunStore } from './run-store.js';

/**
 * Group commit: results that arrive in the same turn of the event loop are written in
 * one transaction. A cell counts as finished (progress, summary) only once committed,
 * so a kill loses at most the calls of the last turn, which a resume repeats.
 * The returned writer resolves to false when the store refused the write (another
 * process finished the cell first).
 */
export function groupCommitter(store: RunStore): (key: string, outcome: CellOutcome) => Promise<boolean> {
  let batch: Array<{ key: string; outcome: CellOutcome; resolve: (written: boolean) => void; reject: (error: unknown) => void }> = [];
  const flush = () => {
    const items = batch;
    batch = [];
    try {
      const written = store.recordResults(items);
      for (const [index, item] of items.entries()) item.resolve(written[index]!);
    } catch (error) {
      for (const item of items) item.reject(error);
    }
  };
  return (key, outcome) =>
    new Promise<boolean>((resolve, reject) => {
      if (batch.length === 0) setImmediate(flush);
      batch.push({ key, outcome, resolve, reject });
    });
}
