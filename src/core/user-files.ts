import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, realpathSync, type Stats, statSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { InputError } from './errors.js';

/**
 * Opening a file the user (or an archive) names, safely: only regular files are read (a FIFO
 * would block for ever, a device never ends), sizes are capped before anything is read, reads are
 * bounded, paths derived from data stay inside their root, and JSON is checked for nesting depth
 * before anything recursive (JSON.stringify, canonical JSON, zod) walks it. Every refusal is an
 * InputError naming the file (and the field, where a path part came from a field).
 */

const MiB = 1024 * 1024;

/** The default cap on one JSON / YAML file read whole (an archive's cell, a config, a manifest). */
export const MAX_JSON_FILE_BYTES = 64 * MiB;
/** The cap on a data file read whole (a question set, a benchmark table, a materials file). */
export const MAX_DATA_FILE_BYTES = 512 * MiB;
/** The default cap on everything one archive import reads. */
export const MAX_ARCHIVE_BYTES = 1024 * MiB;
/** The deepest nesting accepted in JSON read from a user file (echolens's own files need < 20). */
export const MAX_JSON_DEPTH = 64;

/** An InputError about a user file; `reason` is the message without the file's location (for callers that add their own words). */
export class UserFileError extends InputError {
  readonly reason: string;
  constructor(reason: string, where: { file?: string; line?: number; field?: string }, options?: { cause?: unknown }) {
    super(reason, where, options);
    this.reason = reason;
  }
}

/** The reason of a UserFileError, else the error's message (for `cannot read X: <reason>` messages). */
export function userFileReason(error: unknown): string {
  return error instanceof UserFileError ? error.reason : (error as Error).message;
}

export interface Where {
  /** The file as the message should name it (default: the path). */
  file?: string;
  field?: string;
}

/** What a file that is not a regular file is ("a FIFO (named pipe)", "a character device", …). */
export function describeFileKind(stats: Pick<Stats, 'isFIFO' | 'isCharacterDevice' | 'isBlockDevice' | 'isSocket' | 'isDirectory' | 'isSymbolicLink'>): string {
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

/** The location of a refusal: `file`, and the field when one is named. */
function located(file: string | undefined, where: Where): { file?: string; field?: string } {
  return { ...(file !== undefined ? { file } : {}), ...(where.field ? { field: where.field } : {}) };
}

function sizeText(bytes: number): string {
  return bytes >= MiB ? `${(bytes / MiB).toFixed(bytes >= 10 * MiB ? 0 : 1)} MiB` : `${bytes} bytes`;
}

/**
 * Opens `path` for reading without ever blocking (O_NONBLOCK: a FIFO opens at once and is then
 * refused) and returns the descriptor of a regular file, or throws naming the file and what it is.
 */
export function openRegularFile(path: string, where: Where = {}): { fd: number; size: number } {
  const file = where.file ?? path;
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'a directory'
            : (error as Error).message;
    throw new UserFileError(`cannot open: ${reason}`, located(file, where), { cause: error });
  }
  const stats = fstatSync(fd);
  if (!stats.isFile()) {
    closeSync(fd);
    throw new UserFileError(`${describeFileKind(stats)}, not a regular file: not read`, located(file, where));
  }
  return { fd, size: stats.size };
}

/**
 * Reads a regular file whole, refusing it (before reading) when it is larger than `maxBytes`, and
 * never reading more than `maxBytes` + 1 bytes even when the size on disk lies (a /proc file, a
 * file growing while read).
 */
export function readUserFile(path: string, options: Where & { maxBytes?: number; what?: string } = {}): Buffer {
  const maxBytes = options.maxBytes ?? MAX_JSON_FILE_BYTES;
  const file = options.file ?? path;
  const tooBig = (size: string) =>
    new UserFileError(`too large: ${size}, over the ${sizeText(maxBytes)} limit for ${options.what ?? 'a file read whole'}`, located(file, options));
  const { fd, size } = openRegularFile(path, options);
  try {
    if (size > maxBytes) throw tooBig(sizeText(size));
    const chunks: Buffer[] = [];
    let total = 0;
    const chunk = Buffer.allocUnsafe(Math.min(Math.max(size, 64 * 1024), 4 * MiB) + 1);
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      total += n;
      if (total > maxBytes) throw tooBig(`more than ${sizeText(maxBytes)}`);
      chunks.push(Buffer.from(chunk.subarray(0, n)));
    }
    return Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}

/** `readUserFile` as UTF-8 text. */
export function readUserText(path: string, options: Where & { maxBytes?: number; what?: string } = {}): string {
  return readUserFile(path, options).toString('utf8');
}

/** `readUserText` of a file named on the command line or in a config: a failure is an input error saying what the file was for. */
export function readInputText(path: string, what: string): string {
  try {
    return readUserText(path);
  } catch (error) {
    throw new InputError(`cannot read ${what}: ${userFileReason(error)}`, { file: path });
  }
}

/**
 * The nesting depth of JSON text beyond `maxDepth`, found by a linear scan that skips strings,
 * or undefined when the text stays within it. Cheap enough to run before every JSON.parse of a
 * user file.
 */
export function jsonTextTooDeep(text: string, maxDepth = MAX_JSON_DEPTH): { depth: number; offset: number } | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 91 /* [ */ || c === 123 /* { */) {
      depth++;
      if (depth > maxDepth) return { depth, offset: i };
    } else if (c === 93 || c === 125) depth--;
  }
  return undefined;
}

/** The path (`a.b[3]`) of the first value nested deeper than `maxDepth` in a parsed value, or undefined. Iterative. */
export function valueTooDeep(value: unknown, maxDepth = MAX_JSON_DEPTH): string | undefined {
  const stack: Array<{ v: unknown; depth: number; path: string }> = [{ v: value, depth: 0, path: '' }];
  while (stack.length > 0) {
    const { v, depth, path } = stack.pop() as { v: unknown; depth: number; path: string };
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > maxDepth) return path || '(root)';
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push({ v: v[i], depth: depth + 1, path: `${path}[${i}]` });
    } else for (const [k, x] of Object.entries(v)) stack.push({ v: x, depth: depth + 1, path: path ? `${path}.${k}` : k });
  }
  return undefined;
}

/** A JSON.parse message without the quoted bytes of the file (an outside file's content never reaches a message). */
function parseMessage(error: unknown): string {
  const message = (error as Error).message;
  const position = /position (\d+)/u.exec(message)?.[1];
  const line = /line (\d+) column (\d+)/u.exec(message);
  if (/Unexpected end of JSON input/u.test(message)) return 'unexpected end of the JSON text';
  const at = line ? ` at line ${line[1]} column ${line[2]}` : position !== undefined ? ` at offset ${position}` : '';
  return `syntax error${at}`;
}

/** JSON text → value, refusing nesting deeper than `maxDepth` (naming the offset) and never quoting the text in an error. */
export function parseUserJson(text: string, where: Where & { maxDepth?: number }): unknown {
  const file = where.file ?? '(input)';
  const deep = jsonTextTooDeep(text, where.maxDepth ?? MAX_JSON_DEPTH);
  if (deep) {
    throw new UserFileError(`nested more than ${where.maxDepth ?? MAX_JSON_DEPTH} levels deep (at offset ${deep.offset})`, {
      file,
      field: where.field ?? '(root)',
    });
  }
  try {
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    throw new UserFileError(`not valid JSON: ${parseMessage(error)}`, { file, field: where.field ?? '(root)' }, { cause: error });
  }
}

/** Reads and parses a JSON user file: regular file, size cap, depth cap. */
export function readUserJson(path: string, options: Where & { maxBytes?: number; maxDepth?: number } = {}): unknown {
  const file = options.file ?? path;
  return parseUserJson(readUserText(path, { ...options, what: options.maxBytes === undefined ? 'a JSON file' : 'this file' }), { ...options, file });
}

const RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/iu;

/**
 * Why `segment` cannot be one part of a path, or undefined when it can: empty, `.` or `..`,
 * a separator, NUL or another control character, a name Windows reserves (CON, NUL, COM1, …),
 * or a trailing dot or space (Windows drops them, so two names would meet).
 */
export function badPathSegment(segment: string): string | undefined {
  if (segment === '') return 'an empty name';
  if (segment === '.' || segment === '..') return `"${segment}" (a reference to a folder)`;
  if (/[/\\]/u.test(segment)) return 'a path separator';
  if (/[\u0000-\u001f\u007f]/u.test(segment)) return segment.includes('\u0000') ? 'a NUL character' : 'a control character';
  if (RESERVED.test(segment)) return `a reserved name ("${segment}")`;
  if (/[. ]$/u.test(segment)) return 'a trailing dot or space';
  if (segment.length > 255) return 'a name longer than 255 characters';
  return undefined;
}

/** Throws naming the file and field when `segment` is not a safe single path part. */
export function checkPathSegment(segment: string, where: Where): string {
  const bad = badPathSegment(segment);
  if (bad !== undefined) {
    throw new UserFileError(`unsafe as a file or folder name: ${bad}`, located(where.file || undefined, where));
  }
  return segment;
}

/** True when `path` is `root` or inside it (both resolved). */
export function isInside(root: string, path: string): boolean {
  const rel = relative(resolve(root), resolve(path));
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * `root` joined with a relative path (`a/b/c.json`) that came from data: absolute paths, NUL and
 * any unsafe part (`..`, reserved names) are refused naming the path and field, and the result is
 * checked to be inside `root`.
 */
export function resolveInside(root: string, relativePath: string, where: Where = {}): string {
  const file = where.file ?? relativePath;
  const field = where.field ?? 'path';
  if (relativePath.includes('\u0000')) throw new UserFileError('unsafe path: a NUL character', { file, field });
  if (isAbsolute(relativePath) || /^[A-Za-z]:/u.test(relativePath) || relativePath.startsWith('\\')) {
    throw new UserFileError('unsafe path: absolute, must stay inside the output folder', { file, field });
  }
  for (const part of relativePath.split(/[/\\]/u)) checkPathSegment(part, { file, field });
  const out = resolve(root, relativePath);
  if (!isInside(root, out)) throw new UserFileError('unsafe path: outside the output folder', { file, field });
  return out;
}

export type ConfinedEntry = 'file' | 'directory' | 'other';

/**
 * What an entry found while walking a folder tree is, following a symbolic link only when it
 * stays inside `root` (a link out of the tree is refused naming it, never read or walked).
 */
export function confinedEntry(root: string, path: string, where: Where = {}): ConfinedEntry {
  const file = where.file ?? path;
  const stats = lstatSync(path);
  if (!stats.isSymbolicLink()) return stats.isFile() ? 'file' : stats.isDirectory() ? 'directory' : 'other';
  let real: string;
  try {
    real = realpathSync(path);
  } catch (error) {
    throw new UserFileError('a symbolic link that leads nowhere (broken or looping)', { file }, { cause: error });
  }
  if (!isInside(realpathSync(root), real)) throw new UserFileError('a symbolic link to outside the archive; not followed', { file });
  const target = statSync(real);
  return target.isFile() ? 'file' : target.isDirectory() ? 'directory' : 'other';
}
