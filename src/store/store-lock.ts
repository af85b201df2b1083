import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { InputError } from '../core/errors.js';

/**
 * One writing process per run store. Two processes resuming the same store would both
 * see the same pending cells and call every one of them twice; a lock file beside the
 * store (`<store>.lock`, created with O_EXCL, holding pid, host and start time) lets
 * the second one stop with a clear error instead. A lock whose process is gone (same
 * host, pid not alive: the holder crashed or was killed) is taken over, so a SIGKILLed
 * run resumes without manual cleanup. Re-opening in the same process shares the lock.
 */
export interface LockInfo {
  pid: number;
  host: string;
  started: string;
}

const held = new Map<string, number>();

function lockPath(file: string): string {
  return `${file}.lock`;
}

function readLock(path: string): LockInfo | null {
  try {
    const info = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockInfo>;
    if (typeof info.pid !== 'number' || typeof info.host !== 'string') return null;
    return { pid: info.pid, host: info.host, started: String(info.started ?? '') };
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the store's write lock (or throws an InputError naming the holder). */
export function acquireStoreLock(file: string): void {
  if (file === ':memory:') return;
  const path = lockPath(file);
  const count = held.get(path);
  if (count !== undefined) {
    held.set(path, count + 1);
    return;
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, JSON.stringify({ pid: process.pid, host: hostname(), started: new Date().toISOString() }));
      closeSync(fd);
      held.set(path, 1);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return; // read-only folder etc.: no lock to take
    }
    const info = readLock(path);
    if (info !== null && (info.host !== hostname() || alive(info.pid))) {
      throw new InputError(
        `the store is in use by process ${info.pid} on ${info.host} (since ${info.started}); two processes on one store would call the same cells twice — wait for it to finish, or use another --db`,
        { file },
        { hint: `if that process is gone, delete ${path}` },
      );
    }
    // The holder is gone (or the file is half-written): take it over.
    try {
      unlinkSync(path);
    } catch {
      // Someone else removed it first; try again.
    }
  }
  throw new InputError('could not take the store lock', { file }, { hint: `delete ${path} if no echolens process uses the store` });
}

export function releaseStoreLock(file: string): void {
  const path = lockPath(file);
  const count = held.get(path);
  if (count === undefined) return;
  if (count > 1) {
    held.set(path, count - 1);
    return;
  }
  held.delete(path);
  const info = readLock(path);
  if (info !== null && info.pid !== process.pid) return;
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

/**
 * The live process writing a store, other than this one, or null: its lock file names a pid that
 * is alive on this host (or any pid on another host, which cannot be checked).
 */
export function storeWriter(file: string): LockInfo | null {
  if (file === ':memory:' || file.startsWith('postgres')) return null;
  const info = readLock(lockPath(file));
  if (info === null || (info.host === hostname() && (info.pid === process.pid || !alive(info.pid)))) return null;
  return info;
}
