import { copyDefined, definedFields } from '../core/copy-defined.js';
import { getOrInsert } from '../core/get-or-insert.js';
import { CLAUDE_SUMMARY_OPENING, isInjectedUserText } from './classify.js';
import {
  ClaudeRecordTable,
  dagTypeCode,
  IdNumbers,
  kindCode,
  kindOf,
  MISSING,
  NO_BLOCKS,
  ROOT,
  SIDECHAIN,
  SYNTHETIC,
  type SystemDetail,
  TOOL_RESULT,
  TYPE_ASSISTANT,
  TYPE_PROGRESS,
  TYPE_SYSTEM,
  TYPE_USER,
  UNRESOLVED,
} from './claude-records.js';
import { JsonRecordParser } from './json-record-parser.js';
import { anthropicMedia, mediaBlock, mediaPlaceholder } from './media.js';
import { isObject, num, str } from '../core/guards.js';
import { type NewMessage, TimelineBuilder, USAGE_FIELDS } from './timeline.js';
import type { Block, MessageKind, MessageRole, RawRef, Session, SessionMessage, SessionUsage, SessionWarning, SubagentTranscript } from './types.js';

/**
 * Claude Code transcript reader (pure: lines in, records out). Every line goes through
 * JSON.parse, in counting mode as in full mode. The conversation is a DAG: the main chain
 * is walked back from the last leaf via `parentUuid`, bridging compactions through
 * `logicalParentUuid`; replayed uuids keep their earliest line; consecutive assistant lines
 * sharing `message.id` are one API message; sidechain lines are kept apart as subagent
 * transcripts.
 */

export const KNOWN_META_TYPES: ReadonlySet<string> = new Set([
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

export interface ClaudeParserOptions {
  keepContent: boolean;
  /** A subagent file: every line is the subagent's own chain. */
  asSubagent?: boolean;
  /**
   * Inline sidechain (subagent) lines: `apart` (default) keeps them out of the main timeline,
   * as subagent transcripts; `inline` also puts them on it in file order, counted and rendered,
   * as the reference's file-row walk does (their prompts count as steps, not as human turns).
   */
  sidechains?: 'apart' | 'inline';
}

/** The session facts the file tells (`Session` fields), then the timeline and what lies beside it. */
export interface ClaudeParseResult extends Pick<Session, 'id' | 'forkedFrom' | 'forkedFromMessage' | 'continuesFrom' | 'leafUuid' | 'cwd' | 'version'> {
  builder: TimelineBuilder;
  offChainRecords: number;
  inlineSubagents: SubagentTranscript[];
  warnings: SessionWarning[];
}

/** The result's session facts, in the order they are copied onto the Session. */
export const SESSION_FACTS = ['id', 'forkedFrom', 'forkedFromMessage', 'continuesFrom', 'leafUuid', 'cwd', 'version'] as const;

export class ClaudeParser extends JsonRecordParser {
  private readonly records: ClaudeRecordTable;
  /** Record uuids; id number i is record i (a replayed uuid adds no record). */
  private readonly ids = new IdNumbers();
  private duplicates = 0;
  private firstDuplicateLine = 0;
  /** Earliest and latest timestamp of any record (messages keep theirs only with content). */
  private earliest: string | undefined;
  private latest: string | undefined;
  /** One string instance per distinct agent id (records hold many repeats). */
  private readonly interned = new Map<string, string>();
  private readonly toolBlocks = new Map<string, Block[]>();
  private lastUsage: SessionUsage | undefined;
  /** Undefined members until the file tells them (the result keeps only those that hold a value). */
  private readonly facts: Omit<ClaudeParseResult, 'builder' | 'offChainRecords' | 'inlineSubagents' | 'warnings'> = {};

  constructor(
    file: string,
    readonly options: ClaudeParserOptions,
  ) {
    super(file);
    this.records = new ClaudeRecordTable(options.keepContent);
  }

  protected record(lineNumber: number, value: Record<string, unknown>): void {
    const type = str(value.type);
    if (type === undefined) {
      this.warn(lineNumber, 'record without a "type" field skipped');
      return;
    }
    const facts = this.facts;
    facts.id ??= str(value.sessionId);
    // The first fork marker wins, even one without ids (both members are then set, to undefined).
    if (!Object.hasOwn(facts, 'forkedFrom') && isObject(value.forkedFrom)) {
      facts.forkedFrom = str(value.forkedFrom.sessionId);
      facts.forkedFromMessage = str(value.forkedFrom.messageUuid);
    }
    facts.cwd ??= str(value.cwd);
    facts.version = str(value.version) ?? facts.version;
    const typeCode = dagTypeCode(type);
    if (typeCode === 0) {
      if (!KNOWN_META_TYPES.has(type)) this.noteUnknown(lineNumber, `record type "${type}"`);
      return;
    }
    const records = this.records;
    const ids = this.ids;
    const index = records.count;
    const uuid = str(value.uuid);
    // Very old lines without ids: chained in file order.
    const key = uuid ?? `line:${lineNumber}`;
    if (ids.find(key) >= 0) {
      this.duplicate(lineNumber);
      return;
    }
    ids.numberOf(key);
    // From here on the id is in the table as number `index`: the record must be added.
    let parent: number;
    if (uuid === undefined) {
      parent = index - 1;
    } else {
      const link = value.parentUuid === null ? undefined : str(value.parentUuid);
      parent = link === undefined ? ROOT : ids.find(link);
      if (link !== undefined && parent < 0) {
        parent = UNRESOLVED;
        records.unresolvedParents.set(index, link);
      }
    }
    const timestamp = str(value.timestamp);
    if (timestamp !== undefined) this.seeTimestamp(timestamp);
    const sidechain = this.options.asSubagent === true || value.isSidechain === true;
    records.add(lineNumber, parent, typeCode, sidechain ? SIDECHAIN : 0, timestamp);
    const agentId = str(value.agentId);
    if (agentId !== undefined) records.agentId.set(index, this.intern(agentId));
    if (typeCode === TYPE_SYSTEM) this.readSystem(index, value);
    else if (typeCode === TYPE_USER || typeCode === TYPE_ASSISTANT) this.readMessage(index, typeCode, value);
  }

  private seeTimestamp(timestamp: string): void {
    if (this.earliest === undefined || timestamp < this.earliest) this.earliest = timestamp;
    if (this.latest === undefined || timestamp > this.latest) this.latest = timestamp;
  }

  private duplicate(lineNumber: number): void {
    if (this.duplicates === 0) this.firstDuplicateLine = lineNumber;
    this.duplicates += 1;
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
      const one = this.toolList(name);
      if (blocks.length === 1) return one;
      shared.push(one[0]!);
    }
    return shared;
  }

  /** The shared single-block list of a tool name (never changed once made). */
  private toolList(name: string): Block[] {
    let one = this.toolBlocks.get(name);
    if (one === undefined) {
      one = [{ type: 'tool_call', name, input: undefined }];
      if (this.toolBlocks.size < 10_000) this.toolBlocks.set(name, one);
    }
    return one;
  }

  private intern(text: string): string {
    const known = this.interned.get(text);
    if (known !== undefined) return known;
    if (this.interned.size < 10_000) this.interned.set(text, text);
    return text;
  }

  private readSystem(index: number, value: Record<string, unknown>): void {
    const subtype = str(value.subtype);
    const detail: SystemDetail = definedFields({ subtype }, ['subtype']);
    this.records.system.set(index, detail);
    if (subtype === 'compact_boundary') {
      const meta = isObject(value.compactMetadata) ? value.compactMetadata : {};
      const preTokens = typeof meta.preTokens === 'number' ? meta.preTokens : undefined;
      copyDefined(detail, { logicalParent: str(value.logicalParentUuid), trigger: str(meta.trigger), preTokens }, ['logicalParent', 'trigger', 'preTokens']);
    } else if (subtype === 'microcompact_boundary') {
      const meta = isObject(value.microcompactMetadata) ? value.microcompactMetadata : {};
      detail.clearedToolIds = Array.isArray(meta.compactedToolIds) ? meta.compactedToolIds.filter((id): id is string => typeof id === 'string') : [];
      copyDefined(detail, { trigger: str(meta.trigger) }, ['trigger']);
    }
  }

  private readMessage(index: number, typeCode: number, value: Record<string, unknown>): void {
    const records = this.records;
    const message = isObject(value.message) ? value.message : undefined;
    if (!message) {
      this.warn(records.line[index]!, `${typeCode === TYPE_ASSISTANT ? 'assistant' : 'user'} record without a "message" object`);
      return;
    }
    const keep = this.options.keepContent;
    const { blocks, hasText, hasToolResult, firstText, hasMedia } = readBlocks(message.content, keep);
    records.setBlocks(index, keep ? blocks : this.countingBlocks(blocks));
    if (hasToolResult) records.flags[index]! |= TOOL_RESULT;
    if (typeCode === TYPE_ASSISTANT) {
      records.steps[index] = 1;
      const model = str(message.model);
      const synthetic = value.isApiErrorMessage === true || model === '<synthetic>';
      if (synthetic) records.flags[index]! |= SYNTHETIC;
      else if (model !== undefined) records.setModel(index, model);
      // Message ids are only compared: they are numbered by their bytes, never kept as strings.
      if (typeof message.id === 'string') records.messageId[index] = records.messageIds.numberOf(message.id);
      if (isObject(message.usage)) {
        const usage = claudeUsage(message.usage);
        // Lines of one API response repeat the same usage; counting mode keeps one copy.
        const previous = this.lastUsage;
        const same = !keep && previous !== undefined && sameUsage(previous, usage);
        records.setUsage(index, usage, same);
        if (!same) this.lastUsage = usage;
      }
      return;
    }
    records.steps[index] = hasText && !hasToolResult ? 1 : 0;
    let kind: MessageKind | undefined;
    if (value.isCompactSummary === true) kind = 'compaction_summary';
    else if (hasToolResult) kind = 'tool_result';
    else if (value.isMeta === true || isInjectedUserText(firstText)) kind = 'injected';
    else if (firstText.startsWith(CLAUDE_SUMMARY_OPENING)) kind = 'compaction_summary';
    else if (hasText || hasMedia) kind = 'human';
    records.kind[index] = kindCode(kind);
  }

  finish(): ClaudeParseResult {
    const builder = new TimelineBuilder(this.file, this.options.keepContent);
    // Each loop over the records is its own method: a loop optimized inside one long method made
    // V8 optimize (and then drop) the whole method again at each of the next loops.
    const { main, parentOf, hasChild } = this.links();
    const chain = this.mainChain(main, parentOf, hasChild);
    const onChain = new Uint8Array(this.records.count);
    for (let k = 0; k < chain.length; k += 1) onChain[chain[k]!] = 1;
    const ordered = this.spliceParallelResults(chain, main, parentOf, hasChild, onChain);
    const inline = this.options.sidechains === 'inline' && !this.options.asSubagent;
    this.build(builder, inline ? this.withSidechains(ordered) : ordered, inline);
    const offChainRecords = this.countOffChain(main, onChain);
    const inlineSubagents = this.options.asSubagent ? [] : this.inlineSubagents(parentOf);
    builder.seeTimestamp(this.earliest);
    builder.seeTimestamp(this.latest);
    if (this.duplicates > 0) {
      this.warnings.push({
        file: this.file,
        line: this.firstDuplicateLine,
        message: `${this.duplicates} replayed line(s) with an already-seen uuid ignored (the earliest is kept)`,
      });
    }
    this.warnRepeatedUnknowns();
    const result: ClaudeParseResult = {
      builder,
      offChainRecords,
      inlineSubagents,
      warnings: [...this.warnings, ...builder.warnings],
    };
    const leafUuid = chain.length > 0 ? this.ids.text(chain.at(-1)!) : undefined;
    copyDefined(result, { ...this.facts, leafUuid }, SESSION_FACTS);
    return result;
  }

  /** Which records are on the main thread (not sidechains), each record's parent, and which have children there. Integer links instead of string sets: this runs over every record of large transcripts. */
  private links(): { main: Uint8Array; parentOf: Int32Array; hasChild: Uint8Array } {
    const records = this.records;
    const n = records.count;
    const main = new Uint8Array(n);
    for (let i = 0; i < n; i += 1) main[i] = this.options.asSubagent || !(records.flags[i]! & SIDECHAIN) ? 1 : 0;
    const parentOf = new Int32Array(n);
    const hasChild = new Uint8Array(n);
    for (let i = 0; i < n; i += 1) {
      let index = records.parent[i]!;
      if (index === UNRESOLVED || (index === ROOT && records.system.get(i)?.logicalParent !== undefined)) {
        const link = index === UNRESOLVED ? records.unresolvedParents.get(i) : records.system.get(i)?.logicalParent;
        const found = link === undefined ? -1 : this.ids.find(link);
        index = found < 0 ? MISSING : found;
      }
      parentOf[i] = index;
      if (index >= 0 && main[i]) hasChild[index] = 1;
    }
    return { main, parentOf, hasChild };
  }

  /** Messages of the main thread that are not on the main chain. */
  private countOffChain(main: Uint8Array, onChain: Uint8Array): number {
    const records = this.records;
    let offChainRecords = 0;
    for (let i = 0; i < records.count; i += 1) {
      const type = records.type[i];
      if (main[i] && !onChain[i] && (type === TYPE_USER || type === TYPE_ASSISTANT)) offChainRecords += 1;
    }
    return offChainRecords;
  }

  /** Walks back from the last leaf; a compact boundary links on through logicalParentUuid. Record indices. */
  private mainChain(main: Uint8Array, parentOf: Int32Array, hasChild: Uint8Array): Int32Array {
    const records = this.records;
    const n = records.count;
    let leaf = -1;
    for (let i = n - 1; i >= 0; i -= 1) {
      if (!main[i] || hasChild[i]) continue;
      if (leaf === -1) leaf = i;
      const type = records.type[i];
      if (type === TYPE_USER || type === TYPE_ASSISTANT) {
        leaf = i;
        break;
      }
    }
    if (leaf === -1) {
      for (let i = n - 1; i >= 0 && leaf === -1; i -= 1) if (main[i]) leaf = i;
      if (leaf === -1) return new Int32Array(0);
    }
    // Filled from the end: the walk goes from the leaf back to the root.
    const chain = new Int32Array(n);
    let start = n;
    const visited = new Uint8Array(n);
    let current = leaf;
    while (current >= 0 && !visited[current]) {
      visited[current] = 1;
      start -= 1;
      chain[start] = current;
      const next = parentOf[current]!;
      if (next === MISSING) {
        const link = records.unresolvedParents.get(current) ?? records.system.get(current)?.logicalParent;
        this.facts.continuesFrom = link;
        this.warn(records.line[current]!, `parent ${link} not in this file; the main chain starts here`);
      }
      current = next;
    }
    return chain.subarray(start);
  }

  /**
   * Parallel tool calls can leave tool-result lines on dead-end side branches of the
   * chain. The model saw them, so they go back right after the assistant message.
   */
  private spliceParallelResults(chain: Int32Array, main: Uint8Array, parentOf: Int32Array, hasChild: Uint8Array, onChain: Uint8Array): ArrayLike<number> {
    const records = this.records;
    const byParent = new Map<number, number[]>();
    for (let i = 0; i < records.count; i += 1) {
      const parent = parentOf[i]!;
      if (!main[i] || onChain[i] || hasChild[i] || !(records.flags[i]! & TOOL_RESULT) || parent < 0 || !onChain[parent]) continue;
      const list = getOrInsert(byParent, parent, () => []);
      list.push(i);
    }
    if (byParent.size === 0) return chain;
    const out: number[] = [];
    const queued: number[] = [];
    for (const i of chain) {
      const type = records.type[i];
      // Insert queued results once the assistant run they answer has ended.
      if (queued.length > 0 && type !== TYPE_ASSISTANT && type !== TYPE_PROGRESS) out.push(...queued.splice(0));
      out.push(i);
      const extra = byParent.get(i);
      if (extra) queued.push(...extra);
    }
    out.push(...queued);
    for (const i of out) onChain[i] = 1;
    return out;
  }

  /** `sidechainsInline`: the main timeline with sidechain records on it (their prompts are not human turns there). */
  private build(builder: TimelineBuilder, chain: ArrayLike<number>, sidechainsInline = false): void {
    const records = this.records;
    const keep = this.options.keepContent;
    const unkept = { file: this.file, line: 0 };
    let openMessageId = -1;
    let pendingCompaction: ReturnType<TimelineBuilder['compaction']> | undefined;
    for (let k = 0; k < chain.length; k += 1) {
      const i = chain[k]!;
      const type = records.type[i];
      // Only kept messages and context events keep their line: counting shares one reference.
      const raw = keep || type === TYPE_SYSTEM ? { file: this.file, line: records.line[i]! } : unkept;
      const timestamp = records.timestampOf(i);
      builder.seeTimestamp(timestamp);
      if (type === TYPE_SYSTEM) {
        const system = records.system.get(i);
        if (system?.subtype === 'compact_boundary') {
          const event: Parameters<TimelineBuilder['compaction']>[0] = { compaction: 'claude', raw, summaryAvailable: false };
          copyDefined(event, { timestamp, ...system }, ['timestamp', 'trigger', 'preTokens']);
          pendingCompaction = builder.compaction(event);
          openMessageId = -1;
        } else if (system?.subtype === 'microcompact_boundary') {
          builder.microcompaction(raw, system.clearedToolIds ?? [], timestamp);
        }
        continue;
      }
      if (type === TYPE_ASSISTANT) {
        if (records.flags[i]! & SYNTHETIC) {
          builder.bumpSteps(records.steps[i]!);
          continue;
        }
        const messageId = records.messageId[i]!;
        const model = records.modelOf(i);
        const usage = records.usageOf(i);
        if (openMessageId >= 0 && messageId === openMessageId && builder.lastMessage?.role === 'assistant') {
          builder.mergeIntoLast(records.blocksOf(i), raw, records.steps[i]!, usage, model, timestamp);
          continue;
        }
        this.addRecord(builder, i, 'assistant', 'assistant', raw, { timestamp, model, usage });
        openMessageId = messageId;
        continue;
      }
      if (type !== TYPE_USER) continue;
      openMessageId = -1;
      let kind = kindOf(records.kind[i]!);
      if (kind === undefined) {
        builder.bumpSteps(records.steps[i]!);
        continue;
      }
      // A summary only counts as one right after a boundary; elsewhere it is quoted text.
      if (kind === 'compaction_summary' && !pendingCompaction) kind = 'human';
      // A subagent's prompt on the main timeline (sidechains inline) was written by the main agent, not typed.
      if (sidechainsInline && kind === 'human' && records.flags[i]! & SIDECHAIN) kind = 'injected';
      const message = this.addRecord(builder, i, 'user', kind, raw, { timestamp });
      if (kind === 'compaction_summary' && pendingCompaction) {
        pendingCompaction.summaryMessage = message.index;
        pendingCompaction.summaryAvailable = true;
      }
      pendingCompaction = undefined;
    }
  }

  /** Record `i` as a new message: with content, kept with its uuid and facts; else only counted. */
  private addRecord(
    builder: TimelineBuilder,
    i: number,
    role: MessageRole,
    kind: MessageKind,
    raw: RawRef,
    facts: { timestamp: string | undefined; model?: string | undefined; usage?: SessionUsage | undefined },
  ): SessionMessage {
    const steps = this.records.steps[i]!;
    if (!this.options.keepContent) return builder.countMessage(role, kind, this.records.blocksOf(i), steps, facts.model, facts.usage);
    // With content a message owns its block list (continuation lines are appended to it): never the shared empty one.
    const blocks = this.records.blocksOf(i);
    const input: NewMessage = { role, kind, blocks: blocks === NO_BLOCKS ? [] : blocks, raw, uuid: this.ids.text(i) };
    copyDefined(input, facts, ['timestamp', 'model', 'usage']);
    return builder.addMessage(input, steps);
  }

  /** Indices of the inline sidechain records, in file order. */
  private sidechainRecords(): number[] {
    const side: number[] = [];
    for (let i = 0; i < this.records.count; i += 1) if (this.records.flags[i]! & SIDECHAIN) side.push(i);
    return side;
  }

  /** The main chain with the inline sidechain records put back where they are in the file (before the first later chain record). */
  private withSidechains(ordered: ArrayLike<number>): number[] {
    const side = this.sidechainRecords();
    const out: number[] = [];
    let next = 0;
    for (let k = 0; k < ordered.length; k += 1) {
      const i = ordered[k]!;
      while (next < side.length && side[next]! < i) out.push(side[next++]!);
      out.push(i);
    }
    while (next < side.length) out.push(side[next++]!);
    return out;
  }

  /** Inline `isSidechain` lines grouped by agentId, else by their root. */
  private inlineSubagents(parentOf: Int32Array): SubagentTranscript[] {
    const records = this.records;
    const side = this.sidechainRecords();
    if (side.length === 0) return [];
    const groups = new Map<string, number[]>();
    const rootOf = (i: number): string => {
      let current = i;
      for (let guard = 0; guard < records.count; guard += 1) {
        const parent = parentOf[current]!;
        if (parent < 0 || !(records.flags[parent]! & SIDECHAIN)) break;
        current = parent;
      }
      return this.ids.text(current);
    };
    for (const i of side) {
      const key = records.agentId.get(i) ?? rootOf(i);
      const list = getOrInsert(groups, key, () => []);
      list.push(i);
    }
    const out: SubagentTranscript[] = [];
    for (const [agentId, members] of groups) {
      const builder = new TimelineBuilder(this.file, this.options.keepContent);
      this.build(builder, members);
      out.push({ agentId, layout: 'inline', file: this.file, messages: builder.messages, counters: { ...builder.counters } });
    }
    return out;
  }
}

function readBlocks(content: unknown, keep: boolean): { blocks: Block[]; hasText: boolean; hasToolResult: boolean; firstText: string; hasMedia: boolean } {
  if (typeof content === 'string') {
    const hasText = content.trim() !== '';
    return {
      blocks: hasText && keep ? [{ type: 'text', text: content }] : [],
      hasText,
      hasToolResult: false,
      firstText: content.slice(0, 200),
      hasMedia: false,
    };
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
      copyDefined(block, { id: str(item.id) }, ['id']);
      blocks.push(block);
    } else if (type === 'tool_result') {
      hasToolResult = true;
      const block: Block = { type: 'tool_result', content: keep ? toolResultText(item.content) : '', isError: item.is_error === true };
      copyDefined(block, { toolCallId: str(item.tool_use_id) }, ['toolCallId']);
      blocks.push(block);
    } else if (type === 'image' || type === 'document') {
      hasMedia = true;
      blocks.push(mediaBlock(anthropicMedia(type, item)));
    } else {
      blocks.push({ type: 'other', kind: type });
    }
  }
  return { blocks, hasText, hasToolResult, firstText, hasMedia };
}

/** A tool result's text; images and documents in it become their placeholders. */
function toolResultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const item of content) {
    if (!isObject(item)) continue;
    if (item.type === 'text' && typeof item.text === 'string') parts.push(item.text);
    else if (item.type === 'image' || item.type === 'document') parts.push(mediaPlaceholder(anthropicMedia(item.type, item)));
  }
  return parts.join('\n');
}

function sameUsage(a: SessionUsage, b: SessionUsage): boolean {
  return USAGE_FIELDS.every((field) => a[field] === b[field]);
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
