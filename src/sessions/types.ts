import type { TokenCounts } from '../core/token-counts.js';

/**
 * The canonical session: what one Claude Code or Codex CLI transcript means for
 * the model, independent of the tool that wrote it.
 *
 * `messages` is the timeline of model-visible messages in the order they
 * happened on the main chain. The context the model had at a position is not
 * always a prefix of the timeline: compactions replace everything before them
 * with a summary, microcompactions clear old tool results, Codex rollbacks
 * remove turns. Those are `events`; `contextAt` (context.ts) replays them.
 */

export type SessionTool = 'claude' | 'codex';

/** Where a message came from: file and 1-based line. */
export interface RawRef {
  file: string;
  line: number;
}

export type Block =
  | { type: 'text'; text: string }
  | { type: 'thinking'; text: string; encrypted?: boolean }
  | { type: 'tool_call'; id?: string; name: string; input: unknown }
  | { type: 'tool_result'; toolCallId?: string; content: string; isError: boolean }
  /**
   * Images, documents, encrypted compaction items and unknown block types: never rendered as
   * their content. Images and documents render as a typed placeholder (`[image: image/png, 48 KB]`).
   */
  | { type: 'other'; kind: string; mediaType?: string; bytes?: number };

/**
 * What a message is, beyond its role:
 * - `human`: a prompt the person typed;
 * - `injected`: harness-written user content (slash commands, reminders, environment context, AGENTS.md …);
 * - `tool_result`: tool output returned to the model;
 * - `compaction_summary`: the summary the model sees after a compaction;
 * - `assistant`: model output;
 * - `developer`: Codex developer/system instructions.
 */
export type MessageKind = 'human' | 'injected' | 'tool_result' | 'compaction_summary' | 'assistant' | 'developer';

export type MessageRole = 'user' | 'assistant' | 'system';

/** Token counts summed over a message's transcript lines (the provider-call shape). */
export type SessionUsage = TokenCounts;

export const COUNTER_NAMES = ['agentSteps', 'userTurns', 'messages', 'assistantMessages'] as const;
export type CounterName = (typeof COUNTER_NAMES)[number];

/**
 * Counters (docs/decisions.md#d13):
 * - `agentSteps`: assistant records (one per transcript line, as the reference) plus user records
 *   with non-empty text and no tool result — the reference's headline counter;
 * - `userTurns`: human-typed prompts only;
 * - `messages`: model-visible messages (merged API messages);
 * - `assistantMessages`: model-visible assistant messages (the paper's "assistant-message deciles").
 */
export type Counters = Record<CounterName, number>;

export interface SessionMessage {
  /** Index in `Session.messages`; -1 for Codex replacement-history messages, which are not on the timeline. */
  index: number;
  role: MessageRole;
  kind: MessageKind;
  blocks: Block[];
  timestamp?: string;
  model?: string;
  usage?: SessionUsage;
  /** Every transcript line merged into this message. */
  raw: RawRef[];
  /** For merged messages: per block, the index in `raw` of the line it came from. */
  blockLines?: number[];
  /** Claude Code record uuid (of the first merged line). */
  uuid?: string;
  /** Codex fork: history replayed from the parent thread. */
  replayed?: boolean;
  /** Cumulative counter values once this message (and the records before it) happened. */
  counters: Counters;
  /** Number of compactions before this message. */
  segment: number;
}

export type CompactionKind = 'claude' | 'codex-local' | 'codex-remote';

export interface CompactionEvent {
  kind: 'compaction';
  /** 0-based compaction number. */
  ordinal: number;
  compaction: CompactionKind;
  raw: RawRef;
  timestamp?: string;
  trigger?: string;
  preTokens?: number;
  /** Number of timeline messages before the boundary. */
  atMessage: number;
  /** Counter values at the boundary (everything strictly before it). */
  counters: Counters;
  /** Index of the summary message on the timeline, when there is one. */
  summaryMessage?: number;
  /** False for Codex remote compaction (the summary is encrypted). */
  summaryAvailable: boolean;
  /** Codex local: earlier human prompts the rebuilt history keeps (indices into messages). */
  keptMessages?: number[];
  /** Codex remote: the replacement history that becomes the new context. */
  replacement?: SessionMessage[];
}

export interface MicrocompactionEvent {
  kind: 'microcompaction';
  raw: RawRef;
  timestamp?: string;
  atMessage: number;
  counters: Counters;
  clearedToolIds: string[];
}

export interface RollbackEvent {
  kind: 'rollback';
  raw: RawRef;
  timestamp?: string;
  atMessage: number;
  counters: Counters;
  numTurns: number;
  /** Messages [removedFrom, atMessage) leave the context. */
  removedFrom: number;
}

export type ContextEvent = CompactionEvent | MicrocompactionEvent | RollbackEvent;

export interface SubagentTranscript {
  agentId: string;
  /** `inline` (isSidechain lines in the session file), `legacy-file` (agent-<id>.jsonl beside), `subagents-dir`. */
  layout: 'inline' | 'legacy-file' | 'subagents-dir';
  file: string;
  agentType?: string;
  description?: string;
  toolUseId?: string;
  messages: SessionMessage[];
  counters: Counters;
}

export interface SessionWarning {
  file: string;
  line: number;
  message: string;
}

export interface Session {
  tool: SessionTool;
  file: string;
  /** Session / thread id from the transcript (Codex: first session_meta wins). */
  id?: string;
  cwd?: string;
  version?: string;
  /** The session (Codex: thread) this one was forked from (Claude Code: `/branch`, `--fork-session`). */
  forkedFrom?: string;
  /** Claude Code: the message of `forkedFrom` the fork starts after. */
  forkedFromMessage?: string;
  /**
   * Claude Code: the main chain starts at a parent uuid that is not in this file (the file
   * continues a conversation from another file). Its last record's uuid is `leafUuid`.
   */
  continuesFrom?: string;
  leafUuid?: string;
  /** Codex subagent rollouts: the spawning thread. */
  parentThreadId?: string;
  /** Codex: base instructions (system prompt) when recorded. */
  baseInstructions?: string;
  firstTimestamp?: string;
  lastTimestamp?: string;
  models: string[];
  messages: SessionMessage[];
  events: ContextEvent[];
  compactions: CompactionEvent[];
  subagents: SubagentTranscript[];
  /** Final counter values. */
  counters: Counters;
  usage: SessionUsage;
  /** Tool names called on the main chain, with counts. */
  toolsUsed: Record<string, number>;
  /** Lines read (including skipped ones) and bytes. */
  lines: number;
  bytes: number;
  /** Claude Code: DAG records not on the main chain (abandoned branches, rewinds). */
  offChainRecords: number;
  /** Codex forks: messages replayed from the parent. */
  replayedMessages: number;
  /** Whether message text was kept (`full`) or dropped after counting (`none`, for listing). */
  content: 'full' | 'none';
  warnings: SessionWarning[];
}

export function zeroCounters(): Counters {
  return { agentSteps: 0, userTurns: 0, messages: 0, assistantMessages: 0 };
}

export function zeroUsage(): SessionUsage {
  return { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
}
