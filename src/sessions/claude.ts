import { CLAUDE_SUMMARY_OPENING, isInjectedUserText } from './classify.js';
import {
  ClaudeRecordTable,
  dagTypeCode,
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
import {
  blockCount,
  blockSlot,
  CACHE,
  KIND,
  SLOT,
  useSlotsOf,
  slotCached,
  slotEnd,
  slotKind,
  slotParsed,
  slotStart,
  slotString,
  slotText,
  slotValue,
} from './claude-skim.js';
import { type IdSet, IdTable } from './id-table.js';
import { JsonScanner, LINK, LINK_FIELD, LINK_FLAG, LINK_PARENT, NEED, RECORD_READ, RECORD_RESULT, type ReaderContext } from './json-scan.js';
import { TimeRange } from './time-range.js';
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

/** linkBySlots: the uuid was seen (the line adds nothing). */
const DUPLICATE = -100;

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

export interface ClaudeParserOptions {
  keepContent: boolean;
  /** A subagent file: every line is the subagent's own chain. */
  asSubagent?: boolean;
  /** Counting mode reads fields from the line bytes without JSON.parse (default true; false for equivalence tests). */
  skimFields?: boolean;
  /** About how many lines the file has (room is made for them at once); default small. */
  expectedLines?: number;
  /**
   * The scanner whose chunk region the file is read into (lines are then read in place).
   * Counting mode makes its own when none is given; its id tables live in the scanner.
   */
  scanner?: JsonScanner;
}

export interface ClaudeParseResult {
  builder: TimelineBuilder;
  sessionId?: string;
  /** `/branch` and `--fork-session` files: the session and message they were forked from. */
  forkedFrom?: { sessionId?: string; messageUuid?: string };
  /** The main chain starts at a parent (or, across a compaction, a logical parent) that is not in this file. */
  continuesFrom?: string;
  /** Uuid of the main chain's last record. */
  leafUuid?: string;
  cwd?: string;
  version?: string;
  offChainRecords: number;
  inlineSubagents: SubagentTranscript[];
  warnings: SessionWarning[];
}

export class ClaudeParser {
  private readonly records: ClaudeRecordTable;
  /** Record uuids; id number i is record i (a replayed uuid adds no record). */
  private readonly ids: IdSet;
  /**
   * Counting mode: the wasm reader that reads every line, and its context: the id tables in
   * its memory, where it files a record's ids as it reads them. It reads plain records whole
   * (JsonScanner.skimRecordAt); the rest are read here from its slots (recordSlots).
   */
  private readonly scanner: JsonScanner | undefined;
  private readonly reader: ReaderContext | undefined;
  /** The last record was linked by the scanner (its message number is in the link results). */
  private linked = false;
  /** Record model codes by the reader's model number; shared tool lists by its tool number. */
  private readonly modelCodes: number[] = [];
  private readonly toolLists: Block[][] = [];
  readonly warnings: SessionWarning[] = [];
  private readonly unknownTypes = new Map<string, { count: number; line: number }>();
  private duplicates = 0;
  private firstDuplicateLine = 0;
  private sessionId: string | undefined;
  /** Earliest and latest timestamp of any record (messages keep theirs only with content). */
  private readonly timeRange = new TimeRange();
  /** One string instance per distinct model / type / agent id (records hold many repeats). */
  private readonly interned = new Map<string, string>();
  private readonly toolBlocks = new Map<string, Block[]>();
  private lastUsage: SessionUsage | undefined;
  private forkedFrom: { sessionId?: string; messageUuid?: string } | undefined;
  private continuesFrom: string | undefined;
  private cwd: string | undefined;
  private version: string | undefined;

  constructor(
    readonly file: string,
    readonly options: ClaudeParserOptions,
  ) {
    const expected = options.expectedLines ?? 1024;
    this.scanner = options.keepContent || options.skimFields === false ? undefined : (options.scanner ?? JsonScanner.create());
    if (this.scanner) {
      this.reader = this.scanner.readerContext(expected, this.needs());
      this.ids = this.reader.uuids;
      this.records = new ClaudeRecordTable(options.keepContent, expected, this.reader.messages);
    } else {
      this.ids = new IdTable(expected);
      // An API message spans several lines.
      this.records = new ClaudeRecordTable(options.keepContent, expected, new IdTable(expected >> 2));
    }
  }

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
    this.lineAt(lineNumber, bytes, 0, bytes.length);
  }

  /** A line at [start, end) of a chunk being read (valid UTF-8; see LineSink.lineAt). */
  lineAt(lineNumber: number, chunk: Buffer, start: number, end: number): void {
    if (this.options.keepContent) {
      this.line(lineNumber, chunk.toString('utf8', start, end));
      return;
    }
    const reader = this.reader;
    const read = reader === undefined ? 0 : this.scanner!.skimRecordAt(chunk, start, end, reader);
    if (read <= 0) {
      this.line(lineNumber, skimJsonLine(chunk.subarray(start, end)));
      return;
    }
    try {
      if (read === RECORD_READ + LINK.ADDED) this.addRead(lineNumber, chunk);
      else if (read === RECORD_READ + LINK.DUPLICATE) {
        if (this.scanner!.fields[LINK_FIELD + 2]! & LINK_FLAG.VERSION) this.readVersion(chunk);
        this.duplicate(lineNumber);
      } else if (read === RECORD_READ + LINK.BY_CALLER) {
        useSlotsOf(this.scanner!);
        const version = this.version;
        this.recordSlots(lineNumber, chunk);
        this.afterJavaScript(version);
      } else throw new Error('no memory for more ids');
    } catch (error) {
      this.warn(lineNumber, `record skipped (${(error as Error).message.slice(0, 120)})`);
    }
  }

  /** What the wasm reader still leaves to recordSlots (NEED bits). */
  private needs(): number {
    let needs = this.options.asSubagent === true ? NEED.SUBAGENT : 0;
    if (this.sessionId === undefined) needs |= NEED.SESSION_ID;
    if (this.cwd === undefined) needs |= NEED.CWD;
    if (this.forkedFrom === undefined) needs |= NEED.FORK;
    return needs;
  }

  /**
   * After a line read here: the reader learns what is still needed and, when the version changed
   * (from `version`), forgets the one it kept (it then reports the next one it sees).
   */
  private afterJavaScript(version: string | undefined): void {
    const reader = this.reader;
    if (reader === undefined) return;
    JsonScanner.setNeeds(reader, this.needs());
    if (this.version !== version) JsonScanner.forgetVersion(reader);
  }

  private readVersion(b: Buffer): void {
    useSlotsOf(this.scanner!);
    this.version = slotCached(b, SLOT.VERSION, CACHE.VERSION) ?? this.version;
  }

  /** Stores a record the wasm reader read whole (RECORD_RESULT): what recordSlots and readMessageSlots would store. */
  private addRead(lineNumber: number, b: Buffer): void {
    const r = this.scanner!.fields;
    const records = this.records;
    const index = records.count;
    const linkFlags = r[LINK_FIELD + 2]!;
    if (linkFlags & LINK_FLAG.VERSION) this.readVersion(b);
    let parent = r[LINK_FIELD]!;
    if (parent === LINK_PARENT.UNRESOLVED || linkFlags & LINK_FLAG.TIMESTAMP) {
      useSlotsOf(this.scanner!);
      if (parent === LINK_PARENT.UNRESOLVED) {
        parent = UNRESOLVED;
        records.unresolvedParents.set(index, b.toString('utf8', slotStart(SLOT.PARENT_UUID), slotEnd(SLOT.PARENT_UUID)));
      }
      if (linkFlags & LINK_FLAG.TIMESTAMP) this.seeTimestampSlot(b);
    }
    const type = r[LINK_FIELD + RECORD_RESULT.TYPE]!;
    records.add(lineNumber, parent, type, r[LINK_FIELD + RECORD_RESULT.FLAGS]!, undefined);
    records.kind[index] = r[LINK_FIELD + RECORD_RESULT.KIND]!;
    records.steps[index] = r[LINK_FIELD + RECORD_RESULT.STEPS]!;
    const tool = r[LINK_FIELD + RECORD_RESULT.TOOL]!;
    if (tool >= 0) records.setBlocks(index, this.toolLists[tool] ?? this.toolListOf(tool));
    if (type !== TYPE_ASSISTANT) return;
    records.messageId[index] = r[LINK_FIELD + 1]!;
    const model = r[LINK_FIELD + RECORD_RESULT.MODEL]!;
    if (model >= 0) records.model[index] = this.modelCodes[model] ?? this.modelCodeOf(model);
    if (r[LINK_FIELD + RECORD_RESULT.USAGE]) {
      this.storeUsage(index, r[LINK_FIELD + RECORD_RESULT.INPUT]!, r[LINK_FIELD + RECORD_RESULT.OUTPUT]!, r[LINK_FIELD + RECORD_RESULT.CACHE_READ]!, r[LINK_FIELD + RECORD_RESULT.CACHE_CREATION]!);
    }
  }

  private toolListOf(tool: number): Block[] {
    const list = this.toolList(this.reader!.tools.text(tool));
    this.toolLists[tool] = list;
    return list;
  }

  private modelCodeOf(model: number): number {
    const code = this.records.modelCode(this.reader!.models.text(model));
    this.modelCodes[model] = code;
    return code;
  }

  /** The lines of one API message repeat its usage: the object is only made when it changes. */
  private storeUsage(index: number, input: number, output: number, cached: number, written: number): void {
    const previous = this.lastUsage;
    const same =
      previous !== undefined &&
      previous.inputTokens === input &&
      previous.outputTokens === output &&
      previous.cachedInputTokens === cached &&
      previous.cacheWriteTokens === written &&
      previous.reasoningTokens === 0;
    const usage: SessionUsage = same ? previous : { inputTokens: input, outputTokens: output, cachedInputTokens: cached, cacheWriteTokens: written, reasoningTokens: 0 };
    this.records.setUsage(index, usage, same);
    if (!same) this.lastUsage = usage;
  }

  line(lineNumber: number, text: string): void {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      this.warn(lineNumber, `invalid JSON skipped (${(error as Error).message.slice(0, 120)})`);
      return;
    }
    const version = this.version;
    try {
      this.record(lineNumber, value);
    } catch (error) {
      // Defensive: a record of an unexpected shape must never stop the read.
      this.warn(lineNumber, `record skipped (${(error as Error).message.slice(0, 120)})`);
    }
    this.afterJavaScript(version);
  }

  /** One parsed line (JSON.parse); recordSlots is the same for lines the wasm reader described. */
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
    if (this.forkedFrom === undefined && isObject(value.forkedFrom)) this.noteFork(value.forkedFrom);
    this.cwd ??= str(value.cwd);
    this.version = str(value.version) ?? this.version;
    const typeCode = dagTypeCode(type);
    if (typeCode === 0) {
      if (!KNOWN_META_TYPES.has(type)) this.noteUnknown(lineNumber, type);
      return;
    }
    const records = this.records;
    const ids = this.ids;
    const index = records.count;
    const uuid = str(value.uuid);
    // Very old lines without ids: chained in file order.
    if (ids.findOrAddString(uuid ?? `line:${lineNumber}`) >= 0) {
      this.duplicate(lineNumber);
      return;
    }
    // From here on the id is in the table as number `index`: the record must be added.
    let parent: number;
    if (uuid === undefined) {
      parent = index - 1;
    } else {
      const link = value.parentUuid === null ? undefined : str(value.parentUuid);
      parent = link === undefined ? ROOT : ids.findString(link);
      if (link !== undefined && parent < 0) {
        parent = UNRESOLVED;
        records.unresolvedParents.set(index, link);
      }
    }
    const timestamp = str(value.timestamp);
    if (timestamp !== undefined) this.timeRange.seeString(timestamp);
    const sidechain = this.options.asSubagent === true || value.isSidechain === true;
    records.add(lineNumber, parent, typeCode, sidechain ? SIDECHAIN : 0, timestamp);
    const agentId = str(value.agentId);
    if (agentId !== undefined) records.agentId.set(index, this.intern(agentId));
    if (typeCode === TYPE_SYSTEM) this.readSystem(index, value);
    else if (typeCode === TYPE_USER || typeCode === TYPE_ASSISTANT) this.readMessage(index, typeCode, value);
  }

  /**
   * `record` for a line the wasm reader has described (claude-skim.ts), reading its slots
   * instead of a parsed object: the same decisions, in the same order, without building
   * the object. Only counting mode comes here. claude-skim.test.ts checks that both ways
   * give the same Session on fixtures and fuzzed transcripts.
   */
  private recordSlots(lineNumber: number, b: Buffer): void {
    const type = slotCached(b, SLOT.TYPE, CACHE.TYPE);
    if (type === undefined) {
      this.warn(lineNumber, 'record without a "type" field skipped');
      return;
    }
    if (this.sessionId === undefined) this.sessionId = slotString(b, SLOT.SESSION_ID);
    if (this.forkedFrom === undefined && slotKind(SLOT.FORKED_FROM) === KIND.OBJECT) this.noteFork(slotParsed(b, SLOT.FORKED_FROM));
    if (this.cwd === undefined) this.cwd = slotCached(b, SLOT.CWD, CACHE.CWD);
    this.version = slotCached(b, SLOT.VERSION, CACHE.VERSION) ?? this.version;
    const typeCode = dagTypeCode(type);
    if (typeCode === 0) {
      if (!KNOWN_META_TYPES.has(type)) this.noteUnknown(lineNumber, type);
      return;
    }
    const records = this.records;
    const index = records.count;
    // The scanner files the uuid, resolves the parent and sees the timestamp; the rest is done here.
    const reader = this.reader!;
    const linked = this.scanner!.link(reader.state, reader.uuids, reader.messages, typeCode === TYPE_ASSISTANT);
    if (linked === LINK.DUPLICATE) {
      this.duplicate(lineNumber);
      return;
    }
    let parent: number;
    if (linked === LINK.ADDED) {
      const results = this.scanner!.fields;
      parent = results[LINK_FIELD]!;
      if (parent === LINK_PARENT.UNRESOLVED) records.unresolvedParents.set(index, b.toString('utf8', slotStart(SLOT.PARENT_UUID), slotEnd(SLOT.PARENT_UUID)));
      else if (parent === LINK_PARENT.BY_CALLER) parent = this.escapedParent(index, b);
      if (results[LINK_FIELD + 2]! & LINK_FLAG.TIMESTAMP) this.seeTimestampSlot(b);
    } else {
      parent = this.linkBySlots(lineNumber, index, b);
      if (parent === DUPLICATE) return;
    }
    this.linked = linked === LINK.ADDED;
    const sidechain = this.options.asSubagent === true || slotKind(SLOT.IS_SIDECHAIN) === KIND.TRUE;
    records.add(lineNumber, parent, typeCode, sidechain ? SIDECHAIN : 0, undefined);
    const agentId = slotCached(b, SLOT.AGENT_ID, CACHE.AGENT_ID);
    if (agentId !== undefined) records.agentId.set(index, this.intern(agentId));
    if (typeCode === TYPE_SYSTEM) {
      // Rare: the generic reader, on the few fields it needs.
      this.readSystem(index, {
        subtype: slotValue(b, SLOT.SUBTYPE),
        logicalParentUuid: slotValue(b, SLOT.LOGICAL_PARENT),
        compactMetadata: slotKind(SLOT.COMPACT_METADATA) === KIND.OBJECT ? slotParsed(b, SLOT.COMPACT_METADATA) : undefined,
        microcompactMetadata: slotKind(SLOT.MICROCOMPACT_METADATA) === KIND.OBJECT ? slotParsed(b, SLOT.MICROCOMPACT_METADATA) : undefined,
      });
    } else if (typeCode === TYPE_USER || typeCode === TYPE_ASSISTANT) this.readMessageSlots(index, typeCode, b);
  }

  /**
   * What the scanner leaves to JavaScript: a record whose uuid is not a plain string (escaped,
   * or none: very old lines, numbered by line). Returns the parent, or DUPLICATE.
   */
  private linkBySlots(lineNumber: number, index: number, b: Buffer): number {
    const ids = this.ids;
    const uuidKind = slotKind(SLOT.UUID);
    if (ids.findOrAddString(slotString(b, SLOT.UUID) ?? `line:${lineNumber}`) >= 0) {
      this.duplicate(lineNumber);
      return DUPLICATE;
    }
    this.seeTimestampSlot(b);
    // Very old lines without ids: chained in file order.
    if (uuidKind !== KIND.ESCAPED_STRING) return index - 1;
    const parentKind = slotKind(SLOT.PARENT_UUID);
    if (parentKind === KIND.ESCAPED_STRING) return this.escapedParent(index, b);
    if (parentKind !== KIND.STRING) return ROOT;
    const from = slotStart(SLOT.PARENT_UUID);
    const to = slotEnd(SLOT.PARENT_UUID);
    const parent = ids.find(b, from, to);
    if (parent >= 0) return parent;
    this.records.unresolvedParents.set(index, b.toString('utf8', from, to));
    return UNRESOLVED;
  }

  private escapedParent(index: number, b: Buffer): number {
    const link = slotString(b, SLOT.PARENT_UUID)!;
    const parent = this.ids.findString(link);
    if (parent >= 0) return parent;
    this.records.unresolvedParents.set(index, link);
    return UNRESOLVED;
  }

  private seeTimestampSlot(b: Buffer): void {
    const kind = slotKind(SLOT.TIMESTAMP);
    if (kind === KIND.STRING) this.timeRange.seeBytes(b, slotStart(SLOT.TIMESTAMP), slotEnd(SLOT.TIMESTAMP));
    else if (kind === KIND.ESCAPED_STRING) this.timeRange.seeString(slotString(b, SLOT.TIMESTAMP)!);
  }

  /** readMessage + readBlocks (counting mode) on the wasm reader's slots. */
  private readMessageSlots(index: number, typeCode: number, b: Buffer): void {
    const records = this.records;
    if (slotKind(SLOT.MESSAGE) !== KIND.OBJECT) {
      this.warn(records.line[index]!, `${typeCode === TYPE_ASSISTANT ? 'assistant' : 'user'} record without a "message" object`);
      return;
    }
    const assistant = typeCode === TYPE_ASSISTANT;
    let hasText = false;
    let hasToolResult = false;
    let hasMedia = false;
    let firstText = '';
    let blocks: Block[] = NO_BLOCKS;
    const contentKind = slotKind(SLOT.CONTENT);
    if (contentKind === KIND.STRING || contentKind === KIND.ESCAPED_STRING) {
      // Assistant texts do not matter: not decoded.
      if (!assistant) {
        const text = slotText(b, SLOT.CONTENT)!;
        hasText = text.trim() !== '';
        firstText = text.slice(0, 200);
      }
    } else if (contentKind === KIND.ARRAY) {
      const count = blockCount();
      let calls: Block[] | undefined;
      for (let k = 0; k < count; k += 1) {
        const slot = blockSlot(k);
        if (slotKind(slot) !== KIND.OBJECT) continue;
        const blockType = slotCached(b, slot + 1, CACHE.BLOCK_TYPE) ?? 'unknown';
        if (blockType === 'text') {
          if (assistant) continue;
          const text = slotText(b, slot + 4) ?? '';
          if (text.trim() === '') continue;
          if (!hasText) firstText = text.slice(0, 200);
          hasText = true;
        } else if (blockType === 'tool_use' || blockType === 'server_tool_use') {
          // As countingBlocks would share them: one list per tool name, one block per name in longer lists.
          const one = this.toolList(slotCached(b, slot + 2, CACHE.BLOCK_NAME) ?? 'unknown');
          if (blocks === NO_BLOCKS) blocks = one;
          else {
            if (calls === undefined) calls = [blocks[0]!];
            calls.push(one[0]!);
          }
        } else if (blockType === 'tool_result') hasToolResult = true;
        else if (blockType === 'image' || blockType === 'document') hasMedia = true;
      }
      if (calls !== undefined) blocks = calls;
    }
    records.setBlocks(index, blocks);
    if (hasToolResult) records.flags[index]! |= TOOL_RESULT;
    if (assistant) {
      records.steps[index] = 1;
      const model = slotCached(b, SLOT.MODEL, CACHE.MODEL);
      const synthetic = slotKind(SLOT.IS_API_ERROR) === KIND.TRUE || model === '<synthetic>';
      if (synthetic) records.flags[index]! |= SYNTHETIC;
      else if (model !== undefined) records.setModel(index, model);
      const idKind = slotKind(SLOT.MESSAGE_ID);
      if (this.linked && idKind === KIND.STRING) records.messageId[index] = this.scanner!.fields[LINK_FIELD + 1]!;
      else if (idKind === KIND.STRING) records.messageId[index] = numberOf(records.messageIds, b, slotStart(SLOT.MESSAGE_ID), slotEnd(SLOT.MESSAGE_ID));
      else if (idKind === KIND.ESCAPED_STRING) records.messageId[index] = numberOfString(records.messageIds, slotString(b, SLOT.MESSAGE_ID)!);
      if (slotKind(SLOT.USAGE) === KIND.OBJECT) {
        this.storeUsage(index, num(slotValue(b, SLOT.INPUT_TOKENS)), num(slotValue(b, SLOT.OUTPUT_TOKENS)), num(slotValue(b, SLOT.CACHE_READ)), num(slotValue(b, SLOT.CACHE_CREATION)));
      }
      return;
    }
    records.steps[index] = hasText && !hasToolResult ? 1 : 0;
    let kind: MessageKind | undefined;
    if (slotKind(SLOT.IS_COMPACT_SUMMARY) === KIND.TRUE) kind = 'compaction_summary';
    else if (hasToolResult) kind = 'tool_result';
    else if (slotKind(SLOT.IS_META) === KIND.TRUE || isInjectedUserText(firstText)) kind = 'injected';
    else if (firstText.startsWith(CLAUDE_SUMMARY_OPENING)) kind = 'compaction_summary';
    else if (hasText || hasMedia) kind = 'human';
    records.kind[index] = kindCode(kind);
  }

  private noteFork(value: unknown): void {
    if (!isObject(value)) return;
    const from: { sessionId?: string; messageUuid?: string } = {};
    const session = str(value.sessionId);
    const message = str(value.messageUuid);
    if (session !== undefined) from.sessionId = session;
    if (message !== undefined) from.messageUuid = message;
    this.forkedFrom = from;
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
    const detail: SystemDetail = {};
    this.records.system.set(index, detail);
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
      // Texts do not matter here (and counting mode does not even decode them: claude-skim.ts).
      records.steps[index] = 1;
      const model = str(message.model);
      const synthetic = value.isApiErrorMessage === true || model === '<synthetic>';
      if (synthetic) records.flags[index]! |= SYNTHETIC;
      else if (model !== undefined) records.setModel(index, model);
      // Message ids are only compared: they are numbered by their bytes, never kept as strings.
      if (typeof message.id === 'string') records.messageId[index] = numberOfString(records.messageIds, message.id);
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
    // Each loop over the records is its own method: a loop optimized inside one long method made
    // V8 optimize (and then drop) the whole method again at each of the next loops.
    const { main, parentOf, hasChild } = this.links();
    const chain = this.mainChain(main, parentOf, hasChild);
    const onChain = new Uint8Array(this.records.count);
    for (let k = 0; k < chain.length; k += 1) onChain[chain[k]!] = 1;
    const ordered = this.spliceParallelResults(chain, main, parentOf, hasChild, onChain);
    this.build(builder, ordered);
    const offChainRecords = this.countOffChain(main, onChain);
    const inlineSubagents = this.options.asSubagent ? [] : this.inlineSubagents(parentOf);
    if (this.reader !== undefined) {
      // The timestamps the scanner kept (plain ASCII ones) join those seen here.
      for (const which of [0, 1] as const) {
        const kept = this.scanner!.linkBound(this.reader.state, which);
        if (kept !== undefined) this.timeRange.seeString(kept);
      }
    }
    builder.seeTimestamp(this.timeRange.earliest);
    builder.seeTimestamp(this.timeRange.latest);
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
    if (this.forkedFrom !== undefined) result.forkedFrom = this.forkedFrom;
    if (this.continuesFrom !== undefined) result.continuesFrom = this.continuesFrom;
    if (chain.length > 0) result.leafUuid = this.ids.text(chain.at(-1)!);
    if (this.cwd !== undefined) result.cwd = this.cwd;
    if (this.version !== undefined) result.version = this.version;
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
        const found = link === undefined ? -1 : this.ids.findString(link);
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
        this.continuesFrom = link;
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
      const list = byParent.get(parent) ?? [];
      list.push(i);
      byParent.set(parent, list);
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

  private build(builder: TimelineBuilder, chain: ArrayLike<number>): void {
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
          if (timestamp !== undefined) event.timestamp = timestamp;
          if (system.trigger !== undefined) event.trigger = system.trigger;
          if (system.preTokens !== undefined) event.preTokens = system.preTokens;
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
        if (!keep) {
          builder.countMessage('assistant', 'assistant', records.blocksOf(i), records.steps[i]!, model, usage);
          openMessageId = messageId;
          continue;
        }
        const input: Parameters<TimelineBuilder['addMessage']>[0] = { role: 'assistant', kind: 'assistant', blocks: this.ownBlocks(i), raw };
        input.uuid = this.ids.text(i);
        if (timestamp !== undefined) input.timestamp = timestamp;
        if (model !== undefined) input.model = model;
        if (usage !== undefined) input.usage = usage;
        builder.addMessage(input, records.steps[i]!);
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
      let message: ReturnType<TimelineBuilder['addMessage']>;
      if (keep) {
        const input: Parameters<TimelineBuilder['addMessage']>[0] = { role: 'user', kind, blocks: this.ownBlocks(i), raw, uuid: this.ids.text(i) };
        if (timestamp !== undefined) input.timestamp = timestamp;
        message = builder.addMessage(input, records.steps[i]!);
      } else message = builder.countMessage('user', kind, records.blocksOf(i), records.steps[i]!, undefined, undefined);
      if (kind === 'compaction_summary' && pendingCompaction) {
        pendingCompaction.summaryMessage = message.index;
        pendingCompaction.summaryAvailable = true;
      }
      pendingCompaction = undefined;
    }
  }

  /** With content a message owns its block list (continuation lines are appended to it); the shared empty list is never handed out. */
  private ownBlocks(i: number): Block[] {
    const blocks = this.records.blocksOf(i);
    return this.options.keepContent && blocks === NO_BLOCKS ? [] : blocks;
  }

  /** Inline `isSidechain` lines grouped by agentId, else by their root. */
  private inlineSubagents(parentOf: Int32Array): SubagentTranscript[] {
    const records = this.records;
    const side: number[] = [];
    for (let i = 0; i < records.count; i += 1) if (records.flags[i]! & SIDECHAIN) side.push(i);
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
      const list = groups.get(key) ?? [];
      list.push(i);
      groups.set(key, list);
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

/** The number of a message id in `ids`, adding it when new. */
function numberOf(ids: IdSet, bytes: Buffer, from: number, to: number): number {
  const found = ids.findOrAdd(bytes, from, to);
  return found >= 0 ? found : ids.count - 1;
}

function numberOfString(ids: IdSet, id: string): number {
  const found = ids.findOrAddString(id);
  return found >= 0 ? found : ids.count - 1;
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

