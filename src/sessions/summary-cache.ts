import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { packageVersion } from '../core/version.js';
import type { SessionTool } from './types.js';

/**
 * What counting a transcript gives `sessions list` and ingestion, cached per file under the
 * user's cache directory so that an unchanged file is never read twice. An entry is used only
 * when the file's path, size and modification time are those it was made from, and the cache
 * only when its format version and the echolens version match (a new reader may count
 * differently). A cache that cannot be read or parsed is ignored and rewritten.
 */

/** Bump when the entry layout or what the reader counts changes. */
export const SUMMARY_CACHE_FORMAT = 1;
export const SUMMARY_CACHE_FILE = 'session-summaries.json';

/** The counted facts of one transcript file (its subagent files excluded). */
export interface CountedFile {
  tool: SessionTool;
  id?: string;
  cwd?: string;
  firstTimestamp?: string;
  lastTimestamp?: string;
  models: string[];
  userTurns: number;
  agentSteps: number;
  messages: number;
  compactions: number;
  /** Inline subagent transcripts (Claude Code `isSidechain` lines). */
  inlineSubagents: number;
  warnings: number;
  /** Codex subagent rollouts: the spawning thread. */
  parentThreadId?: string;
  /** Forked from this session (Claude Code `/branch`, `--fork-session`; Codex forks). */
  forkedFrom?: string;
  /** Claude Code: the uuid the main chain continues from, when it is not in the file. */
  continuesFrom?: string;
  leafUuid?: string;
}

/** The optional facts of a counted file, in the order they are written. */
export const OPTIONAL_COUNTED_FACTS = ['id', 'cwd', 'firstTimestamp', 'lastTimestamp', 'parentThreadId', 'forkedFrom', 'continuesFrom', 'leafUuid'] as const;

interface Entry {
  size: number;
  mtimeMs: number;
  counted: CountedFile;
}

interface CacheFile {
  format: number;
  echolens: string;
  entries: Record<string, Entry>;
}

/**
 * `ECHOLENS_CACHE_DIR` when set; else `$XDG_CACHE_HOME/echolens`, else `~/.cache/echolens`.
 */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  const explicit = env.ECHOLENS_CACHE_DIR?.trim();
  if (explicit) return explicit;
  const xdg = env.XDG_CACHE_HOME?.trim();
  return join(xdg || join(home, '.cache'), 'echolens');
}

/** At most this many entries are kept (the least recently used go first). */
const MAX_ENTRIES = 50_000;

export class SummaryCache {
  private entries = new Map<string, Entry>();
  private changed = false;
  /** Why the stored cache was not used (missing, corrupt, other version), for `--json` diagnostics. */
  reset: string | undefined;
  hits = 0;
  misses = 0;

  private constructor(readonly file: string) {}

  /** Opens the cache in `dir` (default `defaultCacheDir()`); never throws. */
  static async open(dir: string = defaultCacheDir()): Promise<SummaryCache> {
    const cache = new SummaryCache(join(dir, SUMMARY_CACHE_FILE));
    let text: string;
    try {
      text = await readFile(cache.file, 'utf8');
    } catch {
      cache.reset = 'none yet';
      return cache;
    }
    try {
      const data = JSON.parse(text) as Partial<CacheFile>;
      if (data.format !== SUMMARY_CACHE_FORMAT || data.echolens !== packageVersion()) {
        cache.reset = 'made by another version';
        cache.changed = true;
        return cache;
      }
      if (data.entries === null || typeof data.entries !== 'object') throw new Error('no entries');
      for (const [path, entry] of Object.entries(data.entries)) {
        if (isEntry(entry)) cache.entries.set(path, entry);
        else cache.changed = true;
      }
    } catch {
      cache.reset = 'unreadable (ignored; rewritten)';
      cache.entries.clear();
      cache.changed = true;
    }
    return cache;
  }

  /** The counted facts of `file` when it still has this size and modification time. */
  get(path: string, size: number, mtimeMs: number): CountedFile | undefined {
    // Keyed by absolute path: a relative one would mean another file from another folder.
    const file = resolve(path);
    const entry = this.entries.get(file);
    if (entry === undefined || entry.size !== size || entry.mtimeMs !== mtimeMs) {
      this.misses += 1;
      return undefined;
    }
    this.hits += 1;
    // Most recently used last (pruning drops from the front).
    this.entries.delete(file);
    this.entries.set(file, entry);
    return entry.counted;
  }

  set(path: string, size: number, mtimeMs: number, counted: CountedFile): void {
    const file = resolve(path);
    this.entries.delete(file);
    this.entries.set(file, { size, mtimeMs, counted });
    this.changed = true;
  }

  /** Writes the cache when it changed (a temp file renamed into place). A cache that cannot be written is skipped silently: it only saves time. */
  async save(): Promise<void> {
    if (!this.changed) return;
    while (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    const data: CacheFile = { format: SUMMARY_CACHE_FORMAT, echolens: packageVersion(), entries: Object.fromEntries(this.entries) };
    const temp = `${this.file}.${process.pid}-${Date.now()}.tmp`;
    try {
      await mkdir(join(this.file, '..'), { recursive: true });
      await writeFile(temp, JSON.stringify(data), { mode: 0o600 });
      await rename(temp, this.file);
      this.changed = false;
    } catch {
      await rm(temp, { force: true });
    }
  }
}

/** Size and modification time of a file, or undefined when it cannot be read. */
export async function fileStamp(file: string): Promise<{ size: number; mtimeMs: number } | undefined> {
  try {
    const s = await stat(file);
    return { size: s.size, mtimeMs: s.mtimeMs };
  } catch {
    return undefined;
  }
}

function isEntry(value: unknown): value is Entry {
  if (value === null || typeof value !== 'object') return false;
  const e = value as Partial<Entry>;
  const c = e.counted as Partial<CountedFile> | undefined;
  return (
    typeof e.size === 'number' &&
    typeof e.mtimeMs === 'number' &&
    c !== undefined &&
    c !== null &&
    (c.tool === 'claude' || c.tool === 'codex') &&
    Array.isArray(c.models) &&
    [c.userTurns, c.agentSteps, c.messages, c.compactions, c.inlineSubagents, c.warnings].every((n) => typeof n === 'number')
  );
}
