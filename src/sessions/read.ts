import { open, readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ClaudeParser, SESSION_FACTS as CLAUDE_FACTS } from './claude.js';
import { CodexParser, SESSION_FACTS as CODEX_FACTS } from './codex.js';
import { copyDefined } from '../core/copy-defined.js';
import { InputError } from '../core/errors.js';
import type { LineSink } from './line-splitter.js';
import { type ReadLinesOptions, readFileLines } from './read-lines.js';
import { isTranscriptRecord } from './record-kind.js';
import type { TimelineBuilder } from './timeline.js';
import { isObject, str } from '../core/guards.js';
import type { Session, SessionTool, SessionWarning, SubagentTranscript } from './types.js';

export interface ReadSessionOptions {
  /** Force the tool instead of detecting it from the path and first record. */
  tool?: SessionTool;
  /** `none`: count everything but keep no message text (listing, bounded memory). Default `full`. */
  content?: 'full' | 'none';
  /** Attach Claude Code subagent files found beside the session. Default true. */
  subagents?: boolean;
  maxLineBytes?: number;
  /** Claude Code inline sidechain lines: `apart` (default) or also `inline` on the main timeline, as the reference (see ClaudeParserOptions). */
  sidechains?: 'apart' | 'inline';
}

/** Tool from the file name alone, when it tells. */
export function toolFromPath(file: string): SessionTool | undefined {
  const name = basename(file);
  if (/^rollout-.*\.jsonl(\.zst)?$/.test(name)) return 'codex';
  if (file.includes('/.codex/') || file.includes('/archived_sessions/')) return 'codex';
  if (file.includes('/.claude/') || file.includes('/projects/')) return 'claude';
  return undefined;
}

/** Tool from one parsed record: Codex lines have an envelope `payload` or a bare session header. */
export function toolFromRecord(value: unknown): SessionTool | undefined {
  if (!isObject(value)) return undefined;
  if (isObject(value.payload) || value.type === 'session_meta' || value.type === 'response_item') return 'codex';
  if (value.record_type !== undefined || (typeof value.id === 'string' && 'instructions' in value)) return 'codex';
  if (typeof value.type === 'string') return 'claude';
  return undefined;
}

/**
 * Reads one transcript into a Session, streaming. Malformed lines and records become
 * `warnings` naming file and line. Throws InputError when the file cannot be read as
 * a transcript at all: unopenable, a corrupt zstd stream, binary data or a NUL byte
 * (`transcriptBytes`), or a file with lines none of which is a Claude Code or Codex
 * record (a `package.json` or a README given by mistake).
 */
export async function readSession(file: string, options: ReadSessionOptions = {}): Promise<Session> {
  const keepContent = (options.content ?? 'full') === 'full';
  let tool = options.tool;
  let claude: ClaudeParser | undefined;
  let codex: CodexParser | undefined;
  const early: SessionWarning[] = [];
  const held: Array<[number, string]> = [];
  const choose = (chosen: SessionTool): void => {
    tool = chosen;
    if (chosen === 'claude')
      claude = new ClaudeParser(file, options.sidechains === undefined ? { keepContent } : { keepContent, sidechains: options.sidechains });
    else codex = new CodexParser(file, { keepContent });
  };
  if (tool) choose(tool);
  // Until the first transcript record: how many non-blank lines were not one.
  let recordSeen = false;
  let otherLines = 0;
  const noteRecord = (text: string): void => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    if (isTranscriptRecord(value)) recordSeen = true;
    else if (text.trim() !== '') otherLines += 1;
  };
  const sink: LineSink = {
    line(lineNumber, text) {
      if (!recordSeen) noteRecord(text);
      if (claude) return claude.line(lineNumber, text);
      if (codex) return codex.line(lineNumber, text);
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        held.push([lineNumber, text]);
        return;
      }
      const detected = toolFromRecord(value) ?? toolFromPath(file);
      if (!detected) {
        held.push([lineNumber, text]);
        return;
      }
      choose(detected);
      for (const [n, t] of held.splice(0)) sink.line(n, t);
      sink.line(lineNumber, text);
    },
    warn(lineNumber, message) {
      if (claude) claude.warn(lineNumber, message);
      else if (codex) codex.warn(lineNumber, message);
      else early.push({ file, line: lineNumber, message });
    },
  };
  const readOptions: ReadLinesOptions = options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes };
  const { lines, bytes } = await readFileLines(file, sink, readOptions);
  if (!recordSeen && otherLines > 0) {
    throw new InputError(
      `not a Claude Code or Codex transcript: none of its ${otherLines} non-blank line(s) is a transcript record (JSON lines with a "type" the tools write, or a Codex "payload" envelope)`,
      { file },
      { hint: 'give a session file: `echolens sessions list` shows them (~/.claude/projects/…/*.jsonl, ~/.codex/sessions/…/rollout-*.jsonl)' },
    );
  }
  if (!claude && !codex) {
    choose(toolFromPath(file) ?? 'claude');
    for (const [n, t] of held.splice(0)) sink.line(n, t);
    if (lines === 0) early.push({ file, line: 0, message: 'empty transcript' });
  }
  let session: Session;
  if (claude) {
    const result = claude.finish();
    session = fromBuilder('claude', file, result.builder, keepContent, lines, bytes);
    copyDefined(session, result, CLAUDE_FACTS);
    session.offChainRecords = result.offChainRecords;
    session.subagents = result.inlineSubagents;
    session.warnings = [...early, ...result.warnings];
    if (options.subagents !== false) await attachSubagentFiles(session, keepContent, readOptions);
  } else {
    const result = codex!.finish();
    session = fromBuilder('codex', file, result.builder, keepContent, lines, bytes);
    copyDefined(session, result, CODEX_FACTS);
    session.warnings = [...early, ...result.warnings];
  }
  return session;
}

function fromBuilder(tool: SessionTool, file: string, b: TimelineBuilder, keepContent: boolean, lines: number, bytes: number): Session {
  const session: Session = {
    tool,
    file,
    models: [...b.models].sort(),
    messages: b.messages,
    events: b.events,
    compactions: b.compactions,
    subagents: [],
    counters: { ...b.counters },
    usage: { ...b.usage },
    toolsUsed: { ...b.toolsUsed },
    lines,
    bytes,
    offChainRecords: 0,
    replayedMessages: b.replayedMessages,
    content: keepContent ? 'full' : 'none',
    warnings: [],
  };
  copyDefined(session, b, ['firstTimestamp', 'lastTimestamp']);
  return session;
}

/** Claude Code subagent files for a session file, in the two on-disk layouts. */
export async function findSubagentFiles(
  sessionFile: string,
  sessionId: string | undefined,
): Promise<Array<{ file: string; layout: 'legacy-file' | 'subagents-dir'; meta?: string }>> {
  const out: Array<{ file: string; layout: 'legacy-file' | 'subagents-dir'; meta?: string }> = [];
  const dir = dirname(sessionFile);
  const stem = basename(sessionFile).replace(/\.jsonl(\.zst)?$/, '');
  const subDir = join(dir, stem, 'subagents');
  for (const name of await safeReaddir(subDir)) {
    if (/^agent-.*\.jsonl$/.test(name)) {
      const meta = join(subDir, name.replace(/\.jsonl$/, '.meta.json'));
      const entry: { file: string; layout: 'subagents-dir'; meta?: string } = { file: join(subDir, name), layout: 'subagents-dir' };
      if (await exists(meta)) entry.meta = meta;
      out.push(entry);
    }
  }
  if (sessionId !== undefined && !stem.startsWith('agent-')) {
    for (const name of await safeReaddir(dir)) {
      if (!/^agent-.*\.jsonl$/.test(name)) continue;
      const file = join(dir, name);
      if ((await firstSessionId(file)) === sessionId) out.push({ file, layout: 'legacy-file' });
    }
  }
  return out.sort((a, b) => (a.file < b.file ? -1 : 1));
}

async function attachSubagentFiles(session: Session, keepContent: boolean, readOptions: ReadLinesOptions): Promise<void> {
  const files = await findSubagentFiles(session.file, session.id);
  for (const found of files) {
    const parser = new ClaudeParser(found.file, { keepContent, asSubagent: true });
    try {
      await readFileLines(found.file, parser, readOptions);
    } catch (error) {
      session.warnings.push({ file: found.file, line: 0, message: `subagent file unreadable: ${(error as Error).message}` });
      continue;
    }
    const result = parser.finish();
    const agentId = basename(found.file).replace(/^agent-|\.jsonl$/g, '');
    const sub: SubagentTranscript = {
      agentId,
      layout: found.layout,
      file: found.file,
      messages: result.builder.messages,
      counters: { ...result.builder.counters },
    };
    if (found.meta) {
      try {
        const meta: unknown = JSON.parse(await readFile(found.meta, 'utf8'));
        if (isObject(meta)) {
          const fields = { agentType: str(meta.agentType), description: str(meta.description), toolUseId: str(meta.toolUseId) };
          copyDefined(sub, fields, ['agentType', 'description', 'toolUseId']);
        }
      } catch (error) {
        session.warnings.push({ file: found.meta, line: 1, message: `subagent meta unreadable: ${(error as Error).message.slice(0, 120)}` });
      }
    }
    session.warnings.push(...result.warnings);
    session.subagents.push(sub);
  }
}

/** The `sessionId` of the first record that has one (reads at most 64 KiB). */
export async function firstSessionId(file: string): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(file, 'r');
    const buffer = Buffer.alloc(64 * 1024);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const text = buffer.subarray(0, bytesRead).toString('utf8');
    for (const line of text.split('\n').slice(0, 20)) {
      try {
        const value: unknown = JSON.parse(line);
        if (isObject(value) && typeof value.sessionId === 'string') return value.sessionId;
      } catch {
        // partial or bad line: try the next
      }
    }
    return undefined;
  } catch {
    return undefined;
  } finally {
    await handle?.close();
  }
}

async function safeReaddir(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch {
    return [];
  }
}

/** Whether something is at `path` (an unreadable path counts as absent). */
export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
