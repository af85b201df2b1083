import { EcholensError } from '../core/errors.js';

/**
 * Expected faults of the store's file system and file, as clear one-line errors
 * (exit 2) instead of an internal error with a stack: a full disk, and a damaged
 * or foreign file. Completed cells are on disk before any of these can happen
 * (each result is its own transaction), so re-running resumes.
 */

export const DISK_FULL_MESSAGE = 'disk full — free space, then re-run to resume';

/** The disk (or the store's quota) is full. */
export class DiskFullError extends EcholensError {
  constructor(file: string | undefined, options: { cause?: unknown } = {}) {
    super('disk_full', DISK_FULL_MESSAGE, { ...options, ...(file ? { hint: `the run store is ${file}` } : {}) });
  }
}

/** The store file is damaged (SQLite reports corruption) or not a database at all. */
export class DamagedStoreError extends EcholensError {
  readonly file: string | undefined;

  constructor(file: string | undefined, detail: string, options: { cause?: unknown } = {}) {
    const name = file ?? 'the run store';
    super('store_damaged', `${name} is damaged (${detail}) — check it with \`echolens runs check ${file ?? '<run.db>'}\``, {
      ...options,
      hint: 'restore the store from a copy, or start a new one with another --db; completed cells in a damaged store may be lost',
    });
    this.file = file;
  }
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** True for SQLite's "database or disk is full" and the file system's ENOSPC / EDQUOT. */
export function isDiskFull(error: unknown): boolean {
  const code = codeOf(error);
  return code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT';
}

/** True for SQLite's corruption codes (SQLITE_CORRUPT and its extended codes) and SQLITE_NOTADB. */
export function isDamagedStore(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT'));
}

/**
 * The clear error for an expected store fault, or undefined for anything else. Looks
 * through `cause` chains (a fault wrapped by a caller is still the fault).
 */
export function storeFaultOf(error: unknown, file?: string): EcholensError | undefined {
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) {
    if (e instanceof DiskFullError || e instanceof DamagedStoreError) return e;
    if (isDiskFull(e)) return new DiskFullError(file, { cause: e });
    if (isDamagedStore(e)) return new DamagedStoreError(file, (e as Error).message, { cause: e });
  }
  return undefined;
}

// The store a fault most likely concerns: the one this process opened last. A fault raised by a
// query (not by opening) reaches the CLI after the store was closed, without its file name.
let lastStore: string | undefined;

/** Called by the store when it opens a file. */
export function noteStoreOpened(file: string): void {
  lastStore = file;
}

/** The store this process opened last, if any. */
export function lastStoreFile(): string | undefined {
  return lastStore;
}
