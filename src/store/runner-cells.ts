import type { ModelRequest } from '../models/types.js';
import type { RunStore } from './run-store.js';
import type { RunCellsOptions } from './runner-types.js';
import type { CellResult, CellSpec } from './types.js';

/** What a run starts from: the plan registered, its distinct cells, and which of them still need a call. */
export interface PreparedCells {
  /** Key of every spec, in spec order. */
  specKeys: string[];
  /** Distinct cells in first-appearance order (requests are the plan's own objects, not copies). */
  uniqueKeys: string[];
  uniqueRequests: ModelRequest[];
  /** Current result of every distinct cell, by key (from the store; updated as cells finish). */
  results: Map<string, CellResult>;
  /** Indices (into uniqueKeys) of cells to call. */
  toRun: number[];
  /** Cells already final in the store. */
  cachedCount: number;
}

/**
 * Registers the plan with the store (keys hashed incrementally; long prefixes
 * stored once) and reads back what is already finished.
 */
export async function prepareCells(
  store: RunStore,
  runId: string,
  specs: readonly CellSpec[],
  options: Pick<RunCellsOptions, 'retryEmpty' | 'retryFailed'>,
): Promise<PreparedCells> {
  const specKeys = await store.registerCells(runId, specs);
  const uniqueKeys: string[] = [];
  const uniqueRequests: ModelRequest[] = [];
  const seen = new Set<string>();
  specKeys.forEach((key, index) => {
    if (seen.has(key)) return;
    seen.add(key);
    uniqueKeys.push(key);
    uniqueRequests.push(specs[index]!.request);
  });

  const results = await store.resultsOfRun(runId);
  const toRun: number[] = [];
  let cachedCount = 0;
  uniqueKeys.forEach((key, index) => {
    const result = results.get(key)!;
    const final =
      result.status === 'done' || (result.status === 'empty' && !options.retryEmpty) || (result.status === 'failed' && options.retryFailed === false);
    if (final) cachedCount += 1;
    else toRun.push(index);
  });
  return { specKeys, uniqueKeys, uniqueRequests, results, toRun, cachedCount };
}
