import type Database from 'better-sqlite3';
import { type RunCellResultRecord, type RunInfo, type RunRow, runInfoOfRow } from './run-store-common.js';
import { decodeStoredText } from './stored-text.js';
import type { CellLabels, CellResult, CellStatus } from './types.js';

/**
 * The SQLite store's read path for reports (issue #44): a run's cell results read in one pass
 * and its status counts taken only when someone reads them. At paper scale (28,800 cells) a
 * report spent as long building the records and counting cells as reading them; these keep the
 * records the same, field for field, and do less around them.
 */

/**
 * Every row of a statement selecting RESULT_COLUMNS, then the run cell's labels and ordinal, as
 * the run's result records (as `resultRecord` in run-store-common.ts builds them from row objects).
 * The rows come as arrays and are turned into records as they are stepped, so no array of row
 * objects is held beside the records; the optional fields are set, not spread in (a spread builds
 * a second object per cell).
 */
export function readCellResults(statement: Database.Statement, params: readonly unknown[], runId: string): RunCellResultRecord[] {
  const records: RunCellResultRecord[] = [];
  for (const row of statement.raw(true).iterate(...params) as IterableIterator<unknown[]>) records.push(resultRecordOfColumns(runId, row));
  return records;
}

function resultRecordOfColumns(runId: string, c: unknown[]): RunCellResultRecord {
  const key = c[0] as string;
  const result: CellResult = {
    key,
    status: c[4] as CellStatus,
    attempts: c[5] as number,
    text: decodeStoredText(c[6] as string | null),
    reasoning: decodeStoredText(c[7] as string | null),
    finishReason: c[8] as CellResult['finishReason'],
    usage: {
      inputTokens: c[10] as number,
      outputTokens: c[11] as number,
      cachedInputTokens: c[12] as number,
      cacheWriteTokens: c[13] as number,
      reasoningTokens: c[14] as number,
    },
    latencyMs: c[15] as number | null,
    costUsd: c[16] as number | null,
    errorClass: c[17] as string | null,
    errorMessage: decodeStoredText(c[18] as string | null),
    startedAt: c[19] as string | null,
    finishedAt: c[20] as string | null,
    cached: false,
  };
  const responseModel = c[9] as string | null;
  if (responseModel) result.responseModel = responseModel;
  const toolCalls = c[21];
  if (typeof toolCalls === 'string') result.toolCalls = JSON.parse(toolCalls) as CellResult['toolCalls'] & object;
  return {
    runId,
    key,
    labels: JSON.parse(c[22] as string) as CellLabels,
    ordinal: c[23] as number,
    model: c[2] as string,
    sample: c[3] as number,
    result,
  };
}

/**
 * A run's info with its `counts` counted on first read (then kept on the object): a report finds
 * its run in `listRuns` and reads its cells, and never needs the count of every run the list holds
 * (each a join over the run's cells). To its readers the property is an ordinary enumerable field
 * (spread, JSON, equality see the counts).
 */
export function runInfoWithLazyCounts(row: RunRow, count: () => RunInfo['counts']): RunInfo {
  const info = runInfoOfRow(row, { pending: 0, done: 0, empty: 0, failed: 0, total: 0 });
  let counts: RunInfo['counts'] | undefined;
  return Object.defineProperty(info, 'counts', {
    enumerable: true,
    configurable: true,
    get: () => {
      counts ??= count();
      return counts;
    },
    set: (value: RunInfo['counts']) => {
      counts = value;
    },
  });
}
