import { existsSync, mkdirSync, readdirSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
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
  parseStressorFile,
} from './interchange-cells.js';
import { checkArchiveNames } from './interchange-confine.js';

/**
 * Reading and writing a ContextEcho archive directory (the I/O edge of the interchange; the
 * record formats are in interchange-cells.ts, the layout in docs/interchange.md).
 */

/**
 * Where the per-cell tree starts: the authors' results folder, that folder itself, or the directory
 * given; null when the directory holds only the authors' other layouts (cross-compaction, anchor
 * variants).
 */
function perCellRoot(dir: string): string | null {
  for (const candidate of [join(dir, 'results', 'probes_at_crosscompaction'), join(dir, 'probes_at_crosscompaction')]) {
    if (existsSync(candidate) && isDir(candidate)) return candidate;
  }
  if (stressorRoots(dir).length > 0) return null;
  return dir;
}

/** The authors' stressor layouts under `dir` (or `dir/results`): cross-compaction and anchor variants. */
function stressorRoots(dir: string): Array<{ kind: 'cross_compaction' | 'anchor_variants'; path: string }> {
  const out: Array<{ kind: 'cross_compaction' | 'anchor_variants'; path: string }> = [];
  for (const kind of ['cross_compaction', 'anchor_variants'] as const) {
    // The layout's own folder given directly is read too.
    for (const candidate of [join(dir, 'results', kind), join(dir, kind), ...(basename(resolve(dir)) === kind ? [dir] : [])]) {
      if (existsSync(candidate) && isDir(candidate)) {
        out.push({ kind, path: candidate });
        break;
      }
    }
  }
  return out;
}

/** Sub-folders of a folder, sorted, bookkeeping names skipped. */
function folders(path: string): string[] {
  return readdirSync(path)
    .sort()
    .filter((name) => !skipped(name) && isDir(join(path, name)));
}

/** The cells of the cross-compaction (`<target>/<position>/vNN/{claude,filler}.json`) and anchor-variant (`<variant>/<target>/<position>/vNN/cell.json`) layouts. */
function readStressorLayouts(dir: string, cells: ArchiveCell[], files: string[]): { crossCompaction: number; anchorVariants: number } {
  const counts = { crossCompaction: 0, anchorVariants: 0 };
  for (const root of stressorRoots(dir)) {
    const variants = root.kind === 'anchor_variants' ? folders(root.path) : [null];
    for (const variant of variants) {
      const base = variant === null ? root.path : join(root.path, variant);
      for (const target of folders(base)) {
        for (const position of folders(join(base, target))) {
          for (const v of folders(join(base, target, position))) {
            const names: Array<[string, 'real' | 'filler']> =
              variant === null
                ? [
                    ['claude.json', 'real'],
                    ['filler.json', 'filler'],
                  ]
                : [['cell.json', 'real']];
            for (const [name, arm] of names) {
              const path = join(base, target, position, v, name);
              if (!existsSync(path)) continue;
              const file = relative(dir, path);
              cells.push(parseStressorFile(readJson(path, file), file, { target, position, v, arm, variant }));
              files.push(file);
              if (variant === null) counts.crossCompaction += 1;
              else counts.anchorVariants += 1;
            }
          }
        }
      }
    }
  }
  return counts;
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
  layouts: { perCell: number; contentPosition: number; crossCompaction?: number; anchorVariants?: number };
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
  for (const target of root === null ? [] : readdirSync(root).sort()) {
    if (root === null) break;
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
  const stressors = readStressorLayouts(dir, cells, files);
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
  // (Stressor files of an export carry no order: they follow, in path order.)
  if (cells.some((c) => c.order !== undefined)) cells.sort((a, b) => (a.order ?? Number.MAX_SAFE_INTEGER) - (b.order ?? Number.MAX_SAFE_INTEGER));
  const layouts: ArchiveRead['layouts'] = { perCell, contentPosition };
  if (stressors.crossCompaction > 0) layouts.crossCompaction = stressors.crossCompaction;
  if (stressors.anchorVariants > 0) layouts.anchorVariants = stressors.anchorVariants;
  return { cells, files, layouts };
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
