import { copyDefined } from '../core/copy-defined.js';
import { addTokenCounts } from '../core/token-counts.js';
import type {
  Block,
  CompactionEvent,
  ContextEvent,
  Counters,
  MessageKind,
  MessageRole,
  RawRef,
  SessionMessage,
  SessionUsage,
  SessionWarning,
} from './types.js';
import { zeroCounters, zeroUsage } from './types.js';

export interface NewMessage {
  role: MessageRole;
  kind: MessageKind;
  blocks: Block[];
  raw: RawRef;
  timestamp?: string;
  model?: string;
  usage?: SessionUsage;
  uuid?: string;
  replayed?: boolean;
}

/**
 * Builds the message timeline and its counters, shared by both readers.
 * With `keepContent = false` messages are counted but not retained (listing
 * thousands of sessions, or a 300 MB transcript, in bounded memory).
 */
export class TimelineBuilder {
  readonly messages: SessionMessage[] = [];
  readonly events: ContextEvent[] = [];
  readonly compactions: CompactionEvent[] = [];
  readonly counters: Counters = zeroCounters();
  readonly usage: SessionUsage = zeroUsage();
  readonly models = new Set<string>();
  readonly toolsUsed: Record<string, number> = {};
  readonly warnings: SessionWarning[] = [];
  /** Indices of human prompts, for rollbacks. */
  private readonly humanIndices: number[] = [];
  private readonly rolledBack: Array<[number, number]> = [];
  private last: SessionMessage | undefined;
  private scratch: SessionMessage | undefined;
  private lastModel: string | undefined;
  private pendingSteps = 0;
  private messageCount = 0;
  segment = 0;
  firstTimestamp: string | undefined;
  lastTimestamp: string | undefined;
  replayedMessages = 0;

  constructor(
    readonly file: string,
    readonly keepContent: boolean,
  ) {}

  get lastMessage(): SessionMessage | undefined {
    return this.last;
  }

  seeTimestamp(timestamp: string | undefined): void {
    if (timestamp === undefined) return;
    if (this.firstTimestamp === undefined || timestamp < this.firstTimestamp) this.firstTimestamp = timestamp;
    if (this.lastTimestamp === undefined || timestamp > this.lastTimestamp) this.lastTimestamp = timestamp;
  }

  addMessage(input: NewMessage, agentSteps: number): SessionMessage {
    this.countOne(input.role, input.kind, agentSteps);
    const message = this.keepContent ? this.newMessage(input) : this.reusedMessage(input.role, input.kind);
    copyDefined(message, input, ['timestamp', 'model', 'uuid']);
    if (input.replayed) {
      message.replayed = true;
      this.replayedMessages += 1;
    }
    this.noteBlocks(input.blocks);
    if (input.model !== undefined) this.models.add(input.model);
    if (input.usage) this.addUsage(message, input.usage);
    this.seeTimestamp(input.timestamp);
    if (input.kind === 'human') this.humanIndices.push(message.index);
    this.messageCount += 1;
    this.last = message;
    if (this.keepContent) this.messages.push(message);
    return message;
  }

  /**
   * addMessage for counting mode (messages are not kept) without building a NewMessage:
   * a reader calls it once per model-visible record of large files.
   */
  countMessage(
    role: MessageRole,
    kind: MessageKind,
    blocks: Block[],
    agentSteps: number,
    model: string | undefined,
    usage: SessionUsage | undefined,
  ): SessionMessage {
    if (this.keepContent)
      return this.addMessage(usage === undefined ? { role, kind, blocks, raw: UNKEPT } : { role, kind, blocks, raw: UNKEPT, usage }, agentSteps);
    this.countOne(role, kind, agentSteps);
    const message = this.reusedMessage(role, kind);
    message.model = model;
    if (blocks.length > 0) this.noteBlocks(blocks);
    if (model !== undefined && model !== this.lastModel) {
      this.models.add(model);
      this.lastModel = model;
    }
    if (usage) this.addUsage(message, usage);
    if (kind === 'human') this.humanIndices.push(message.index);
    this.messageCount += 1;
    this.last = message;
    return message;
  }

  /** The counters one more message moves (steps held back by `bumpSteps` land on it). */
  private countOne(role: MessageRole, kind: MessageKind, agentSteps: number): void {
    const c = this.counters;
    c.agentSteps += agentSteps + this.pendingSteps;
    this.pendingSteps = 0;
    c.messages += 1;
    if (kind === 'human') c.userTurns += 1;
    if (role === 'assistant') c.assistantMessages += 1;
  }

  private newMessage(input: NewMessage): SessionMessage {
    return {
      index: this.messageCount,
      role: input.role,
      kind: input.kind,
      blocks: input.blocks,
      raw: [input.raw],
      counters: { ...this.counters },
      segment: this.segment,
    };
  }

  /**
   * Counting only: messages are not kept, and the last one is read only for its role, usage
   * and model. One object is reused (a 300 MB transcript has a hundred thousand messages).
   */
  private reusedMessage(role: MessageRole, kind: MessageKind): SessionMessage {
    this.scratch ??= { index: 0, role, kind, blocks: [], raw: [], counters: this.counters, segment: 0 };
    const message = this.scratch;
    message.index = this.messageCount;
    message.role = role;
    message.kind = kind;
    message.segment = this.segment;
    message.timestamp = undefined;
    message.model = undefined;
    message.uuid = undefined;
    message.usage = undefined;
    message.replayed = undefined;
    return message;
  }

  /** Appends blocks of a continuation line (same API message) to the last message. */
  mergeIntoLast(blocks: Block[], raw: RawRef, agentSteps: number, usage?: SessionUsage, model?: string, timestamp?: string): void {
    const message = this.last;
    if (!message) return;
    this.counters.agentSteps += agentSteps;
    message.counters.agentSteps = this.counters.agentSteps;
    if (this.keepContent) {
      // Remember which line each block came from: the flat rendering has one part per line, as the reference.
      message.blockLines ??= message.blocks.map(() => 0);
      for (const block of blocks) {
        message.blocks.push(block);
        message.blockLines.push(message.raw.length);
      }
      message.raw.push(raw);
    }
    this.noteBlocks(blocks);
    // Claude Code repeats the same usage on every line of one response: replace, don't add.
    if (usage) {
      if (message.usage) subtractUsage(this.usage, message.usage);
      this.addUsage(message, usage);
    }
    if (model !== undefined) {
      message.model ??= model;
      this.models.add(model);
    }
    this.seeTimestamp(timestamp);
  }

  /** Counts agent steps of records that are not model-visible (synthetic lines). */
  bumpSteps(agentSteps: number): void {
    const lastEvent = this.events.at(-1);
    const eventSinceLast = lastEvent !== undefined && lastEvent.atMessage === this.messageCount;
    if (this.last && !eventSinceLast) {
      this.counters.agentSteps += agentSteps;
      this.last.counters.agentSteps = this.counters.agentSteps;
    } else {
      this.pendingSteps += agentSteps;
    }
  }

  attachUsage(usage: SessionUsage): void {
    const message = this.last;
    if (message && message.role === 'assistant') {
      if (message.usage) subtractUsage(this.usage, message.usage);
      this.addUsage(message, usage);
    } else {
      addTokenCounts(this.usage, usage);
    }
  }

  compaction(event: Omit<CompactionEvent, 'kind' | 'ordinal' | 'atMessage' | 'counters'>): CompactionEvent {
    const full: CompactionEvent = {
      kind: 'compaction',
      ordinal: this.compactions.length,
      atMessage: this.messageCount,
      counters: { ...this.counters },
      ...event,
    };
    this.compactions.push(full);
    this.events.push(full);
    this.segment += 1;
    this.seeTimestamp(event.timestamp);
    return full;
  }

  microcompaction(raw: RawRef, clearedToolIds: string[], timestamp?: string): void {
    this.pushEvent({ kind: 'microcompaction', raw, atMessage: this.messageCount, counters: { ...this.counters }, clearedToolIds }, timestamp);
  }

  /** Codex `thread_rolled_back`: the last `numTurns` human turns leave the context. */
  rollback(raw: RawRef, numTurns: number, timestamp?: string): void {
    const contextStart = this.compactions.at(-1)?.atMessage ?? 0;
    let remaining = numTurns;
    let removedFrom = this.messageCount;
    for (let i = this.humanIndices.length - 1; i >= 0 && remaining > 0; i -= 1) {
      const index = this.humanIndices[i]!;
      if (index < contextStart) break;
      if (this.isRolledBack(index)) continue;
      removedFrom = index;
      remaining -= 1;
    }
    if (remaining > 0) {
      this.warnings.push({
        file: this.file,
        line: raw.line,
        message: `rollback of ${numTurns} turns but only ${numTurns - remaining} human turns in context; rolled back to the context start`,
      });
      removedFrom = contextStart;
    }
    this.rolledBack.push([removedFrom, this.messageCount]);
    this.pushEvent({ kind: 'rollback', raw, atMessage: this.messageCount, counters: { ...this.counters }, numTurns, removedFrom }, timestamp);
  }

  private pushEvent(event: ContextEvent, timestamp: string | undefined): void {
    copyDefined(event, { timestamp }, ['timestamp']);
    this.events.push(event);
  }

  /** Human prompts of the current context, newest first (for Codex local compaction). */
  recentHumanIndices(): number[] {
    const contextStart = this.compactions.at(-1)?.atMessage ?? 0;
    const out: number[] = [];
    for (let i = this.humanIndices.length - 1; i >= 0; i -= 1) {
      const index = this.humanIndices[i]!;
      if (index < contextStart) break;
      if (!this.isRolledBack(index)) out.push(index);
    }
    return out;
  }

  /**
   * Turns user message `index` into a human prompt or back into harness content after the fact
   * (Codex tells typed prompts by `user_message` events that follow them). The counters of the
   * later messages and context events follow; `wasHuman` is what it was counted as.
   */
  setHuman(index: number, human: boolean, wasHuman: boolean): void {
    if (human === wasHuman) return;
    const delta = human ? 1 : -1;
    this.counters.userTurns += delta;
    if (this.keepContent) {
      const message = this.messages[index];
      if (message) message.kind = human ? 'human' : 'injected';
      for (let i = index; i < this.messages.length; i += 1) this.messages[i]!.counters.userTurns += delta;
    }
    for (const event of this.events) if (event.atMessage > index) event.counters.userTurns += delta;
    if (human) {
      this.humanIndices.push(index);
      this.humanIndices.sort((a, b) => a - b);
    } else {
      const at = this.humanIndices.indexOf(index);
      if (at >= 0) this.humanIndices.splice(at, 1);
    }
  }

  messageAt(index: number): SessionMessage | undefined {
    return this.keepContent ? this.messages[index] : undefined;
  }

  private isRolledBack(index: number): boolean {
    return this.rolledBack.some(([from, to]) => index >= from && index < to);
  }

  private noteBlocks(blocks: Block[]): void {
    for (const block of blocks) {
      if (block.type === 'tool_call') this.toolsUsed[block.name] = (this.toolsUsed[block.name] ?? 0) + 1;
    }
  }

  private addUsage(message: SessionMessage, usage: SessionUsage): void {
    message.usage = usage;
    addTokenCounts(this.usage, usage);
  }
}

export const USAGE_FIELDS = ['inputTokens', 'outputTokens', 'cachedInputTokens', 'cacheWriteTokens', 'reasoningTokens'] as const;

function subtractUsage(total: SessionUsage, usage: SessionUsage): void {
  for (const field of USAGE_FIELDS) total[field] -= usage[field];
}

/** The line reference of messages that are not kept (counting mode). */
const UNKEPT: RawRef = { file: '', line: 0 };
