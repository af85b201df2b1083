import { InputError, InvalidArgumentError } from '../core/errors.js';
import type { CellOutcome, RunStore } from './run-store.js';

/** What a commit reports per cell: whether the store took it, and the outcome it now holds. */
export interface Committed {
  /** False when the store refused the write (another process finished the cell first). */
  written: boolean;
  /** The outcome written: the call's, or a `storage` failure when its result could not be stored. */
  outcome: CellOutcome;
}

/**
 * Group commit: results that arrive in the same turn of the event loop are written in
 * one transaction. A cell counts as finished (progress, summary) only once committed,
 * so a kill loses at most the calls of the last turn, which a resume repeats.
 * A result the store cannot hold fails its cell instead (`storeOutcomes`).
 */
export function groupCommitter(store: RunStore): (key: string, outcome: CellOutcome) => Promise<Committed> {
  const commit = batchedCommitter<{ key: string; outcome: CellOutcome }>((items) => store.recordResults(items));
  return (key, outcome) => commit({ key, outcome });
}

/**
 * How many group writes may travel at once (default: no limit). With a limit, items that
 * arrive while every write is on its way join the next write: fewer, larger statements, so
 * a distant database's connections are not all taken by writes of one or two cells.
 */
export interface BatchOptions {
  maxInFlight?: number;
}

/**
 * Items gathered in one turn of the event loop (or, with `maxInFlight`, while the writes
 * allowed are on their way) and handed to `flush` together; each item's promise settles
 * with its part of the answer.
 */
function batcher<I, R>(flush: (items: I[]) => Promise<R[]>, options: BatchOptions = {}): (item: I) => Promise<R> {
  const maxInFlight = Math.max(1, options.maxInFlight ?? Number.POSITIVE_INFINITY);
  let batch: Array<{ item: I; resolve: (result: R) => void; reject: (error: unknown) => void }> = [];
  let inFlight = 0;
  let scheduled = false;
  const schedule = () => {
    if (scheduled || batch.length === 0 || inFlight >= maxInFlight) return;
    scheduled = true;
    setImmediate(() => void run());
  };
  const run = async () => {
    scheduled = false;
    if (batch.length === 0 || inFlight >= maxInFlight) return;
    const entries = batch;
    batch = [];
    inFlight += 1;
    try {
      const results = await flush(entries.map((entry) => entry.item));
      for (const [index, entry] of entries.entries()) entry.resolve(results[index]!);
    } catch (error) {
      for (const entry of entries) entry.reject(error);
    } finally {
      inFlight -= 1;
      schedule();
    }
  };
  return (item) =>
    new Promise<R>((resolve, reject) => {
      batch.push({ item, resolve, reject });
      schedule();
    });
}

/** The group commit over any writer of outcomes (the PostgreSQL work loop adds the run to each item). */
export function batchedCommitter<T extends { outcome: CellOutcome }>(
  write: (items: readonly T[]) => Promise<boolean[]>,
  options: BatchOptions = {},
): (item: T) => Promise<Committed> {
  return batcher((items: T[]) => storeOutcomes(items, write), options);
}

/**
 * Attempts counted before the calls are sent (`RunStore.beginAttempts`): calls that start
 * in the same turn of the event loop are counted in one statement; each resolves once
 * its count is written, and only then is the call sent.
 */
export function attemptRecorder(begin: (keys: readonly string[]) => Promise<void>, options: BatchOptions = {}): (key: string) => Promise<void> {
  return batcher(async (keys: string[]) => {
    await begin(keys);
    return keys.map(() => undefined);
  }, options);
}

/**
 * Writes outcomes; when the batch fails for a reason other than a lost connection, each
 * item is written alone, and an item the store refuses even alone (a value the database
 * cannot hold) is written as a failed cell with a `storage: …` error that keeps the call's
 * attempts, usage and cost. So a result that cannot be stored ends its cell — it is not
 * left pending to be called again — and its spend counts. An error that the failure
 * record cannot be written either (the database is down, the store read-only) is thrown.
 */
export async function storeOutcomes<T extends { outcome: CellOutcome }>(
  items: readonly T[],
  write: (items: readonly T[]) => Promise<boolean[]>,
): Promise<Committed[]> {
  if (items.length === 0) return [];
  try {
    return (await write(items)).map((written, index) => ({ written, outcome: items[index]!.outcome }));
  } catch (error) {
    if (!isDataError(error)) throw error;
  }
  const out: Committed[] = [];
  for (const item of items) {
    try {
      out.push({ written: (await write([item]))[0]!, outcome: item.outcome });
    } catch (error) {
      if (!isDataError(error)) throw error;
      const outcome = storageFailure(item.outcome, error);
      out.push({ written: (await write([{ ...item, outcome }]))[0]!, outcome });
    }
  }
  return out;
}

/** The failed outcome recorded in place of a result the store could not hold. */
export function storageFailure(outcome: CellOutcome, error: unknown): CellOutcome {
  const reason = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').slice(0, 500);
  return {
    ...outcome,
    status: 'failed',
    text: null,
    reasoning: null,
    responseModel: null,
    toolCalls: null,
    errorClass: 'storage',
    errorMessage: `storage: the ${outcome.status === 'done' ? 'answer' : 'result'} of this call could not be stored (${reason})`,
  };
}

/** SQLSTATE / driver codes of a lost or refused connection (never a property of the value written). */
const CONNECTION_CODES =
  /^(08|57P0|53|ECONN|EPIPE|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|SQLITE_BUSY|SQLITE_LOCKED|SQLITE_IOERR|SQLITE_FULL|SQLITE_READONLY|SQLITE_CANTOPEN)/;

/** An error of the values written (not of the connection, the store's state or the caller). */
function isDataError(error: unknown): boolean {
  if (error instanceof InvalidArgumentError || error instanceof InputError) return false;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && CONNECTION_CODES.test(code)) return false;
  return !/Connection terminated|connection is closed|not queryable|terminating connection|database is locked|store is closed|timeout exceeded when trying to connect/i.test(
    error.message,
  );
}
