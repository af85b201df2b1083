import { closeSync, existsSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Where `echolens view` looks for run stores when none is named: the default run folder and the demo's. */
export const DISCOVERY_FOLDERS = ['runs', 'echolens-demo'] as const;

/** SQLite files begin with this header; a `.db` that is not SQLite is not offered. */
const SQLITE_HEADER = 'SQLite format 3\u0000';

export interface DiscoveredStores {
  /** Store files found, relative to `cwd`, sorted. */
  files: string[];
  /** The folders looked in that exist. */
  searched: string[];
}

/** Run stores (`*.db` SQLite files) directly inside ./runs and ./echolens-demo, and one folder below. */
export function discoverStores(cwd: string): DiscoveredStores {
  const files: string[] = [];
  const searched: string[] = [];
  for (const folder of DISCOVERY_FOLDERS) {
    const dir = join(cwd, folder);
    if (!isDir(dir)) continue;
    searched.push(folder);
    for (const entry of listDbFiles(dir, 1)) files.push(relative(cwd, entry));
  }
  return { files: files.sort(), searched };
}

/** The lines `echolens view` prints about what it found (or how to make a store when nothing was found). */
export function discoveryLines(found: DiscoveredStores): string[] {
  const where = DISCOVERY_FOLDERS.map((f) => `./${f}`).join(' and ');
  if (found.files.length > 0)
    return [`no run.db given: found ${found.files.length} store${found.files.length === 1 ? '' : 's'} under ${where}: ${found.files.join(', ')}`];
  return [
    `no run.db given and no store found under ${where}.`,
    '  make one: echolens demo (writes echolens-demo/demo.db, offline), or echolens persona run … --db runs/persona.db;',
    '  or name stores: echolens view path/to/run.db',
  ];
}

function listDbFiles(dir: string, depth: number): string[] {
  const out: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    const path = join(dir, name);
    if (isDir(path)) {
      if (depth > 0) out.push(...listDbFiles(path, depth - 1));
    } else if (name.endsWith('.db') && isSqlite(path)) out.push(path);
  }
  return out;
}

function isDir(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory();
}

function isSqlite(path: string): boolean {
  try {
    return readFileHead(path, SQLITE_HEADER.length) === SQLITE_HEADER;
  } catch {
    return false;
  }
}

function readFileHead(path: string, bytes: number): string {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    const n = readSync(fd, buffer, 0, bytes, 0);
    return buffer.subarray(0, n).toString('latin1');
  } finally {
    closeSync(fd);
  }
}
