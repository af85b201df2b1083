import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { InputError } from '../core/errors.js';
import {
  type ArchiveCell,
  checkDistinct,
  fillPositionValues,
  isContentPositionFile,
  parseContentPositionFile,
  parsePerCellFile,
} from './interchange-cells.js';

/**
 * Reading and writing a ContextEcho archive directory (the I/O edge of the interchange; the
 * record formats are in interchange-cells.ts, the layout in docs/interchange.md).
 */

/** Where the per-cell tree starts: the authors' results folder, that folder itself, or the directory given. */
function perCellRoot(dir: string): string {
  for (const candidate of [join(dir, 'results', 'probes_at_crosscompaction'), join(dir, 'probes_at_crosscompaction')]) {
    if (existsSync(candidate) && statSync(candidate).isDirectory()) return candidate;
  }
  return dir;
}

const isDir = (path: string) => statSync(path).isDirectory();
/** Bookkeeping names the authors keep beside the cells (cost CSVs, `_judge…`) and hidden files. */
const skipped = (name: string) => name.startsWith('.') || name.startsWith('_');

function readJson(path: string, file: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new InputError(`cannot read: ${(error as Error).message}`, { file }, { cause: error });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InputError(`not valid JSON: ${(error as Error).message}`, { file, field: '(root)' }, { cause: error });
  }
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
  if (!existsSync(dir) || !isDir(dir)) throw new InputError('not a directory', { file: dir });
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
          cells.push(parsePerCellFile(readJson(path, file), file, { target, position, arm, name }, judge));
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
  // An echolens export lists its cells in plan order; the report's tables keep that order.
  if (cells.every((c) => c.order !== undefined)) cells.sort((a, b) => (a.order as number) - (b.order as number));
  return { cells, files, layouts: { perCell, contentPosition } };
}

/** Writes files under `dir` (each through a temporary name and a rename, so a crash leaves no half file). */
export function writeArchiveFiles(dir: string, files: ReadonlyArray<{ path: string; value: unknown }>): void {
  for (const f of files) {
    const path = join(dir, f.path);
    mkdirSync(dirname(path), { recursive: true });
    const temporary = `${path}.tmp-${process.pid}`;
    writeFileSync(temporary, `${JSON.stringify(f.value, null, 2)}\n`);
    renameSync(temporary, path);
  }
}
