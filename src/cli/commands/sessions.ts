import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename } from 'node:path';
import type { Command } from 'commander';
import { definedFields } from '../../core/copy-defined.js';
import { InvalidArgumentError } from '../../core/errors.js';
// The modules themselves, not the sessions barrel: the barrel re-exports the redactor, whose personal-data
// detector loads an NLP lexicon (about a second of CPU) that listing or reading sessions never needs.
import {
  type DiscoveryRoots,
  defaultRoots,
  discoverSessions,
  SORT_KEYS,
  type SessionSummary,
  selectSummaries,
  summarizeSessions,
} from '../../sessions/discover.js';
import { DEFAULT_INGEST_DIR } from '../../sessions/ingest-dir.js';
import { parsePositionSpec, resolvePosition } from '../../sessions/positions.js';
import { buildPrefix, type PrefixAt } from '../../sessions/prefix.js';
import { sessionGoal } from '../../sessions/goal.js';
import { SummaryCache } from '../../sessions/summary-cache.js';
import { RENDER_MODES } from '../../sessions/render.js';
import { COUNTER_NAMES, type Counters, type Session, type SessionTool } from '../../sessions/types.js';

/** `echolens sessions list | inspect | ingest` (registered on the `sessions` group). */
export function registerSessions(sessions: Command): void {
  sessions
    .command('list')
    .description('list Claude Code and Codex CLI sessions found on this machine, with their size in steps, turns and compactions')
    .option('--tool <tool>', 'only this tool: claude | codex')
    .option('--since <date>', 'only sessions active on or after this date (ISO 8601, e.g. 2026-03-01)')
    .option('--min-steps <n>', 'only sessions with at least this many agent steps')
    .option('--sort <key>', `sort by ${SORT_KEYS.join(' | ')}`, 'last')
    .option('--limit <n>', 'show at most this many')
    .option('--claude-dir <dirs>', 'Claude Code config dir(s), comma-separated (default: $CLAUDE_CONFIG_DIR, else ~/.config/claude and ~/.claude)')
    .option('--codex-home <dirs>', 'Codex home dir(s), comma-separated (default: $CODEX_HOME, else ~/.codex)')
    .option('--json', 'print JSON instead of a table')
    .option('--no-cache', 'count every file again instead of using the summary cache ($ECHOLENS_CACHE_DIR, else $XDG_CACHE_HOME/echolens or ~/.cache/echolens)')
    .action(async (options: ListOptions) => {
      const tool = parseTool(options.tool);
      const sort = parseChoice('--sort', options.sort, SORT_KEYS);
      const minSteps = options.minSteps === undefined ? undefined : parseCount('--min-steps', options.minSteps);
      const limit = options.limit === undefined ? undefined : parseCount('--limit', options.limit);
      if (options.since !== undefined && Number.isNaN(Date.parse(options.since))) {
        throw new InvalidArgumentError('--since', `not a date: "${options.since}"`);
      }
      const roots = rootsFrom(options);
      const found = await discoverSessions(roots, tool ? { tool } : {});
      const cache = options.cache === false ? undefined : await SummaryCache.open();
      const summaries = await summarizeSessions(found.sessions, cache ? { cache } : {});
      await cache?.save();
      let selected = selectSummaries(summaries, { ...definedFields({ tool, since: options.since, minSteps }, ['tool', 'since', 'minSteps']), sort });
      if (limit !== undefined) selected = selected.slice(0, limit);
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ sessions: selected, warnings: found.warnings }, null, 2)}\n`);
        return;
      }
      for (const w of found.warnings) process.stderr.write(`warning: ${w}\n`);
      process.stdout.write(formatList(selected, summaries.length));
      // Nothing found: say where we looked, so a wrong folder is visible.
      if (summaries.length === 0) process.stdout.write(searchedLines(roots, tool).join('\n') + '\n');
    });

  sessions
    .command('inspect')
    .description('summarize one transcript (counts, compactions, models, tools, time span) and optionally print the model-visible context at a position')
    .argument('<file>', 'a Claude Code .jsonl or Codex CLI rollout .jsonl / .jsonl.zst')
    .option('--at <position>', `context at <counter>=<n> (counters: ${COUNTER_NAMES.join(', ')}; a bare number means agentSteps)`)
    .option('--render <mode>', `prefix rendering: ${RENDER_MODES.join(' | ')}`, 'flat')
    .option('--max-chars <n>', 'window in characters (flat, turns)', '30000')
    .option('--tool-chars <n>', 'tool payload truncation in characters (flat, turns)', '200')
    .option('--clip', 'clip a position beyond the session to its end instead of failing')
    .option('--tool <tool>', 'read as this tool instead of detecting it: claude | codex')
    .option(
      '--sidechains <mode>',
      'Claude Code subagent lines: apart (own transcripts) | inline (also on the main timeline in file order, as the reference)',
      'apart',
    )
    .option('--json', 'print JSON')
    .action(async (file: string, options: InspectOptions) => {
      const tool = parseTool(options.tool);
      const mode = parseChoice('--render', options.render, RENDER_MODES);
      const maxChars = parseCount('--max-chars', options.maxChars);
      const toolPayloadChars = parseCount('--tool-chars', options.toolChars, true);
      if (options.sidechains !== 'apart' && options.sidechains !== 'inline')
        throw new InvalidArgumentError('--sidechains', `must be apart or inline, got "${options.sidechains}"`);
      const { readSession } = await import('../../sessions/read.js');
      const session = await readSession(file, { ...(tool ? { tool } : {}), sidechains: options.sidechains });
      let prefix: PrefixAt | undefined;
      const warnings: string[] = [];
      if (options.at !== undefined) {
        const { counter, value } = parsePositionSpec(options.at);
        const position = resolvePosition(session, counter, value, { label: options.at, beyond: options.clip ? 'clip' : 'error', warnings });
        if (position) prefix = buildPrefix(session, position, { mode, maxChars, toolPayloadChars });
      }
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ summary: summaryJson(session), ...(prefix ? { prefix: prefixJson(prefix) } : {}), warnings }, null, 2)}\n`);
        return;
      }
      process.stdout.write(formatInspect(session));
      for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
      if (prefix) process.stdout.write(formatPrefix(prefix));
    });

  sessions
    .command('ingest')
    .description('copy sessions into the project folder (content-addressed, the source is never modified): Claude Code deletes transcripts after 30 days')
    .argument('[file]', 'a transcript to copy')
    .option('--all', 'copy every discovered session')
    .option('--into <dir>', 'destination folder', DEFAULT_INGEST_DIR)
    .option('--tool <tool>', 'with --all: only this tool; with a file: read it as this tool')
    .option('--claude-dir <dirs>', 'with --all: Claude Code config dir(s), comma-separated')
    .option('--codex-home <dirs>', 'with --all: Codex home dir(s), comma-separated')
    .option('--json', 'print JSON')
    .option('--no-cache', 'do not use the summary cache that sessions list fills')
    .action(async (file: string | undefined, options: IngestOptions) => {
      const tool = parseTool(options.tool);
      if ((file === undefined) === (options.all !== true)) throw new InvalidArgumentError('file', 'give either a transcript file or --all');
      let files: Array<{ file: string; tool?: SessionTool }>;
      if (file !== undefined) files = [tool ? { file, tool } : { file }];
      else {
        const found = await discoverSessions(rootsFrom(options), tool ? { tool } : {});
        for (const w of found.warnings) process.stderr.write(`warning: ${w}\n`);
        files = found.sessions.map((s) => ({ file: s.file, tool: s.tool }));
      }
      const cache = options.cache === false ? undefined : await SummaryCache.open();
      const { ingestSession } = await import('../../sessions/ingest.js');
      const results = [];
      for (const f of files)
        results.push(await ingestSession(f.file, { into: options.into, ...(f.tool ? { tool: f.tool } : {}), ...(cache ? { cache } : {}) }));
      await cache?.save();
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ ingested: results }, null, 2)}\n`);
        return;
      }
      for (const r of results) {
        process.stdout.write(
          `${r.alreadyPresent ? 'present ' : 'copied  '} ${r.dest}  ← ${r.source}${r.subagents.length ? ` (+${r.subagents.length} subagent files)` : ''}\n`,
        );
      }
      const added = results.filter((r) => !r.alreadyPresent).length;
      process.stdout.write(`${added} copied, ${results.length - added} already present, into ${options.into}\n`);
    });
}

interface RootOptions {
  claudeDir?: string;
  codexHome?: string;
}
interface ListOptions extends RootOptions {
  tool?: string;
  since?: string;
  minSteps?: string;
  sort: string;
  limit?: string;
  json?: boolean;
  cache?: boolean;
}
interface InspectOptions {
  at?: string;
  sidechains: string;
  render: string;
  maxChars: string;
  toolChars: string;
  clip?: boolean;
  tool?: string;
  json?: boolean;
}
interface IngestOptions extends RootOptions {
  all?: boolean;
  into: string;
  tool?: string;
  json?: boolean;
  cache?: boolean;
}

/** The folders `sessions list` searched, and how to point it elsewhere. */
export function searchedLines(roots: DiscoveryRoots, tool?: SessionTool): string[] {
  const claude = tool === 'codex' ? [] : roots.claude;
  const codex = tool === 'claude' ? [] : roots.codex;
  return [
    'searched:',
    ...claude.map((dir) => `  ${dir} (Claude Code${existsSync(dir) ? '' : ', not present'})`),
    ...codex.map((dir) => `  ${dir} (Codex CLI${existsSync(dir) ? '' : ', not present'})`),
    'other folders: --claude-dir <dir> / --codex-home <dir> (or CLAUDE_CONFIG_DIR / CODEX_HOME)',
  ];
}

function rootsFrom(options: RootOptions): DiscoveryRoots {
  const env = { ...process.env };
  if (options.claudeDir !== undefined) env.CLAUDE_CONFIG_DIR = options.claudeDir;
  if (options.codexHome !== undefined) env.CODEX_HOME = options.codexHome;
  return defaultRoots(env, homedir());
}

function parseTool(value: string | undefined): SessionTool | undefined {
  if (value === undefined) return undefined;
  if (value !== 'claude' && value !== 'codex') throw new InvalidArgumentError('--tool', `must be claude or codex, got "${value}"`);
  return value;
}

function parseChoice<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) throw new InvalidArgumentError(name, `must be one of ${allowed.join(', ')}, got "${value}"`);
  return value as T;
}

function parseCount(name: string, value: string, allowZero = false): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || (!allowZero && n < 1)) {
    throw new InvalidArgumentError(name, `must be a ${allowZero ? 'non-negative' : 'positive'} integer, got "${value}"`);
  }
  return n;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function shortDate(timestamp: string | undefined): string {
  return timestamp === undefined ? '-' : timestamp.slice(0, 16).replace('T', ' ');
}

function table(rows: string[][], rightAligned: Set<number>): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows
    .map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : rightAligned.has(c) ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join('  '))
    .join('\n');
}

export function formatList(summaries: SessionSummary[], total: number): string {
  if (summaries.length === 0) return `no sessions${total > 0 ? ` (of ${total}) match` : ' found'}\n`;
  const home = homedir();
  const rows = [['last active', 'tool', 'steps', 'turns', 'msgs', 'comp', 'sub', 'size', 'models', 'path']];
  for (const s of summaries) {
    rows.push([
      shortDate(s.lastTimestamp),
      s.tool,
      ...[s.agentSteps, s.userTurns, s.messages, s.compactions, s.subagents].map(String),
      formatBytes(s.size),
      s.models.join(',') || '-',
      `${s.file.startsWith(home + '/') ? `~${s.file.slice(home.length)}` : s.file}${relation(s)}`,
    ]);
  }
  return `${table(rows, new Set([2, 3, 4, 5, 6, 7]))}\n${summaries.length} of ${total} sessions\n`;
}

/** How a session relates to another one, after its path. */
function relation(s: SessionSummary): string {
  if (s.continues) return `  (continues ${s.continues.id ?? basename(s.continues.file)})`;
  if (s.forkedFrom) return `  (forked from ${s.forkedFrom})`;
  return '';
}

function counterText(c: Counters): string {
  return COUNTER_NAMES.map((name) => `${name} ${c[name]}`).join(' · ');
}

function duration(first: string | undefined, last: string | undefined): string {
  if (first === undefined || last === undefined) return '';
  const ms = Date.parse(last) - Date.parse(first);
  if (!Number.isFinite(ms)) return '';
  const minutes = Math.round(ms / 60_000);
  return minutes < 120 ? ` (${minutes} min)` : ` (${(minutes / 60).toFixed(1)} h)`;
}

/** Optional session facts, printed as null when absent (a stable JSON shape). */
const NULLABLE_FACTS = ['id', 'cwd', 'version', 'forkedFrom', 'forkedFromMessage', 'continuesFrom', 'leafUuid', 'firstTimestamp', 'lastTimestamp'] as const;

export function summaryJson(s: Session): Record<string, unknown> {
  return {
    file: s.file,
    tool: s.tool,
    ...Object.fromEntries(NULLABLE_FACTS.map((key) => [key, s[key] ?? null])),
    models: s.models,
    counters: s.counters,
    compactions: s.compactions.map((c) => ({
      ordinal: c.ordinal,
      kind: c.compaction,
      trigger: c.trigger ?? null,
      preTokens: c.preTokens ?? null,
      timestamp: c.timestamp ?? null,
      line: c.raw.line,
      atMessage: c.atMessage,
      counters: c.counters,
      summaryAvailable: c.summaryAvailable,
    })),
    events: s.events.filter((e) => e.kind !== 'compaction').map((e) => ({ kind: e.kind, line: e.raw.line, atMessage: e.atMessage, counters: e.counters })),
    subagents: s.subagents.map((a) => ({ agentId: a.agentId, layout: a.layout, file: a.file, agentType: a.agentType ?? null, counters: a.counters })),
    toolsUsed: s.toolsUsed,
    usage: s.usage,
    lines: s.lines,
    bytes: s.bytes,
    offChainRecords: s.offChainRecords,
    replayedMessages: s.replayedMessages,
    warnings: s.warnings,
  };
}

function prefixJson(p: PrefixAt): Record<string, unknown> {
  return {
    position: p.position ?? null,
    end: p.end,
    mode: p.mode,
    chars: p.chars,
    truncated: p.truncated,
    summaryIncluded: p.summaryIncluded,
    compaction: p.compaction ?? null,
    includedMessages: p.includedMessages,
    settings: p.settings,
    notes: p.notes,
    messages: p.messages,
  };
}

export function formatInspect(s: Session): string {
  const lines: string[] = [];
  lines.push(`file:        ${s.file}`);
  lines.push(`tool:        ${s.tool}${s.version ? ` ${s.version}` : ''}${s.id ? `   id ${s.id}` : ''}`);
  if (s.cwd) lines.push(`cwd:         ${s.cwd}`);
  if (s.forkedFrom)
    lines.push(`forked from: ${s.forkedFrom}${s.forkedFromMessage ? ` after message ${s.forkedFromMessage}` : ''} (${s.replayedMessages} replayed messages)`);
  if (s.continuesFrom)
    lines.push(`continues:   from ${s.continuesFrom}, not in this file (an earlier file of the conversation; \`sessions list\` names it when it finds it)`);
  lines.push(`time:        ${s.firstTimestamp ?? '?'} → ${s.lastTimestamp ?? '?'}${duration(s.firstTimestamp, s.lastTimestamp)}`);
  lines.push(`models:      ${s.models.join(', ') || '-'}`);
  lines.push(`counters:    ${counterText(s.counters)}`);
  if (s.content === 'full') {
    const goal = sessionGoal(s);
    lines.push(
      `goal:        ${goal ? `message ${goal.messageIndex} (${goal.source}${goal.skipped.length ? `; ${goal.skipped.length} skipped` : ''}): ${JSON.stringify(goal.text.slice(0, 100))}` : '-'}`,
    );
  }
  lines.push(`size:        ${formatBytes(s.bytes)}, ${s.lines} lines${s.offChainRecords ? `, ${s.offChainRecords} records off the main chain` : ''}`);
  lines.push(`compactions: ${s.compactions.length}`);
  for (const c of s.compactions) {
    const detail = [c.compaction, c.trigger, c.preTokens === undefined ? undefined : `${c.preTokens} tokens before`].filter(Boolean).join(', ');
    lines.push(`  C${c.ordinal + 1} line ${c.raw.line} (${detail}) at ${counterText(c.counters)}${c.summaryAvailable ? '' : ' — summary not recoverable'}`);
  }
  for (const e of s.events) {
    if (e.kind === 'microcompaction')
      lines.push(`  microcompaction line ${e.raw.line}: ${e.clearedToolIds.length} tool results cleared, at ${counterText(e.counters)}`);
    if (e.kind === 'rollback') lines.push(`  rollback line ${e.raw.line}: ${e.numTurns} turn(s) removed, at ${counterText(e.counters)}`);
  }
  lines.push(`subagents:   ${s.subagents.length}`);
  for (const a of s.subagents) lines.push(`  ${a.agentId} (${a.layout}${a.agentType ? `, ${a.agentType}` : ''}): ${counterText(a.counters)}`);
  const tools = Object.entries(s.toolsUsed).sort((a, b) => b[1] - a[1]);
  lines.push(`tools used:  ${tools.map(([name, n]) => `${name} ${n}`).join(', ') || '-'}`);
  const u = s.usage;
  lines.push(
    `usage:       input ${u.inputTokens}, cached ${u.cachedInputTokens}, cache write ${u.cacheWriteTokens}, output ${u.outputTokens}, reasoning ${u.reasoningTokens}`,
  );
  lines.push(`warnings:    ${s.warnings.length}`);
  for (const w of s.warnings.slice(0, 20)) lines.push(`  ${w.file}:${w.line}: ${w.message}`);
  if (s.warnings.length > 20) lines.push(`  … ${s.warnings.length - 20} more (use --json)`);
  return `${lines.join('\n')}\n`;
}

export function formatPrefix(p: PrefixAt): string {
  const where = p.position ? `${p.position.label} (${p.position.counter} ${p.position.reached})` : `message ${p.end}`;
  const head = [
    '',
    `context at ${where}: ${p.end} timeline messages, segment ${p.position?.segment ?? p.compaction ?? 0}, ${p.chars} characters, mode ${p.mode}${p.truncated ? ', window cut' : ''}`,
    ...p.notes.map((n) => `note: ${n}`),
  ];
  const body = p.messages.map((m) => `=== ${m.role} ===\n${m.content}`);
  return `${[...head, ...body].join('\n')}\n`;
}
