import { copyDefined } from '../core/copy-defined.js';
import { isInjectedUserText } from './classify.js';
import { JsonRecordParser } from './json-record-parser.js';
import { codexImage, mediaBlock, mediaPlaceholder } from './media.js';
import { isObject, num, str } from '../core/guards.js';
import { type NewMessage, TimelineBuilder } from './timeline.js';
import type { Block, MessageKind, RawRef, Session, SessionUsage, SessionWarning } from './types.js';

/**
 * Codex CLI rollout reader (pure: lines in, timeline out). Model-visible history
 * comes from `response_item` lines only (event_msg duplicates it). Consecutive
 * assistant-side items (reasoning, messages, tool calls) of one response are one
 * assistant message. The first `session_meta` is the identity; a later one starts
 * history replayed from a forked parent, marked `replayed` while its lines are
 * older than the fork. Rollbacks and compactions become context events.
 */

export const RESPONSE_ITEM_TYPES: ReadonlySet<string> = new Set([
  'message',
  'reasoning',
  'function_call',
  'function_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
  'local_shell_call',
  'web_search_call',
  'image_generation_call',
  'tool_search_call',
  'tool_search_output',
  'ghost_snapshot',
  'compaction',
  'compaction_summary',
  'context_compaction',
  'agent_message',
  'additional_tools',
]);
export const KNOWN_KINDS: ReadonlySet<string> = new Set([
  'session_meta',
  'response_item',
  'compacted',
  'turn_context',
  'event_msg',
  'inter_agent_communication',
  'inter_agent_communication_metadata',
  'token_usage_record',
  'world_state',
  'retained_context',
  'security_risk_score',
  'realtime_item',
]);

/** Codex keeps recent human prompts up to ~20k tokens when it rebuilds history locally (compact.rs). */
export const CODEX_KEPT_USER_CHARS = 80_000;

export interface CodexParserOptions {
  keepContent: boolean;
}

/** The session facts the rollout tells (`Session` fields), and its timeline. */
export interface CodexParseResult extends Pick<Session, (typeof SESSION_FACTS)[number]> {
  builder: TimelineBuilder;
  warnings: SessionWarning[];
}

/** The result's session facts, in the order they are copied onto the Session. */
export const SESSION_FACTS = ['id', 'cwd', 'version', 'forkedFrom', 'parentThreadId', 'baseInstructions'] as const;

interface Converted {
  side: 'assistant' | 'user' | 'developer' | 'skip';
  kind: MessageKind;
  blocks: Block[];
  steps: number;
  encryptedCompaction?: boolean;
  /** User messages: their text, trimmed (matched against `user_message` events). */
  text?: string;
}

/** A user message not yet matched to a `user_message` event. */
interface Candidate {
  index: number;
  text: string;
  human: boolean;
  /** Not harness text by its opening (`<environment_context>`, …): could be a typed prompt. */
  promptLike: boolean;
}

export class CodexParser extends JsonRecordParser {
  readonly builder: TimelineBuilder;
  private metaSeen = false;
  private forkTime: number | undefined;
  private replaying = false;
  private model: string | undefined;
  private assistantOpen = false;
  private result: Omit<CodexParseResult, 'builder' | 'warnings'> = {};
  /**
   * Typed prompts: Codex logs each as an `event_msg` `user_message` beside its `response_item`.
   * Once a rollout has such events, a user message is human exactly when one matches it; text
   * classification is only the fallback for rollouts without them.
   */
  private userEvents = false;
  private readonly candidates: Candidate[] = [];
  /** Events seen before their message. */
  private readonly earlyEvents: string[] = [];
  /** Every typed prompt's text (remote compaction histories repeat them). */
  private readonly typed = new Set<string>();
  /**
   * Matching by order when the texts differ (the two copies were redacted or edited
   * apart): Codex writes a typed prompt's `response_item` and its `user_message` event
   * next to each other, in either order. `justAdded` is the user message the previous
   * response item added (still unmatched); `eventWaiting` is an event no message matched,
   * with the prompt-like message just before it, until the next response item shows
   * whether the message after it is the closer one.
   */
  private justAdded: Candidate | null = null;
  private eventWaiting: { text: string; before: Candidate | null } | null = null;

  constructor(
    file: string,
    readonly options: CodexParserOptions,
  ) {
    super(file);
    this.builder = new TimelineBuilder(file, options.keepContent);
  }

  protected record(lineNumber: number, value: Record<string, unknown>): void {
    const raw: RawRef = { file: this.file, line: lineNumber };
    let type = str(value.type);
    let payload: unknown = value.payload;
    const timestamp = str(value.timestamp);
    // Bare era (before Sep 2025): no envelope.
    if (!isObject(payload)) {
      if (type !== undefined && RESPONSE_ITEM_TYPES.has(type)) {
        payload = value;
        type = 'response_item';
      } else if (type === undefined && value.record_type === 'state') {
        return;
      } else if (type === undefined && typeof value.id === 'string') {
        payload = value;
        type = 'session_meta';
      } else {
        this.warn(lineNumber, type === undefined ? 'record without "type" skipped' : `record "${type}" without a payload skipped`);
        return;
      }
    }
    const body = payload as Record<string, unknown>;
    if (type === undefined) {
      this.warn(lineNumber, 'record without "type" skipped');
      return;
    }
    if (this.replaying && type !== 'session_meta') this.updateReplay(timestamp);
    switch (type) {
      case 'session_meta':
        this.sessionMeta(body, timestamp);
        return;
      case 'turn_context':
        this.model = str(body.model) ?? this.model;
        return;
      case 'response_item':
        this.responseItem(body, raw, timestamp);
        return;
      case 'compacted':
        this.compacted(body, raw, timestamp);
        return;
      case 'event_msg':
        this.eventMsg(body, raw, timestamp);
        return;
      default:
        if (!KNOWN_KINDS.has(type)) this.noteUnknown(lineNumber, `record type "${type}"`);
        this.builder.seeTimestamp(timestamp);
    }
  }

  private updateReplay(timestamp: string | undefined): void {
    const t = timestamp === undefined ? Number.NaN : Date.parse(timestamp);
    if (this.forkTime === undefined || Number.isNaN(t) || t >= this.forkTime) this.replaying = false;
  }

  private sessionMeta(body: Record<string, unknown>, timestamp: string | undefined): void {
    if (this.metaSeen) {
      // A replayed parent meta: what follows is the parent's history.
      this.replaying = true;
      return;
    }
    this.metaSeen = true;
    const source = body.source;
    const spawn = isObject(source) && isObject(source.subagent) && isObject(source.subagent.thread_spawn) ? source.subagent.thread_spawn : {};
    const meta = {
      id: str(body.id),
      cwd: str(body.cwd),
      version: str(body.cli_version),
      forkedFrom: str(body.forked_from_id),
      baseInstructions: isObject(body.base_instructions) ? str(body.base_instructions.text) : str(body.instructions),
      parentThreadId: str(spawn.parent_thread_id),
    };
    copyDefined(this.result, meta, ['id', 'cwd', 'version', 'forkedFrom', 'baseInstructions', 'parentThreadId']);
    const created = str(body.timestamp) ?? timestamp;
    if (created !== undefined && !Number.isNaN(Date.parse(created))) this.forkTime = Date.parse(created);
    this.builder.seeTimestamp(timestamp ?? str(body.timestamp));
  }

  private responseItem(body: Record<string, unknown>, raw: RawRef, timestamp: string | undefined): void {
    const waiting = this.eventWaiting;
    this.eventWaiting = null;
    this.justAdded = null;
    const converted = this.convert(body, raw.line);
    // Not a user message: the event waiting can only have been the prompt before it.
    if (waiting !== null && converted.side !== 'user') this.settleWaiting(waiting, null);
    if (converted.side === 'skip') return;
    const b = this.builder;
    const assistant = converted.side === 'assistant';
    if (assistant && this.assistantOpen && b.lastMessage?.role === 'assistant') {
      b.mergeIntoLast(converted.blocks, raw, converted.steps, undefined, this.model, timestamp);
      return;
    }
    this.assistantOpen = assistant;
    const role = assistant ? 'assistant' : converted.side === 'developer' ? 'system' : 'user';
    const input: NewMessage = { role, kind: converted.kind, blocks: converted.blocks, raw };
    copyDefined(input, { timestamp, model: assistant ? this.model : undefined }, ['timestamp', 'model']);
    if (this.replaying) input.replayed = true;
    const message = b.addMessage(input, converted.steps);
    if (converted.side === 'user' && converted.text !== undefined) this.noteUserMessage(message.index, converted.text, converted.kind === 'human', waiting);
  }

  /** `waiting`: an unmatched event written just before this message. */
  private noteUserMessage(index: number, text: string, human: boolean, waiting: { text: string; before: Candidate | null } | null): void {
    const early = this.earlyEvents.findIndex((typed) => saysTyped(text, typed));
    if (early >= 0) {
      this.earlyEvents.splice(early, 1);
      if (waiting !== null) this.settleWaiting(waiting, null);
      this.builder.setHuman(index, true, human);
      this.settleCandidates();
      return;
    }
    const candidate: Candidate = { index, text, human, promptLike: !isInjectedUserText(text) };
    this.candidates.push(candidate);
    if (waiting !== null) {
      this.settleWaiting(waiting, candidate.promptLike ? candidate : null);
      if (!this.candidates.includes(candidate)) return;
    }
    this.justAdded = candidate;
  }

  /**
   * Gives an event no text matched its prompt by order: the prompt-like message written just
   * before it or just after it; when both are there, the one whose words are closer to the
   * event's (ties: the one before, the order Codex writes today).
   */
  private settleWaiting(waiting: { text: string; before: Candidate | null }, after: Candidate | null): void {
    const before = waiting.before !== null && this.candidates.includes(waiting.before) ? waiting.before : null;
    const chosen =
      before === null ? after : after === null ? before : wordOverlap(after.text, waiting.text) > wordOverlap(before.text, waiting.text) ? after : before;
    if (chosen === null) return;
    const at = this.earlyEvents.lastIndexOf(waiting.text);
    if (at >= 0) this.earlyEvents.splice(at, 1);
    this.matchByOrder(chosen);
  }

  /** The typed prompt whose event text differs from it: human, and its text counts as typed from now on. */
  private matchByOrder(candidate: Candidate): void {
    const at = this.candidates.indexOf(candidate);
    if (at >= 0) this.candidates.splice(at, 1);
    this.typed.add(candidate.text);
    this.builder.setHuman(candidate.index, true, candidate.human);
    this.settleCandidates();
  }

  /** A `user_message` event: the latest user message with its text is the typed prompt; earlier unmatched ones were the harness's. */
  private userMessageEvent(body: Record<string, unknown>): void {
    const text = (str(body.message) ?? '').trim();
    this.userEvents = true;
    this.typed.add(text);
    for (let k = this.candidates.length - 1; k >= 0; k -= 1) {
      const candidate = this.candidates[k]!;
      if (!saysTyped(candidate.text, text)) continue;
      this.builder.setHuman(candidate.index, true, candidate.human);
      this.candidates.splice(k, 1);
      this.settleCandidates();
      return;
    }
    // No text matches: its prompt is the user message next to it (settled at the next item).
    const adjacent = this.justAdded;
    this.justAdded = null;
    if (this.eventWaiting !== null) this.settleWaiting(this.eventWaiting, null);
    if (this.earlyEvents.length < 64) this.earlyEvents.push(text);
    this.eventWaiting = { text, before: adjacent?.promptLike ? adjacent : null };
  }

  private wasTyped(text: string): boolean {
    return this.typed.has(text) || [...this.typed].some((typed) => saysTyped(text, typed));
  }

  /** Unmatched user messages become harness content (`human = false`) once events tell prompts apart. */
  private settleCandidates(): void {
    for (const c of this.candidates.splice(0)) this.builder.setHuman(c.index, false, c.human);
  }

  /** One response item as blocks. Pure apart from warnings. */
  private convert(item: Record<string, unknown>, line: number): Converted {
    const keep = this.options.keepContent;
    const type = str(item.type) ?? '';
    const text = (t: string): string => (keep ? t : '');
    switch (type) {
      case 'message': {
        const role = str(item.role) ?? 'user';
        const parts = contentTexts(item.content);
        const joined = parts.join('\n');
        const blocks: Block[] = parts.filter((p) => p.trim() !== '').map((p) => ({ type: 'text', text: text(p) }));
        if (role === 'assistant') return { side: 'assistant', kind: 'assistant', blocks, steps: 1 };
        if (role === 'developer' || role === 'system') return { side: 'developer', kind: 'developer', blocks, steps: 0 };
        const hasText = joined.trim() !== '';
        const images = Array.isArray(item.content) ? item.content.filter((c): c is Record<string, unknown> => isObject(c) && c.type === 'input_image') : [];
        for (const image of images) blocks.push(mediaBlock(codexImage(image)));
        const hasImage = images.length > 0;
        if (!hasText && !hasImage) return { side: 'skip', kind: 'human', blocks, steps: 0 };
        const said = joined.trim();
        const kind: MessageKind = this.userEvents ? (this.wasTyped(said) ? 'human' : 'injected') : isInjectedUserText(joined) ? 'injected' : 'human';
        // Bare-era rollouts carry no cwd field: recover it from the environment context.
        if (this.result.cwd === undefined && kind === 'injected') {
          const cwd = /<cwd>([^<\n]+)<\/cwd>/.exec(joined)?.[1];
          if (cwd !== undefined) this.result.cwd = cwd;
        }
        return { side: 'user', kind, blocks, steps: hasText ? 1 : 0, text: said };
      }
      case 'reasoning': {
        const summary = Array.isArray(item.summary) ? item.summary : [];
        const parts = [...contentTexts(summary), ...contentTexts(item.content)];
        const block: Block = { type: 'thinking', text: text(parts.join('\n')) };
        if (parts.length === 0 && typeof item.encrypted_content === 'string') block.encrypted = true;
        return { side: 'assistant', kind: 'assistant', blocks: [block], steps: 1 };
      }
      case 'function_call': {
        const args = str(item.arguments) ?? '';
        let input: unknown = args;
        if (keep) {
          try {
            input = JSON.parse(args);
          } catch {
            input = args;
          }
        }
        return this.call(str(item.name) ?? 'unknown', keep ? input : undefined, item);
      }
      case 'custom_tool_call':
        return this.call(str(item.name) ?? 'unknown', keep ? item.input : undefined, item);
      case 'local_shell_call':
        return this.call('local_shell', keep ? item.action : undefined, item);
      case 'web_search_call':
        return this.call('web_search', keep ? item.action : undefined, item);
      case 'image_generation_call':
      case 'tool_search_call':
        return this.call(type, keep ? (item.arguments ?? item.action) : undefined, item);
      case 'function_call_output':
      case 'custom_tool_call_output':
      case 'tool_search_output': {
        const output = item.output;
        let content: string;
        let isError = false;
        if (typeof output === 'string') content = output;
        else if (Array.isArray(output)) content = outputTexts(output).join('\n');
        else if (isObject(output)) {
          content = str(output.content) ?? JSON.stringify(output);
          isError = output.success === false;
        } else content = '';
        const block: Block = { type: 'tool_result', content: text(content), isError };
        copyDefined(block, { toolCallId: str(item.call_id) }, ['toolCallId']);
        return { side: 'user', kind: 'tool_result', blocks: [block], steps: 0 };
      }
      case 'compaction':
      case 'compaction_summary':
      case 'context_compaction':
        return { side: 'skip', kind: 'assistant', blocks: [{ type: 'other', kind: 'encrypted_compaction' }], steps: 0, encryptedCompaction: true };
      case 'ghost_snapshot':
      case 'additional_tools':
        return { side: 'skip', kind: 'assistant', blocks: [], steps: 0 };
      case 'agent_message': {
        const t = str(item.message) ?? contentTexts(item.content).join('\n');
        return { side: 'assistant', kind: 'assistant', blocks: t.trim() === '' ? [] : [{ type: 'text', text: text(t) }], steps: 1 };
      }
      default:
        this.noteUnknown(line, `response item "${type}"`);
        return { side: 'skip', kind: 'assistant', blocks: [], steps: 0 };
    }
  }

  private call(name: string, input: unknown, item: Record<string, unknown>): Converted {
    const block: Block = { type: 'tool_call', name, input };
    copyDefined(block, { id: str(item.call_id) ?? str(item.id) }, ['id']);
    return { side: 'assistant', kind: 'assistant', blocks: [block], steps: 1 };
  }

  private compacted(body: Record<string, unknown>, raw: RawRef, timestamp: string | undefined): void {
    this.assistantOpen = false;
    const b = this.builder;
    const message = str(body.message) ?? '';
    const summarized = message.trim() !== '';
    const history = Array.isArray(body.replacement_history) ? body.replacement_history : undefined;
    if (!history && !summarized) this.warn(raw.line, 'compacted record with neither a summary nor a replacement history');
    const event: Parameters<TimelineBuilder['compaction']>[0] = history
      ? this.replacementEvent(history, raw, summarized)
      : { compaction: 'codex-local', raw, summaryAvailable: summarized, keptMessages: this.options.keepContent ? this.keptPrompts() : [] };
    copyDefined(event, { timestamp }, ['timestamp']);
    const compaction = b.compaction(event);
    if (event.compaction === 'codex-remote')
      this.warn(raw.line, 'remote compaction: the summary is encrypted; forks after it use the replacement history without it');
    // Local compaction: recent human prompts (budgeted) + the summary as a user message.
    if (history || !summarized) return;
    const input: NewMessage = { role: 'user', kind: 'compaction_summary', blocks: [{ type: 'text', text: this.options.keepContent ? message : '' }], raw };
    copyDefined(input, { timestamp }, ['timestamp']);
    compaction.summaryMessage = b.addMessage(input, 1).index;
  }

  /** Codex remote (encrypted) or local compaction with the history that replaces the context; its messages are not on the timeline (index -1). */
  private replacementEvent(history: unknown[], raw: RawRef, summarized: boolean): Parameters<TimelineBuilder['compaction']>[0] {
    let encrypted = false;
    let plainSummary = false;
    const local = new TimelineBuilder(this.file, true);
    let open = false;
    for (const item of history) {
      if (!isObject(item)) continue;
      const converted = this.convert(item, raw.line);
      if (converted.encryptedCompaction) encrypted = true;
      if (converted.side === 'skip') continue;
      if (converted.side === 'assistant' && open && local.lastMessage?.role === 'assistant') {
        local.mergeIntoLast(converted.blocks, raw, 0);
        continue;
      }
      open = converted.side === 'assistant';
      const kind = converted.side === 'user' && isSummaryText(converted.blocks) ? 'compaction_summary' : converted.kind;
      if (kind === 'compaction_summary') plainSummary = true;
      local.addMessage({ role: converted.side === 'developer' ? 'system' : converted.side, kind, blocks: converted.blocks, raw }, 0);
    }
    const replacement = local.messages.map((m) => ({ ...m, index: -1 }));
    return { compaction: encrypted ? 'codex-remote' : 'codex-local', raw, summaryAvailable: plainSummary || summarized, replacement };
  }

  /** The recent human prompts a local compaction keeps, oldest first, within Codex's budget. */
  private keptPrompts(): number[] {
    const kept: number[] = [];
    let budget = CODEX_KEPT_USER_CHARS;
    for (const index of this.builder.recentHumanIndices()) {
      const m = this.builder.messageAt(index);
      const chars = m ? m.blocks.reduce((n, block) => n + (block.type === 'text' ? block.text.length : 0), 0) : 0;
      if (chars > budget) break;
      budget -= chars;
      kept.unshift(index);
    }
    return kept;
  }

  private eventMsg(body: Record<string, unknown>, raw: RawRef, timestamp: string | undefined): void {
    const type = str(body.type);
    this.builder.seeTimestamp(timestamp);
    if (type === 'token_count') {
      const info = isObject(body.info) ? body.info : undefined;
      const last = info && isObject(info.last_token_usage) ? info.last_token_usage : undefined;
      if (last) this.builder.attachUsage(codexUsage(last));
    } else if (type === 'thread_rolled_back') {
      const turns = body.num_turns;
      if (typeof turns !== 'number' || !Number.isInteger(turns) || turns < 1) {
        this.warn(raw.line, 'thread_rolled_back without a positive integer num_turns; ignored');
        return;
      }
      this.assistantOpen = false;
      this.builder.rollback(raw, turns, timestamp);
    } else if (type === 'user_message') {
      this.assistantOpen = false;
      this.userMessageEvent(body);
    } else if (type === 'task_started' || type === 'turn_started') {
      this.assistantOpen = false;
    }
  }

  finish(): CodexParseResult {
    if (this.eventWaiting !== null) this.settleWaiting(this.eventWaiting, null);
    this.eventWaiting = null;
    if (this.userEvents) this.settleCandidates();
    this.warnRepeatedUnknowns();
    if (this.builder.models.size === 0 && this.model !== undefined) this.builder.models.add(this.model);
    return { builder: this.builder, ...this.result, warnings: [...this.warnings, ...this.builder.warnings] };
  }
}

function contentTexts(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.filter((c): c is { text: string } => isObject(c) && typeof c.text === 'string').map((c) => c.text);
}

/**
 * Whether a user message's text is the prompt an event says was typed: the same text, or a
 * message that wraps it (IDE context before it, image markers around it).
 */
function saysTyped(message: string, typed: string): boolean {
  return message === typed || (typed !== '' && message.includes(typed));
}

/** Share of the event's words (2+ letters or digits, any case) found in the message. */
function wordOverlap(message: string, typed: string): number {
  const words = (text: string) => new Set(text.toLowerCase().match(/[\p{L}\p{N}]{2,}/gu) ?? []);
  const said = words(message);
  const wanted = words(typed);
  if (wanted.size === 0) return 0;
  let found = 0;
  for (const word of wanted) if (said.has(word)) found += 1;
  return found / wanted.size;
}

/** Texts of a tool output's content items, images as their placeholders. */
function outputTexts(content: unknown[]): string[] {
  const out: string[] = [];
  for (const c of content) {
    if (!isObject(c)) continue;
    if (typeof c.text === 'string') out.push(c.text);
    else if (c.type === 'input_image') out.push(mediaPlaceholder(codexImage(c)));
  }
  return out;
}

function isSummaryText(blocks: Block[]): boolean {
  const first = blocks.find((b) => b.type === 'text');
  return first !== undefined && first.type === 'text' && first.text.trimStart().startsWith('Another language model started to solve this problem');
}

function codexUsage(usage: Record<string, unknown>): SessionUsage {
  const input = num(usage.input_tokens);
  const cached = num(usage.cached_input_tokens);
  return {
    inputTokens: Math.max(0, input - cached),
    outputTokens: num(usage.output_tokens),
    cachedInputTokens: cached,
    cacheWriteTokens: 0,
    reasoningTokens: num(usage.reasoning_output_tokens),
  };
}
