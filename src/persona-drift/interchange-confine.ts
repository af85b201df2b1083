import { InputError } from '../core/errors.js';
import { badPathSegment } from '../core/user-files.js';
import type { ArchiveCell } from './interchange-cells.js';

/**
 * The names an export turns into folder and file names (docs/interchange.md, "Hostile
 * archives"): checked when an archive is imported, so that a cell whose target, position, arm or
 * probe id is `..`, a reserved name or a control character is refused naming its file and field,
 * and can never reach an export as a path part.
 */

/** A file name part from a free name (model refs contain `:` and `/`): what an export writes. */
export const archivePathPart = (name: string): string => name.replace(/[^A-Za-z0-9._-]+/gu, '-');

const PATH_FIELDS = ['target', 'session', 'position', 'arm', 'mitigation', 'distance', 'systemPrompt', 'item'] as const;
/** The field names errors give where they differ from the cell's member names. */
const FIELD_NAMES: Partial<Record<(typeof PATH_FIELDS)[number], string>> = { systemPrompt: 'system_prompt', item: 'probe_id' };

/** Throws an InputError naming the first cell (file) and field whose name is unsafe as a path part. */
export function checkArchiveNames(cells: readonly ArchiveCell[]): void {
  for (const cell of cells) {
    for (const member of PATH_FIELDS) {
      const value = cell[member];
      if (value === null) continue;
      const bad = badPathSegment(value) ?? badPathSegment(archivePathPart(value));
      const field = FIELD_NAMES[member] ?? member;
      if (bad !== undefined) throw new InputError(`${JSON.stringify(value.slice(0, 80))} cannot name a folder or file: ${bad}`, { file: cell.file, field });
    }
  }
}
