import { existsSync, mkdirSync, readdirSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { InputError } from '../core/errors.js';
import { isObject } from '../core/guards.js';
import { confinedEntry, isInside, MAX_ARCHIVE_BYTES, MAX_JSON_FILE_BYTES, readUserJson, resolveInside } from '../core/user-files.js';
import {
  type ArchiveCell,
  archiveArmOf,
  checkDistinct,
  fillPositionValues,
  isContentPositionFile,
  parseContentPositionFile,
  parsePerCellFile,
} from './interchange-cells.js';
import { checkArchiveNames } from './interchange-confine.js';

/**
 * Reading and writing a ContextEcho archive directory (the I/O edge of the interchange; the
 * record formats are in interchange-cells.ts, the layout in docs/interchange.md).
 */

/** Where the per-cell tree starts: the authors' results folder, that folder itself, or the directory given. */
function perCellRoot(dir: string): string {
  for (const candidate of [join(dir, 'results', 'probes_at_crosscompaction'), join(dir, 'probes_at_crosscompaction')]) {
    if (existsSync(candidate) && isDir(candidate)) return candidate;
  }
  return dir;
}

/** The archive being read: symbolic links are followed only inside it (docs/interchange.md). */
let archiveRoot = '.';
const isDir = (path: string) => confinedEntry(archiveRoot, path, { file: relative(archiveRoot, path) || path }) === 'directory';
let bytesRead = 0;
/** Bookkeeping names the authors keep beside the cells (cost CSVs, `_judge…`) and hidden files. */
const skipped = (name: string) => name.startsWith('.') || name.startsWith('_');

/** One archive file: a regular file inside the archive, under the per-file and whole-archive caps, nested within the depth cap. */
function readJson(path: string, file: string): unknown {
  if (confinedEntry(archiveRoot, path, { file }) === 'directory') throw new InputError('cannot read: a directory', { file });
  const size = statSync(path).size;
  if (size <= MAX_JSON_FILE_BYTES && bytesRead + size > MAX_ARCHIVE_BYTES) {
    throw new InputError(`the archive is over the ${MAX_ARCHIVE_BYTES / 1024 / 1024} MiB limit for one import (reached at this file)`, { file });
  }
  bytesRead += size;
  return readUserJson(path, { file });
}

export interface ArchiveRead {
  cells: ArchiveCell[];
  /** Files read, relative to the directory given, in the order read. */
  files: string[];
  layouts: { perCell: number; contentPosition: number };
}

/**
 * Every cell of an archive directory: the per-cell tree `<target>/<position>/<arm>/<probe_id>.json`
 * and the content-position files (`*.json` directly in the directory or in `docs/`). Throws an
 * InputError naming the first bad file and field; nothing is returned half-read.
 */
export function readContextEchoArchive(dir: string, judge: string): ArchiveRead {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new InputError('not a directory', { file: dir });
  archiveRoot = dir;
  bytesRead = 0;
  const cells: ArchiveCell[] = [];
  const files: string[] = [];
  const root = perCellRoot(dir);
  let perCell = 0;
  let contentPosition = 0;
  for (const target of readdirSync(root).sort()) {
    if (skipped(target) || !isDir(join(root, target))) continue;
    for (const position of readdirSync(join(root, target)).sort()) {
      if (skipped(position) || !isDir(join(root, target, position))) continue;
      for (const arm of readdirSync(join(root, target, position)).sort()) {
        if (skipped(arm) || !isDir(join(root, target, position, arm))) continue;
        for (const name of readdirSync(join(root, target, position, arm)).sort()) {
          if (!name.endsWith('.json') || skipped(name)) continue;
          const path = join(root, target, position, arm, name);
          const file = relative(dir, path) || name;
          const value = readJson(path, file);
          // Without the authors' results folder every sub-folder is read as a target; a JSON file three
          // levels down that is no cell at all (a repository root given by mistake) says so plainly.
          if (root === dir && archiveArmOf(arm) === undefined && !(isObject(value) && 'probe_id' in value)) {
            throw new InputError(
              `not a per-cell file: ${dir} has no results/probes_at_crosscompaction/, so its folders were read as <target>/<position>/<arm>/ and "${arm}" is no arm; give the folder that holds the archive`,
              { file, field: 'probe_id' },
            );
          }
          cells.push(parsePerCellFile(value, file, { target, position, arm, name }, judge));
          files.push(file);
          perCell += 1;
        }
      }
    }
  }
  for (const folder of [dir, join(dir, 'docs')]) {
    if (!existsSync(folder) || !isDir(folder)) continue;
    for (const name of readdirSync(folder).sort()) {
      if (!name.endsWith('.json') || skipped(name)) continue;
      const path = join(folder, name);
      const file = relative(dir, path);
      const value = readJson(path, file);
      if (!isContentPositionFile(value)) continue;
      // echolens's own export repeats its per-cell cells in this form for the authors' script.
      if (perCell > 0 && (value as { echolens_export?: unknown }).echolens_export === true) continue;
      cells.push(...parseContentPositionFile(value, file, basename(name, '.json'), judge));
      files.push(file);
      contentPosition += 1;
    }
  }
  if (cells.length === 0) {
    throw new InputError(
      'no ContextEcho cells found: expected results/probes_at_crosscompaction/<target>/<position>/<arm>/<probe_id>.json or content-position *.json files (full_results / per_condition)',
      { file: dir },
    );
  }
  fillPositionValues(cells);
  checkDistinct(cells);
  checkArchiveNames(cells);
  // An echolens export lists its cells in plan order; the report's tables keep that order.
  if (cells.every((c) => c.order !== undefined)) cells.sort((a, b) => (a.order as number) - (b.order as number));
  return { cells, files, layouts: { perCell, contentPosition } };
}

/** Writes files under `dir` (each through a temporary name and a rename, so a crash leaves no half file). */
export function writeArchiveFiles(dir: string, files: ReadonlyArray<{ path: string; value: unknown }>): void {
  for (const f of files) {
    const path = resolveInside(dir, f.path, { field: 'path' });
    mkdirSync(dirname(path), { recursive: true });
    // A folder of the output that is a symbolic link out of it is never written through.
    if (!isInside(realpathSync(dir), realpathSync(dirname(path))))
      throw new InputError('a folder of the output is a symbolic link to outside it; not written', { file: f.path });
    const temporary = `${path}.tmp-${process.pid}`;
    writeFileSync(temporary, `${JSON.stringify(f.value, null, 2)}\n`);
    renameSync(temporary, path);
  }
}
