import { accessSync, constants, type StatsFs, statfsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { InputError } from '../core/errors.js';
import { describeFileKind } from '../core/user-files.js';

/**
 * Whether a SQLite store path can be used, checked before SQLite or the store lock touch it, so
 * that an unusable `--db` is exit 2 at once with the reason: a path under a file ("not a
 * folder"), a folder that cannot be written, a special file (FIFO, device, directory), or a
 * kernel file system (/proc, /sys) where SQLite's files cannot live.
 */

/** proc and sysfs magic numbers (statfs f_type): no database file can live there. */
const PSEUDO_FILE_SYSTEMS = new Map<number, string>([
  [0x9fa0, 'proc'],
  [0x62656572, 'sysfs'],
  [0x64626720, 'debugfs'],
  [0x73636673, 'securityfs'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
]);

function pseudoFileSystem(path: string): string | undefined {
  let info: StatsFs;
  try {
    info = statfsSync(path);
  } catch {
    return undefined;
  }
  return PSEUDO_FILE_SYSTEMS.get(Number(info.type));
}

function statOrUndefined(path: string) {
  try {
    return statSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ENOTDIR') return null;
    throw new InputError(`cannot use this store path: ${code ?? (error as Error).message}`, { file: path }, { cause: error });
  }
}

/** Throws an InputError naming the path and the reason when `file` cannot be a SQLite store (`readonly`: it must exist). */
export function checkStorePath(file: string, readonly: boolean): void {
  if (file === ':memory:' || file.startsWith('file:') || /^postgres(ql)?:\/\//iu.test(file)) return;
  const where = { file };
  const stats = statOrUndefined(file);
  if (stats) {
    if (!stats.isFile()) throw new InputError(`cannot be a store: ${describeFileKind(stats)}, not a regular file`, where);
    const fs = pseudoFileSystem(file);
    if (fs) throw new InputError(`cannot be a store: a file of the kernel's ${fs} file system`, where);
    if (!readonly) {
      try {
        accessSync(file, constants.R_OK | constants.W_OK);
      } catch {
        throw new InputError('cannot be written (read-only file or no permission); give another --db', where);
      }
    }
    return;
  }
  if (readonly && stats === undefined) return; // the reader's own "no such store" message
  // Walk up to the nearest existing ancestor: it must be a folder that can be written.
  let folder = dirname(resolve(file));
  for (;;) {
    const found = statOrUndefined(folder);
    if (found === null) {
      folder = dirname(folder);
      continue;
    }
    if (found === undefined) {
      const parent = dirname(folder);
      if (parent === folder) return;
      folder = parent;
      continue;
    }
    if (!found.isDirectory())
      throw new InputError(
        `cannot create the store: ${folder} is ${describeFileKind(found) === 'not a regular file' ? 'a file' : describeFileKind(found)}, not a folder`,
        where,
      );
    break;
  }
  const fs = pseudoFileSystem(folder);
  if (fs) throw new InputError(`cannot create the store: ${folder} is in the kernel's ${fs} file system`, where);
  try {
    accessSync(folder, constants.W_OK | constants.X_OK);
  } catch {
    throw new InputError(`cannot create the store: the folder ${folder} is read-only or not writable by this user`, where);
  }
}
