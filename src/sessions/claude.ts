import { CLAUDE_SUMMARY_OPENING, isInjectedUserText } from './classify.js';
import { skimClaudeLine } from './claude-skim.js';
import { skimJsonLine } from './json-skim.js';
import { isObject, num, str, TimelineBuilder } from './timeline.js';
import type { Block, MessageKind, SessionUsage, SessionWarning, SubagentTranscript } from './types.js';

/**
 * Claude Code transcript reader (pure: lines in, records out). The conversation
 * is a DAG: the main chain is walked back from the last leaf via `parentUuid`,
 * bridging compactions through `logicalParentUuid`; replayed uuids keep their
 * earliest line; consecutive assistant lines sharing `message.id` are one API
 * message; sidechain lines are kept apart as subagent transcripts.
 */

const DAG_TYPES = new Set(['user', 'assistant', 'system', 'attachment', 'progress']);
const KNOWN_META_TYPES = new Set([
  'summary',
  'ai-title',
  'custom-title',
  'agent-name',
  'last-prompt',
  'queue-operation',
  'file-history-snapshot',
  'permission-mode',
  'mode',
  'agent-setting',
  'pr-link',
  'bridge-session',
  'tag',
]);

/** Shared by every record without blocks (most records when only counting). Never mutated. */
const NO_BLOCKS: Block[] = [];

interface SystemDetail {
  subtype?: string;
  logicalParent?: string;
  trigger?: string;
  preTokens?: number;
  clearedToolIds?: string[];
}

interface ClaudeRecord {
  /** Position in the parser's record list. */
  index: number;
  line: number;
  uuid: string;
  /** Index of the parent record when it came earlier in the file; -1 for a root; -3 when `parent` must be looked up later. */
  parentIndex: number;
  /** Parent uuid, kept only while unresolved (a forward or dangling link). */
  parent: string | null;
  type: string;
  sidechain: boolean;
  agentId: string | undefined;
  /** Kept only with content (message timestamps); first/last are tracked while reading. */
  timestamp: string | undefined;
  blocks: Block[] | undefined;
  userKind: MessageKind | undefined;
  /** Contribution to the agent-step counter (DECISIONS 13). */
  steps: number;
  synthetic: boolean;
  messageId: string | undefined;
  model: string | undefined;
  usage: SessionUsage | undefined;
  /** Only on system records (rare): one field instead of five on every record. */
  system: SystemDetail | undefined;
  hasToolResult: boolean;
}

export interface ClaudeParserOptions {
  keepContent: boolean;
  /** A subagent file: every line is the subagent's own chain. */
  asSubagent?: boolean;
  /** Counting mode reads fields from the line bytes without JSON.parse (default true; false for equivalence tests). */
  skimFields?: boolean;
}

export interface ClaudeParseResult {
  builder: TimelineBuilder;
  sessionId?: string;
  cwd?: string;
  version?: string;
  offChainRecords: number;
  inlineSubagents: SubagentTranscript[];
  warnings: SessionWarning[];
}

export class ClaudeParser {
  private readonly records: ClaudeRecord[] = [];
  private readonly byUuid = new Map<string, ClaudeRecord>();
  readonly warnings: SessionWarning[] = [];
  private readonly unknownTypes = new Map<string, { count: number; line: number }>();
  private duplicates = 0;
  private firstDuplicateLine = 0;
  private lastUuid: string | null = null;
  private sessionId: string | undefined;
  private firstTimestamp: string | undefined;
  private lastTimestamp: string | undefined;
  /** One string instance per distinct model / type / agent id (records hold many repeats). */
  private readonly interned = new Map<string, string>();
  private readonly toolBlocks = new Map<string, Block[]>();
  private lastMessageId: string | undefined;
  private lastUsage: SessionUsage | undefined;
  private cwd: string | undefined;
  private version: string | undefined;

  constructor(
    readonly file: string,
    readonly options: ClaudeParserOptions,
  ) {}

  warn(line: number, message: string): void {
    this.warnings.push({ file: this.file, line, message });
  }

  /**
   * Raw line bytes (valid only during the call). Counting mode reads the needed fields
   * straight from the bytes; when that reader is unsure the line goes through JSON.parse.
   */
  lineBytes(lineNumber: number, bytes: Buffer): void {
    if (this.options.keepContent) {
      this.line(lineNumber, bytes.toString('utf8'));
      return;
    }
    const skimmed = this.options.skimFields === false ? undefined : skimClaudeLine(bytes);
    if (skimmed === undefined) this.line(lineNumber, skimJsonLine(bytes));
    else this.parsed(lineNumber, skimmed);
  }

  line(lineNumber: number, text: string): void {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      this.warn(lineNumber, `invalid JSON skipped (${(error as Error).message.slice(0, 120)})`);
      return;
    }
    this.parsed(lineNumber, value);
  }

  private parsed(lineNumber: number, value: unknown): void {
    try {
      this.record(lineNumber, value);
    } catch (error) {
      // Defensive: a record of an unexpected shape must never stop the read.
      this.warn(lineNumber, `record skipped (${(error as Error).message.slice(0, 120)})`);
    }
  }

  private record(lineNumber: number, value: unknown): void {
    if (!isObject(value)) {
      this.warn(lineNumber, 'line is not a JSON object; skipped');
      return;
    }
    const type = str(value.type);
    if (type === undefined) {
      this.warn(lineNumber, 'record without a "type" field skipped');
      return;
    }
    this.sessionId ??= str(value.sessionId);
    this.cwd ??= str(value.cwd);
    this.version = str(value.version) ?? this.version;
    if (!DAG_TYPES.has(type)) {
      if (!KNOWN_META_TYPES.has(type)) this.noteUnknown(lineNumber, type);
      return;
    }
    let uuid = str(value.uuid);
    let parent: string | null = value.parentUuid === null ? null : (str(value.parentUuid) ?? null);
    if (uuid === undefined) {
      // Very old lines without ids: chain them in file order.
      uuid = `line:${lineNumber}`;
      parent = this.lastUuid;
    }
    if (this.byUuid.has(uuid)) {
      if (this.duplicates === 0) this.firstDuplicateLine = lineNumber;
      this.duplicates += 1;
      return;
    }
    let parentIndex = -1;
    if (parent !== null) {
      const found = this.byUuid.get(parent);
      parentIndex = found === undefined ? -3 : found.index;
      if (found !== undefined) parent = null;
    }
    const timestamp = str(value.timestamp);
    if (timestamp !== undefined) {
      if (this.firstTimestamp === undefined || timestamp < this.firstTimestamp) this.firstTimestamp = timestamp;
      if (this.lastTimestamp === undefined || timestamp > this.lastTimestamp) this.lastTimestamp = timestamp;
    }
    const agentId = str(value.agentId);
    const record: ClaudeRecord = {
      index: this.records.length,
      line: lineNumber,
      uuid,
      parentIndex,
      parent,
      type: this.intern(type),
      sidechain: this.options.asSubagent === true || value.isSidechain === true,
      agentId: agentId === undefined ? undefined : this.intern(agentId),
      timestamp: this.options.keepContent ? timestamp : undefined,
      blocks: undefined,
      userKind: undefined,
      steps: 0,
      synthetic: false,
      messageId: undefined,
      model: undefined,
      usage: undefined,
      system: undefined,
      hasToolResult: false,
    };
    if (type === 'system') this.readSystem(record, value);
    else if (type === 'user' || type === 'assistant') this.readMessage(record, value);
    this.records.push(record);
    this.byUuid.set(uuid, record);
    this.lastUuid = uuid;
  }

  /**
   * Counting mode keeps only tool-call names (tools used), and a block is never changed
   * once read: records share one block, and one single-block list, per tool name.
   */
  private countingBlocks(blocks: Block[]): Block[] {
    if (blocks.length === 0) return NO_BLOCKS;
    const shared: Block[] = [];
    for (const block of blocks) {
      const name = block.type === 'tool_call' ? block.name : undefined;
      if (name === undefined) {
        shared.push(block);
        continue;
      }
      let one = this.toolBlocks.get(name);
      if (one === undefined) {
        one = [{ type: 'tool_call', name, input: undefined }];
        if (this.toolBlocks.size < 10_000) this.toolBlocks.set(name, one);
      }
      if (blocks.length === 1) return one;
      shared.push(one[0]!);
    }
    return shared;
  }

  private intern(text: string): string {
    const known = this.interned.get(text);
    if (known !== undefined) return known;
    if (this.interned.size < 10_000) this.interned.set(text, text);
    return text;
  }

  private readSystem(record: ClaudeRecord, value: Record<string, unknown>): void {
    const detail: SystemDetail = {};
    record.system = detail;
    const subtype = str(value.subtype);
    if (subtype !== undefined) detail.subtype = subtype;
    if (subtype === 'compact_boundary') {
      const logical = str(value.logicalParentUuid);
      if (logical !== undefined) detail.logicalParent = logical;
      const meta = isObject(value.compactMetadata) ? value.compactMetadata : {};
      const trigger = str(meta.trigger);
      if (trigger !== undefined) detail.trigger = trigger;
      if (typeof meta.preTokens === 'number') detail.preTokens = meta.preTokens;
    } else if (subtype === 'microcompact_boundary') {
      const meta = isObject(value.microcompactMetadata) ? value.microcompactMetadata : {};
      detail.clearedToolIds = Array.isArray(meta.compactedToolIds)
        ? meta.compactedToolIds.filter((id): id is string => typeof id === 'string')
        : [];
      const trigger = str(meta.trigger);
      if (trigger !== undefined) detail.trigger = trigger;
    }
  }

  private readMessage(record: ClaudeRecord, value: Record<string, unknown>): void {
    const message = isObject(value.message) ? value.message : undefined;
    if (!message) {
      this.warn(record.line, `${record.type} record without a "message" object`);
      record.blocks = [];
      return;
    }
    const keep = this.options.keepContent;
    const { blocks, hasText, hasToolResult, firstText, hasMedia } = readBlocks(message.content, keep);
    record.blocks = keep ? blocks : this.countingBlocks(blocks);
    record.hasToolResult = hasToolResult;
    if (record.type === 'assistant') {
      record.steps = 1;
      const model = str(message.model);
      record.synthetic = value.isApiErrorMessage === true || model === '<synthetic>';
      if (model !== undefined && !record.synthetic) record.model = this.intern(model);
      const id = str(message.id);
      if (id !== undefined) record.messageId = id === this.lastMessageId ? this.lastMessageId : id;
      if (isObject(message.usage)) {
        const usage = claudeUsage(message.usage);
        // Lines of one API response repeat the same usage; counting mode keeps one copy.
        const previous = this.lastUsage;
        record.usage = !keep && previous !== undefined && sameUsage(previous, usage) ? previous : usage;
        this.lastUsage = record.usage;
      }
      this.lastMessageId = record.messageId;
      return;
    }
    record.steps = hasText && !hasToolResult ? 1 : 0;
    if (value.isCompactSummary === true) record.userKind = 'compaction_summary';
    else if (hasToolResult) record.userKind = 'tool_result';
    else if (value.isMeta === true || isInjectedUserText(firstText)) record.userKind = 'injected';
    else if (firstText.startsWith(CLAUDE_SUMMARY_OPENING)) record.userKind = 'compaction_summary';
    else if (hasText || hasMedia) record.userKind = 'human';
  }

  private noteUnknown(line: number, type: string): void {
    const seen = this.unknownTypes.get(type);
    if (seen) seen.count += 1;
    else {
      this.warn(line, `unknown record type "${type}" skipped`);
      this.unknownTypes.set(type, { count: 1, line });
    }
  }

  finish(): ClaudeParseResult {
    const builder = new TimelineBuilder(this.file, this.options.keepContent);
    const records = this.records;
    const n = records.length;
    // Integer links instead of string sets: this runs over every record of large transcripts.
    const main = new Uint8Array(n);
    for (let i = 0; i < n; i += 1) main[i] = this.options.asSubagent || !records[i]!.sidechain ? 1 : 0;
    const parentOf = new Int32Array(n).fill(-1);
    const hasChild = new Uint8Array(n);
    for (let i = 0; i < n; i += 1) {
      const r = records[i]!;
      let index = r.parentIndex;
      if (index === -3 || (index === -1 && r.system?.logicalParent !== undefined)) {
        const link = r.parentIndex === -3 ? r.parent : r.system?.logicalParent;
        const parent = link === null || link === undefined ? undefined : this.byUuid.get(link);
        index = parent === undefined ? -2 : parent.index;
      }
      parentOf[i] = index;
      if (index >= 0 && main[i]) hasChild[index] = 1;
    }
    const chain = this.mainChain(main, parentOf, hasChild);
    const onChain = new Uint8Array(n);
    for (const i of chain) onChain[i] = 1;
    const ordered = this.spliceParallelResults(chain, main, parentOf, hasChild, onChain);
    this.build(
      builder,
      ordered.map((i) => records[i]!),
    );
    let offChainRecords = 0;
    for (let i = 0; i < n; i += 1) {
      const r = records[i]!;
      if (main[i] && !onChain[i] && (r.type === 'user' || r.type === 'assistant')) offChainRecords += 1;
    }
    const inlineSubagents = this.options.asSubagent ? [] : this.inlineSubagents(parentOf);
    builder.seeTimestamp(this.firstTimestamp);
    builder.seeTimestamp(this.lastTimestamp);
    if (this.duplicates > 0) {
      this.warnings.push({ file: this.file, line: this.firstDuplicateLine, message: `${this.duplicates} replayed line(s) with an already-seen uuid ignored (the earliest is kept)` });
    }
    for (const [type, { count, line }] of this.unknownTypes) {
      if (count > 1) this.warnings.push({ file: this.file, line, message: `unknown record type "${type}": ${count} lines skipped in all (first here)` });
    }
    const result: ClaudeParseResult = {
      builder,
      offChainRecords,
      inlineSubagents,
      warnings: [...this.warnings, ...builder.warnings],
    };
    if (this.sessionId !== undefined) result.sessionId = this.sessionId;
    if (this.cwd !== undefined) result.cwd = this.cwd;
    if (this.version !== undefined) result.version = this.version;
    return result;
  }

  /** Walks back from the last leaf; a compact boundary links on through logicalParentUuid. Record indices. */
  private mainChain(main: Uint8Array, parentOf: Int32Array, hasChild: Uint8Array): number[] {
    const records = this.records;
    let leaf = -1;
    for (let i = records.length - 1; i >= 0; i -= 1) {
      if (!main[i] || hasChild[i]) continue;
      if (leaf === -1) leaf = i;
      const type = records[i]!.type;
      if (type === 'user' || type === 'assistant') {
        leaf = i;
        break;
      }
    }
    if (leaf === -1) {
      for (let i = records.length - 1; i >= 0 && leaf === -1; i -= 1) if (main[i]) leaf = i;
      if (leaf === -1) return [];
    }
    const chain: number[] = [];
    const visited = new Uint8Array(records.length);
    let current = leaf;
    while (current >= 0 && !visited[current]) {
      visited[current] = 1;
      chain.push(current);
      const next = parentOf[current]!;
      if (next === -2) {
        const r = records[current]!;
        this.warn(r.line, `parent ${r.parent ?? r.system?.logicalParent} not in this file; the main chain starts here`);
      }
      current = next;
    }
    return chain.reverse();
  }

  /**
   * Parallel tool calls can leave tool-result lines on dead-end side branches of the
   * chain. The model saw them, so they go back right after the assistant message.
   */
  private spliceParallelResults(chain: number[], main: Uint8Array, parentOf: Int32Array, hasChild: Uint8Array, onChain: Uint8Array): number[] {
    const records = this.records;
    const byParent = new Map<number, number[]>();
    for (let i = 0; i < records.length; i += 1) {
      const parent = parentOf[i]!;
      if (!main[i] || onChain[i] || hasChild[i] || !records[i]!.hasToolResult || parent < 0 || !onChain[parent]) continue;
      const list = byParent.get(parent) ?? [];
      list.push(i);
      byParent.set(parent, list);
    }
    if (byParent.size === 0) return chain;
    const out: number[] = [];
    const queued: number[] = [];
    for (const i of chain) {
      const type = records[i]!.type;
      // Insert queued results once the assistant run they answer has ended.
      if (queued.length > 0 && type !== 'assistant' && type !== 'progress') out.push(...queued.splice(0));
      out.push(i);
      const extra = byParent.get(i);
      if (extra) queued.push(...extra);
    }
    out.push(...queued);
    for (const i of out) onChain[i] = 1;
    return out;
  }

  private build(builder: TimelineBuilder, chain: ClaudeRecord[]): void {
    let openMessageId: string | undefined;
    let pendingCompaction: ReturnType<TimelineBuilder['compaction']> | undefined;
    for (const r of chain) {
      const raw = { file: this.file, line: r.line };
      builder.seeTimestamp(r.timestamp);
      if (r.type === 'system') {
        if (r.system?.subtype === 'compact_boundary') {
          const event: Parameters<TimelineBuilder['compaction']>[0] = { compaction: 'claude', raw, summaryAvailable: false };
          if (r.timestamp !== undefined) event.timestamp = r.timestamp;
          if (r.system?.trigger !== undefined) event.trigger = r.system?.trigger;
          if (r.system?.preTokens !== undefined) event.preTokens = r.system?.preTokens;
          pendingCompaction = builder.compaction(event);
          openMessageId = undefined;
        } else if (r.system?.subtype === 'microcompact_boundary') {
          builder.microcompaction(raw, r.system?.clearedToolIds ?? [], r.timestamp);
        }
        continue;
      }
      if (r.type === 'assistant') {
        if (r.synthetic) {
          builder.bumpSteps(r.steps);
          continue;
        }
        if (openMessageId !== undefined && r.messageId === openMessageId && builder.lastMessage?.role === 'assistant') {
          builder.mergeIntoLast(r.blocks ?? [], raw, r.steps, r.usage, r.model, r.timestamp);
          continue;
        }
        const input: Parameters<TimelineBuilder['addMessage']>[0] = { role: 'assistant', kind: 'assistant', blocks: r.blocks ?? [], raw, uuid: r.uuid };
        if (r.timestamp !== undefined) input.timestamp = r.timestamp;
        if (r.model !== undefined) input.model = r.model;
        if (r.usage !== undefined) input.usage = r.usage;
        builder.addMessage(input, r.steps);
        openMessageId = r.messageId;
        continue;
      }
      if (r.type !== 'user') continue;
      openMessageId = undefined;
      let kind = r.userKind;
      if (kind === undefined) {
        builder.bumpSteps(r.steps);
        continue;
      }
      // A summary only counts as one right after a boundary; elsewhere it is quoted text.
      if (kind === 'compaction_summary' && !pendingCompaction) kind = 'human';
      const input: Parameters<TimelineBuilder['addMessage']>[0] = { role: 'user', kind, blocks: r.blocks ?? [], raw, uuid: r.uuid };
      if (r.timestamp !== undefined) input.timestamp = r.timestamp;
      const message = builder.addMessage(input, r.steps);
      if (kind === 'compaction_summary' && pendingCompaction) {
        pendingCompaction.summaryMessage = message.index;
        pendingCompaction.summaryAvailable = true;
      }
      pendingCompaction = undefined;
    }
  }

  /** Inline `isSidechain` lines grouped by agentId, else by their root. */
  private inlineSubagents(parentOf: Int32Array): SubagentTranscript[] {
    const side = this.records.filter((r) => r.sidechain);
    if (side.length === 0) return [];
    const groups = new Map<string, ClaudeRecord[]>();
    const rootOf = (r: ClaudeRecord): string => {
      let current = r;
      for (let guard = 0; guard < this.records.length; guard += 1) {
        const parent = parentOf[current.index]!;
        if (parent < 0 || !this.records[parent]!.sidechain) break;
        current = this.records[parent]!;
      }
      return current.uuid;
    };
    for (const r of side) {
      const key = r.agentId ?? rootOf(r);
      const list = groups.get(key) ?? [];
      list.push(r);
      groups.set(key, list);
    }
    const out: SubagentTranscript[] = [];
    for (const [agentId, records] of groups) {
      const builder = new TimelineBuilder(this.file, this.options.keepContent);
      this.build(builder, records);
      out.push({ agentId, layout: 'inline', file: this.file, messages: builder.messages, counters: { ...builder.counters } });
    }
    return out;
  }
}

function readBlocks(
  content: unknown,
  keep: boolean,
): { blocks: Block[]; hasText: boolean; hasToolResult: boolean; firstText: string; hasMedia: boolean } {
  if (typeof content === 'string') {
    const hasText = content.trim() !== '';
    return { blocks: hasText && keep ? [{ type: 'text', text: content }] : [], hasText, hasToolResult: false, firstText: content.slice(0, 200), hasMedia: false };
  }
  const blocks: Block[] = [];
  let hasText = false;
  let hasToolResult = false;
  let hasMedia = false;
  let firstText = '';
  if (!Array.isArray(content)) return { blocks, hasText, hasToolResult, firstText, hasMedia };
  for (const item of content) {
    if (!isObject(item)) continue;
    const type = str(item.type) ?? 'unknown';
    if (type === 'text') {
      const text = str(item.text) ?? '';
      if (text.trim() === '') continue;
      if (!hasText) firstText = text.slice(0, 200);
      hasText = true;
      if (keep) blocks.push({ type: 'text', text });
    } else if (!keep && type !== 'tool_use' && type !== 'server_tool_use') {
      // Counting only: tool calls are the one block kind still needed (tools used).
      if (type === 'tool_result') hasToolResult = true;
      else if (type === 'image' || type === 'document') hasMedia = true;
    } else if (type === 'thinking' || type === 'redacted_thinking') {
      const text = str(item.thinking) ?? '';
      const block: Block = { type: 'thinking', text: keep ? text : '' };
      if (type === 'redacted_thinking') block.encrypted = true;
      blocks.push(block);
    } else if (type === 'tool_use' || type === 'server_tool_use') {
      const block: Block = { type: 'tool_call', name: str(item.name) ?? 'unknown', input: keep ? item.input : undefined };
      const id = str(item.id);
      if (id !== undefined) block.id = id;
      blocks.push(block);
    } else if (type === 'tool_result') {
      hasToolResult = true;
      const block: Block = { type: 'tool_result', content: keep ? toolResultText(item.content) : '', isError: item.is_error === true };
      const id = str(item.tool_use_id);
      if (id !== undefined) block.toolCallId = id;
      blocks.push(block);
    } else {
      if (type === 'image' || type === 'document') hasMedia = true;
      blocks.push({ type: 'other', kind: type });
    }
  }
  return { blocks, hasText, hasToolResult, firstText, hasMedia };
}

function toolResultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const item of content) {
    if (isObject(item) && item.type === 'text' && typeof item.text === 'string') parts.push(item.text);
  }
  return parts.join('\n');
}

function sameUsage(a: SessionUsage, b: SessionUsage): boolean {
  return (
    a.inputTokens === b.inputTokens &&
    a.outputTokens === b.outputTokens &&
    a.cachedInputTokens === b.cachedInputTokens &&
    a.cacheWriteTokens === b.cacheWriteTokens &&
    a.reasoningTokens === b.reasoningTokens
  );
}

function claudeUsage(usage: Record<string, unknown>): SessionUsage {
  return {
    inputTokens: num(usage.input_tokens),
    outputTokens: num(usage.output_tokens),
    cachedInputTokens: num(usage.cache_read_input_tokens),
    cacheWriteTokens: num(usage.cache_creation_input_tokens),
    reasoningTokens: 0,
  };
}

