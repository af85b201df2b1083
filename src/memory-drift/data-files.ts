import { createHash } from 'node:crypto';
import { basename, extname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { InputError } from '../core/errors.js';
import { packageRoot } from '../core/version.js';
import { MAX_DATA_FILE_BYTES, readUserFile } from '../core/user-files.js';

const BUILTIN_NAMES = ['questions', 'ontology', 'ontologyAlt', 'perturbations', 'curationKeywords'] as const;
/** Names of the built-in DriftLens data files (see data/memory-drift/manifest.json). */
export type BuiltinDataName = (typeof BUILTIN_NAMES)[number];

export interface DataFileText {
  /** Path as given or resolved (used in error messages). */
  file: string;
  text: string;
  /** SHA-256 of the file bytes, recorded in run manifests. */
  sha256: string;
}

export interface BuiltinDataFile extends DataFileText {
  name: BuiltinDataName;
  version: string;
}

export function memoryDriftDataDir(): string {
  return join(packageRoot(), 'data', 'memory-drift');
}

export function readDataFile(path: string): DataFileText {
  let buffer: Buffer;
  try {
    buffer = readUserFile(path, { maxBytes: MAX_DATA_FILE_BYTES, what: 'a data file' });
  } catch (thrown) {
    const error = thrown instanceof InputError ? thrown.cause : thrown;
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    // Not a regular file, or over the size limit: the helper's message says which.
    if (thrown instanceof InputError && code === undefined) throw thrown;
    throw new InputError(
      code === 'ENOENT' ? 'file not found' : `cannot read file (${code ?? 'error'})`,
      { file: path },
      {
        cause: error,
      },
    );
  }
  return { file: path, text: buffer.toString('utf8'), sha256: createHash('sha256').update(buffer).digest('hex') };
}

interface Manifest {
  files: Record<BuiltinDataName, { file: string; version: string }>;
}

/** Reads one built-in data file with its version from the manifest. */
export function readBuiltinDataFile(name: BuiltinDataName): BuiltinDataFile {
  const dir = memoryDriftDataDir();
  const manifestFile = join(dir, 'manifest.json');
  const manifest = JSON.parse(readDataFile(manifestFile).text) as Manifest;
  const entry = manifest.files[name];
  if (entry === undefined) throw new InputError(`no entry "${name}"`, { file: manifestFile, field: 'files' });
  return { ...readDataFile(join(dir, entry.file)), name, version: entry.version };
}

/** Version and SHA-256 of every built-in stimulus file, for run manifests. */
export function builtinStimuliManifest(): Record<BuiltinDataName, { file: string; version: string; sha256: string }> {
  const out = {} as Record<BuiltinDataName, { file: string; version: string; sha256: string }>;
  for (const name of BUILTIN_NAMES) {
    const data = readBuiltinDataFile(name);
    out[name] = { file: basename(data.file), version: data.version, sha256: data.sha256 };
  }
  return out;
}

/** The two text formats of user data files (ontologies, perturbation sets). */
export type StructuredFormat = 'json' | 'yaml';

/** Parses JSON or YAML text; a syntax error becomes an InputError naming the file. */
export function parseStructuredText(text: string, file: string, format: StructuredFormat): unknown {
  try {
    return format === 'json' ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new InputError(`not valid ${format.toUpperCase()} (${(error as Error).message})`, { file });
  }
}

/**
 * Reads and parses a data file in the format its extension names (.json, .yaml or .yml);
 * `unsupported(extension)` words the error for any other extension.
 */
export function readStructuredFile(path: string, unsupported: (extension: string) => string): unknown {
  const extension = extname(path).toLowerCase();
  const format = extension === '.yaml' || extension === '.yml' ? 'yaml' : extension === '.json' ? 'json' : null;
  if (format === null) throw new InputError(unsupported(extension), { file: path });
  return parseStructuredText(readDataFile(path).text, path, format);
}
