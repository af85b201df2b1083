import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join, relative, sep } from 'node:path';
import { copyDefined } from '../core/copy-defined.js';
import { type CountedFile, fileStamp, OPTIONAL_COUNTED_FACTS, type SummaryCache } from './summary-cache.js';
import type { SessionTool } from './types.js';
import { continuationLinks } from './units.js';

/**
 * Finding transcripts on disk. Roots are explicit so tests never touch the real home:
 * `defaultRoots(env, home)` derives them the way the tools do.
 */

export interface DiscoveryRoots {
  /** Claude Code `projects/` directories. */
  claude: string[];
  /** Codex `sessions/` and `archived_sessions/` directories. */
  codex: string[];
}

/**
 * Claude Code: every entry of a comma-separated `CLAUDE_CONFIG_DIR` (+ `/projects`); when unset,
 * `$XDG_CONFIG_HOME/claude` (default `~/.config/claude`) and `~/.claude`.
 * Codex: every entry of a comma-separated `CODEX_HOME` (default `~/.codex`), `sessions/` and `archived_sessions/`.
 */
export function defaultRoots(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): DiscoveryRoots {
  const list = (value: string | undefined): string[] =>
    (value ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  const claudeDirs = list(env.CLAUDE_CONFIG_DIR);
  const claudeBases = claudeDirs.length > 0 ? claudeDirs : [join(env.XDG_CONFIG_HOME?.trim() || join(home, '.config'), 'claude'), join(home, '.claude')];
  const codexHomes = list(env.CODEX_HOME);
  const codexBases = codexHomes.length > 0 ? codexHomes : [join(home, '.codex')];
  return {
    claude: [...new Set(claudeBases.map((b) => join(b, 'projects')))],
    codex: [...new Set(codexBases.flatMap((b) => [join(b, 'sessions'), join(b, 'archived_sessions')]))],
  };
}

export interface DiscoveredSession {
  tool: SessionTool;
  file: string;
  /** Bytes on disk, subagent files included. */
  size: number;
  /** Bytes of the session file alone. */
  fileSize: number;
  mtimeMs: number;
  /** Claude Code subagent transcripts that belong to this session. */
  subagentFiles: string[];
}

export interface Discovery {
  sessions: DiscoveredSession[];
  warnings: string[];
}

interface FileEntry {
  path: string;
  size: number;
  mtimeMs: number;
}

/** Walks a tree iteratively; symlinked directories are not followed (no loops). */
async function walk(root: string, accept: (name: string) => boolean, warnings: string[]): Promise<FileEntry[]> {
  const files: string[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (dir !== root || code !== 'ENOENT') warnings.push(`${dir}: cannot list (${code ?? 'error'})`);
      continue;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) stack.push(path);
      else if (entry.isFile() && accept(entry.name)) files.push(path);
    }
  }
  files.sort();
  const out: FileEntry[] = [];
  for (let i = 0; i < files.length; i += 64) {
    const batch = files.slice(i, i + 64);
    const stats = await Promise.all(
      batch.map(async (path) => {
        try {
          const s = await stat(path);
          return { path, size: s.size, mtimeMs: s.mtimeMs };
        } catch {
          warnings.push(`${path}: vanished while listing`);
          return undefined;
        }
      }),
    );
    for (const s of stats) if (s) out.push(s);
  }
  return out;
}

const isJsonl = (name: string): boolean => name.endsWith('.jsonl') || name.endsWith('.jsonl.zst');

export async function discoverSessions(roots: DiscoveryRoots, options: { tool?: SessionTool } = {}): Promise<Discovery> {
  const warnings: string[] = [];
  const sessions: DiscoveredSession[] = [];
  if (options.tool !== 'codex') for (const root of roots.claude) sessions.push(...(await discoverClaude(root, warnings)));
  if (options.tool !== 'claude') {
    const seen = new Set<string>();
    for (const root of roots.codex) {
      for (const s of await discoverCodex(root, warnings)) {
        if (seen.has(s.file)) continue;
        seen.add(s.file);
        sessions.push(s);
      }
    }
  }
  return { sessions, warnings };
}

async function discoverClaude(root: string, warnings: string[]): Promise<DiscoveredSession[]> {
  const files = await walk(root, isJsonl, warnings);
  const sessions = new Map<string, DiscoveredSession>();
  const nested: FileEntry[] = [];
  const legacy: FileEntry[] = [];
  for (const f of files) {
    const parts = relative(root, f.path).split(sep);
    const name = basename(f.path);
    if (parts.length === 2 && !name.startsWith('agent-')) {
      sessions.set(f.path, { tool: 'claude', file: f.path, size: f.size, fileSize: f.size, mtimeMs: f.mtimeMs, subagentFiles: [] });
    } else if (parts.length === 2) legacy.push(f);
    else if (parts.length > 2) nested.push(f);
  }
  const attach = (f: FileEntry, owner: DiscoveredSession | undefined): void => {
    if (!owner) {
      warnings.push(`${f.path}: subagent transcript without its session file; not listed`);
      return;
    }
    owner.subagentFiles.push(f.path);
    owner.size += f.size;
  };
  // <project>/<session>/subagents/agent-*.jsonl (and workflow journals) belong to <project>/<session>.jsonl.
  for (const f of nested) {
    const parts = relative(root, f.path).split(sep);
    attach(f, sessions.get(join(root, parts[0]!, `${parts[1]}.jsonl`)));
  }
  // Legacy agent-<id>.jsonl beside the sessions: the owner is the sessionId inside.
  for (const f of legacy) {
    const { firstSessionId } = await import('./read.js');
    const id = await firstSessionId(f.path);
    attach(f, id === undefined ? undefined : sessions.get(join(dirname(f.path), `${id}.jsonl`)));
  }
  return [...sessions.values()];
}

async function discoverCodex(root: string, warnings: string[]): Promise<DiscoveredSession[]> {
  const files = await walk(root, (name) => name.startsWith('rollout-') && isJsonl(name), warnings);
  const plain = new Set(files.filter((f) => f.path.endsWith('.jsonl')).map((f) => f.path));
  const out: DiscoveredSession[] = [];
  for (const f of files) {
    // Codex keeps the plain file when both exist; so do we.
    if (f.path.endsWith('.zst') && plain.has(f.path.slice(0, -'.zst'.length))) continue;
    out.push({ tool: 'codex', file: f.path, size: f.size, fileSize: f.size, mtimeMs: f.mtimeMs, subagentFiles: [] });
  }
  return out;
}

/** A listed session: the counted facts of its file, with its subagents counted in. */
export interface SessionSummary extends Omit<CountedFile, 'inlineSubagents'> {
  file: string;
  /** Bytes on disk, subagent files included. */
  size: number;
  /** Subagent files plus inline subagent transcripts. */
  subagents: number;
  /** The listed session whose last message `continuesFrom` is: the same conversation, continued in this file. */
  continues?: { file: string; id?: string };
}

/**
 * Reads every discovered session in counting mode, a few at a time. With a `cache`, a file
 * whose size and modification time are unchanged is not read again (the caller saves it).
 */
export async function summarizeSessions(found: DiscoveredSession[], options: { concurrency?: number; cache?: SummaryCache } = {}): Promise<SessionSummary[]> {
  const concurrency = Math.max(1, options.concurrency ?? 4);
  const out: SessionSummary[] = new Array(found.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < found.length) {
      const i = next;
      next += 1;
      out[i] = await summarize(found[i]!, options.cache);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, found.length) }, worker));
  return linkContinuations(attachCodexSubagents(out));
}

/**
 * A Claude Code conversation can go on in a new file whose chain starts from the last
 * message of an earlier file. Such files are marked with the session they continue
 * (positions and prefixes are per file: the earlier part is in the other one).
 */
export function linkContinuations(summaries: SessionSummary[]): SessionSummary[] {
  // The same rule the audits use to merge a continuation into one unit (units.ts).
  for (const [later, earlierIndex] of continuationLinks(summaries)) {
    const earlier = summaries[earlierIndex]!;
    summaries[later]!.continues = earlier.id === undefined ? { file: earlier.file } : { file: earlier.file, id: earlier.id };
  }
  return summaries;
}

/**
 * The counted facts of one transcript file (counting mode, subagent files not read), from
 * `cache` when the file is unchanged since it was counted. Throws what readSession throws.
 */
export async function countSessionFile(
  file: string,
  options: { tool?: SessionTool; cache?: SummaryCache; stamp?: { size: number; mtimeMs: number } } = {},
): Promise<CountedFile> {
  const stamp = options.cache === undefined ? undefined : (options.stamp ?? (await fileStamp(file)));
  if (options.cache !== undefined && stamp !== undefined) {
    const cached = options.cache.get(file, stamp.size, stamp.mtimeMs);
    if (cached !== undefined && (options.tool === undefined || cached.tool === options.tool)) return cached;
  }
  // The parsers load here, on the first file the cache does not answer (a warm listing never reads one).
  const { readSession } = await import('./read.js');
  const s = await readSession(file, { ...(options.tool ? { tool: options.tool } : {}), content: 'none', subagents: false });
  const counted: CountedFile = {
    tool: s.tool,
    models: s.models,
    userTurns: s.counters.userTurns,
    agentSteps: s.counters.agentSteps,
    messages: s.counters.messages,
    compactions: s.compactions.length,
    inlineSubagents: s.subagents.length,
    warnings: s.warnings.length,
  };
  copyDefined(counted, s, OPTIONAL_COUNTED_FACTS);
  if (options.cache !== undefined && stamp !== undefined) options.cache.set(file, stamp.size, stamp.mtimeMs, counted);
  return counted;
}

async function summarize(d: DiscoveredSession, cache: SummaryCache | undefined): Promise<SessionSummary> {
  let c: CountedFile | undefined;
  try {
    c = await countSessionFile(d.file, { tool: d.tool, ...(cache ? { cache, stamp: { size: d.fileSize, mtimeMs: d.mtimeMs } } : {}) });
  } catch {
    // Unreadable: listed with nothing counted and one warning.
  }
  const summary: SessionSummary = {
    tool: d.tool,
    file: d.file,
    models: c ? [...c.models] : [],
    userTurns: c?.userTurns ?? 0,
    agentSteps: c?.agentSteps ?? 0,
    messages: c?.messages ?? 0,
    compactions: c?.compactions ?? 0,
    size: d.size,
    // Subagent transcripts among the attached files (workflow journals and the like only add to the size).
    subagents: d.subagentFiles.filter((f) => /^agent-.*\.jsonl$/.test(basename(f))).length + (c?.inlineSubagents ?? 0),
    warnings: c ? c.warnings : 1,
  };
  if (c) copyDefined(summary, c, OPTIONAL_COUNTED_FACTS);
  return summary;
}

/** Codex subagent rollouts are counted on their parent thread instead of listed. */
function attachCodexSubagents(summaries: SessionSummary[]): SessionSummary[] {
  const byId = new Map<string, SessionSummary>();
  for (const s of summaries) if (s.tool === 'codex' && s.id !== undefined) byId.set(s.id, s);
  return summaries.filter((s) => {
    if (s.tool !== 'codex' || s.parentThreadId === undefined) return true;
    const parent = byId.get(s.parentThreadId);
    if (!parent || parent === s) return true;
    parent.subagents += 1;
    parent.size += s.size;
    return false;
  });
}

export type SortKey = 'last' | 'first' | 'steps' | 'turns' | 'size' | 'compactions' | 'path';
export const SORT_KEYS: readonly SortKey[] = ['last', 'first', 'steps', 'turns', 'size', 'compactions', 'path'];

const SORT_VALUE: Record<SortKey, (s: SessionSummary) => number | string> = {
  last: (s) => s.lastTimestamp ?? '',
  first: (s) => s.firstTimestamp ?? '',
  steps: (s) => s.agentSteps,
  turns: (s) => s.userTurns,
  size: (s) => s.size,
  compactions: (s) => s.compactions,
  path: (s) => s.file,
};

/** Filters and sorts summaries (pure). Newest / largest first, except `path`. */
export function selectSummaries(
  summaries: SessionSummary[],
  options: { tool?: SessionTool; since?: string; minSteps?: number; sort?: SortKey } = {},
): SessionSummary[] {
  const since = options.since;
  const filtered = summaries.filter(
    (s) =>
      (options.tool === undefined || s.tool === options.tool) &&
      (options.minSteps === undefined || s.agentSteps >= options.minSteps) &&
      (since === undefined || (s.lastTimestamp !== undefined && Date.parse(s.lastTimestamp) >= Date.parse(since))),
  );
  const key = options.sort ?? 'last';
  const value = Object.hasOwn(SORT_VALUE, key) ? SORT_VALUE[key] : SORT_VALUE.path;
  const ascending = key === 'path';
  return filtered.sort((a, b) => {
    const x = value(a);
    const y = value(b);
    const primary = x < y ? -1 : x > y ? 1 : 0;
    if (primary !== 0) return ascending ? primary : -primary;
    return a.file < b.file ? -1 : a.file > b.file ? 1 : 0;
  });
}
