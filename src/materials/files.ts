import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { ConfigError, InputError } from '../core/errors.js';
import { confinedEntry, MAX_DATA_FILE_BYTES, readUserFile, resolveInside } from '../core/user-files.js';

/**
 * Reading a local clone of an authors' repository: every file a loader reads
 * is recorded with the SHA-256 of its bytes, so a run's manifest says exactly
 * which materials it used and two runs can be compared knowingly.
 */

/** One file read from the clone: its path inside the clone and the hash of its content. */
export interface MaterialFile {
  path: string;
  sha256: string;
  bytes: number;
}

/** What a run records about its materials and procedure. */
export interface MaterialsRecord {
  /** `echolens` (the texts shipped with echolens) or `reference`. */
  source: 'echolens' | 'reference';
  /** Which reference repository (`ContextEcho`, `DriftLens`) when source is `reference`. */
  repository?: string;
  /** Absolute path of the clone. */
  root?: string;
  /** Files read, each with its hash (the built-in data files when source is `echolens`). */
  files: MaterialFile[];
  /** What the loader had to decide about the clone's content (e.g. duplicate strings). */
  notes: string[];
}

export const ECHOLENS_MATERIALS = 'echolens';

/** True when a `materials:` value names the built-in texts. */
export function isBuiltinMaterials(materials: string | undefined): boolean {
  return materials === undefined || materials === ECHOLENS_MATERIALS;
}

export function hashBytes(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A clone's root folder: must exist and be a directory. */
export function cloneRoot(path: string, base = process.cwd()): string {
  const root = isAbsolute(path) ? path : resolve(base, path);
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new ConfigError(`materials: "${path}" is not a folder (give "echolens" or the path of a local clone of the authors' repository)`, {
      field: 'materials',
    });
  }
  return root;
}

/** Reads files of one clone and remembers each one's hash. */
export class CloneReader {
  readonly files: MaterialFile[] = [];

  constructor(
    readonly root: string,
    readonly repository: string,
  ) {}

  /** The text of `path` (relative to the clone), recorded with its hash. */
  read(path: string): { text: string; file: string } {
    const file = resolveInside(this.root, path, { field: 'materials' });
    let bytes: Buffer;
    try {
      // A file of the clone that is a link out of it, a FIFO or a device is refused, never read.
      confinedEntry(this.root, file, { file });
      bytes = readUserFile(file, { maxBytes: MAX_DATA_FILE_BYTES, what: 'a materials file' });
    } catch (error) {
      if (error instanceof InputError && !/no such file/u.test(error.message)) throw error;
      throw new InputError(
        `the ${this.repository} clone has no ${path}`,
        { file },
        {
          hint: `materials must point at a clone of the published ${this.repository} repository`,
        },
      );
    }
    if (!this.files.some((f) => f.path === path)) this.files.push({ path, sha256: hashBytes(bytes), bytes: bytes.length });
    return { text: bytes.toString('utf8'), file };
  }

  record(notes: string[] = []): MaterialsRecord {
    return { source: 'reference', repository: this.repository, root: this.root, files: [...this.files], notes };
  }
}

/** The record of a built-in run: each data file echolens read, hashed the same way. */
export function builtinRecord(files: ReadonlyArray<{ path: string; file: string }>): MaterialsRecord {
  return {
    source: 'echolens',
    files: files.map(({ path, file }) => {
      const bytes = readFileSync(file);
      return { path, sha256: hashBytes(bytes), bytes: bytes.length };
    }),
    notes: [],
  };
}
