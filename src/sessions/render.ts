import { InvalidArgumentError } from '../core/errors.js';
import type { ChatMessage } from '../models/types.js';
import type { SessionContext } from './context.js';
import { mediaPlaceholder } from './media.js';
import { codePointLength, headCodePoints, pythonJsonDumps, tailCodePoints } from './text.js';
import type { Block, SessionMessage } from './types.js';

/** Reference literals (reference-digest A4.1, A4.2). */
export const ACKNOWLEDGEMENT = 'Acknowledged. How can I help continue this work?';
export const USER_HEADER = '--- USER ---';
export const ASSISTANT_HEADER = '--- ASSISTANT ---';
export const SUMMARY_HEADER = '--- COMPACTION SUMMARY (resumed session) ---';
export const DEFAULT_MAX_CHARS = 30_000;
export const DEFAULT_TOOL_PAYLOAD_CHARS = 200;

export type RenderMode = 'flat' | 'turns' | 'untruncated';
export const RENDER_MODES: readonly RenderMode[] = ['flat', 'turns', 'untruncated'];

export interface RenderOptions {
  mode?: RenderMode;
  /** Window in characters (code points); ignored by `untruncated`. Default 30,000. */
  maxChars?: number;
  /** Tool call inputs / results are cut to this many characters; `untruncated` keeps them whole. Default 200. */
  toolPayloadChars?: number;
  /** Render thinking blocks as `[thinking: …]` (the reference drops them). Default false. */
  includeThinking?: boolean;
  /** Render Codex developer messages as user text (the reference drops them). Default false. */
  includeDeveloper?: boolean;
  /** The assistant turn that follows the prefix. Default the reference acknowledgement. */
  acknowledgement?: string;
}

/** One rendered unit before windowing: a timeline message as role + text. */
export interface RenderedPart {
  role: 'user' | 'assistant';
  /** Text without any header. */
  text: string;
  summary: boolean;
  /** Timeline index (-1 for replacement-history messages). */
  messageIndex: number;
}

export interface RenderedPrefix {
  mode: RenderMode;
  /** Ready to send; the probe goes after these. Empty when the context is empty. */
  messages: ChatMessage[];
  /** Characters of context content (code points), not counting the acknowledgement turn. */
  chars: number;
  /** Timeline indices whose text is at least partly in the window (-1 = replacement history). */
  includedMessages: number[];
  /** True when the window cut content. */
  truncated: boolean;
  summaryIncluded: boolean;
  /** Ordinal of the last compaction before the position, if any. */
  compaction?: number;
  /** The parts actually in the window, in order (after cutting). */
  parts: RenderedPart[];
  /** Whether the last message is the appended acknowledgement turn. */
  acknowledgementAppended: boolean;
  /** The settings used, for manifests and for building matched reference contexts. */
  settings: RenderSettings;
  notes: string[];
}

export interface RenderSettings {
  mode: RenderMode;
  /** `null` = no window (untruncated). */
  maxChars: number | null;
  /** `null` = tool payloads kept whole. */
  toolPayloadChars: number | null;
  includeThinking: boolean;
  includeDeveloper: boolean;
  acknowledgement: string;
}

export function settingsOf(o: Resolved): RenderSettings {
  const finite = (n: number): number | null => (Number.isFinite(n) ? n : null);
  return { ...o, maxChars: finite(o.maxChars), toolPayloadChars: finite(o.toolPayloadChars) };
}

/** Render options that reproduce given settings. */
export function optionsOf(settings: RenderSettings): RenderOptions {
  const { maxChars, toolPayloadChars, ...options } = settings;
  return { ...options, ...(maxChars === null ? {} : { maxChars }), ...(toolPayloadChars === null ? {} : { toolPayloadChars }) };
}

/** Every option filled in; `untruncated` has infinite windows. */
export type Resolved = Required<RenderOptions>;

export function resolveRenderOptions(options: RenderOptions = {}): Resolved {
  const mode = options.mode ?? 'flat';
  if (!RENDER_MODES.includes(mode)) throw new InvalidArgumentError('mode', `must be one of ${RENDER_MODES.join(', ')}, got ${String(mode)}`);
  const maxChars = options.maxChars ?? DEFAULT_MAX_CHARS;
  if (!Number.isInteger(maxChars) || maxChars < 1) throw new InvalidArgumentError('maxChars', `must be a positive integer, got ${maxChars}`);
  const toolPayloadChars = options.toolPayloadChars ?? DEFAULT_TOOL_PAYLOAD_CHARS;
  if (!Number.isInteger(toolPayloadChars) || toolPayloadChars < 0) {
    throw new InvalidArgumentError('toolPayloadChars', `must be a non-negative integer, got ${toolPayloadChars}`);
  }
  return {
    mode,
    maxChars: mode === 'untruncated' ? Number.POSITIVE_INFINITY : maxChars,
    toolPayloadChars: mode === 'untruncated' ? Number.POSITIVE_INFINITY : toolPayloadChars,
    includeThinking: options.includeThinking ?? false,
    includeDeveloper: options.includeDeveloper ?? false,
    acknowledgement: options.acknowledgement ?? ACKNOWLEDGEMENT,
  };
}

/** Flattens one block the way the reference does (A4.1 step 5). */
export function blockText(block: Block, o: Pick<Resolved, 'toolPayloadChars' | 'includeThinking' | 'mode'>): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'tool_call': {
      const input = typeof block.input === 'string' ? block.input : pythonJsonDumps(block.input ?? {});
      return `[tool_use ${block.name}: ${cut(input, o.toolPayloadChars)}]`;
    }
    case 'tool_result': {
      const label = block.isError && o.mode !== 'flat' ? 'tool_result error' : 'tool_result';
      return `[${label}: ${cut(block.content, o.toolPayloadChars)}]`;
    }
    case 'thinking':
      return o.includeThinking && block.text.trim() !== '' ? `[thinking: ${block.text}]` : '';
    case 'other':
      // The model saw an image or document: a typed placeholder stands in for its bytes.
      return block.kind === 'image' || block.kind === 'document' ? mediaPlaceholder(block) : '';
    default:
      return '';
  }
}

function cut(text: string, n: number): string {
  return Number.isFinite(n) ? headCodePoints(text, n) : text;
}

/**
 * Each context message as a part; blank ones are skipped (as the reference does).
 * `flat` makes one part per transcript line, as the reference (one API message split
 * over several lines gives several `--- ASSISTANT ---` parts); the other modes one per message.
 */
export function toParts(context: SessionContext, options: RenderOptions = {}): RenderedPart[] {
  const o = resolveRenderOptions(options);
  const parts: RenderedPart[] = [];
  for (const m of context.messages) {
    if (m.role === 'system' && !o.includeDeveloper) continue;
    for (const blocks of o.mode === 'flat' ? blocksByLine(m) : [m.blocks]) {
      const text = blocks
        .map((b) => blockText(b, o))
        .filter((t) => t !== '')
        .join('\n');
      if (text.trim() === '') continue;
      parts.push({
        role: m.role === 'assistant' ? 'assistant' : 'user',
        text,
        summary: m.kind === 'compaction_summary',
        messageIndex: m.index,
      });
    }
  }
  return parts;
}

function blocksByLine(m: SessionMessage): Block[][] {
  const lines = m.blockLines;
  if (!lines || lines.length !== m.blocks.length) return [m.blocks];
  const groups: Block[][] = [];
  let current = -1;
  for (let i = 0; i < m.blocks.length; i += 1) {
    if (lines[i] !== current) {
      groups.push([]);
      current = lines[i]!;
    }
    groups.at(-1)!.push(m.blocks[i]!);
  }
  return groups;
}

/** Renders a context in one of the three modes (pure). */
export function renderContext(context: SessionContext, options: RenderOptions = {}): RenderedPrefix {
  const o = resolveRenderOptions(options);
  const parts = toParts(context, options);
  const rendered = renderResolved(parts, o);
  if (context.compaction) rendered.compaction = context.compaction.ordinal;
  rendered.notes.push(...context.notes);
  return rendered;
}

/** Renders already-built parts (the shuffled-real control re-renders shuffled parts). */
export function renderParts(parts: RenderedPart[], options: RenderOptions = {}): RenderedPrefix {
  return renderResolved(parts, resolveRenderOptions(options));
}

function renderResolved(parts: RenderedPart[], o: Resolved): RenderedPrefix {
  return o.mode === 'flat' ? renderFlat(parts, o) : renderTurns(parts, o);
}

function flatPart(part: RenderedPart): string {
  const header = part.summary ? SUMMARY_HEADER : part.role === 'assistant' ? ASSISTANT_HEADER : USER_HEADER;
  return `${header}\n${part.text}`;
}

function renderFlat(parts: RenderedPart[], o: Resolved): RenderedPrefix {
  const pieces = parts.map(flatPart);
  const full = pieces.join('\n\n');
  const fullChars = codePointLength(full);
  const truncated = fullChars > o.maxChars;
  const text = truncated ? tailCodePoints(full, o.maxChars) : full;
  const chars = truncated ? o.maxChars : fullChars;
  const kept = parts.slice(firstInTail(pieces, chars));
  return {
    mode: 'flat',
    messages:
      text === ''
        ? []
        : [
            { role: 'user', content: text },
            { role: 'assistant', content: o.acknowledgement },
          ],
    chars,
    includedMessages: kept.map((p) => p.messageIndex),
    truncated,
    summaryIncluded: kept.some((p) => p.summary) && (!truncated || text.includes(SUMMARY_HEADER)),
    parts: kept,
    acknowledgementAppended: text !== '',
    settings: settingsOf(o),
    notes: [],
  };
}

/** The first of `texts` (joined by blank lines) that reaches into the last `budget` characters: walks back from the end. */
function firstInTail(texts: string[], budget: number): number {
  let remaining = budget;
  let first = texts.length;
  for (let i = texts.length - 1; i >= 0 && remaining > 0; i -= 1) {
    remaining -= codePointLength(texts[i]!) + (i > 0 ? 2 : 0);
    first = i;
  }
  return first;
}

interface Turn {
  role: 'user' | 'assistant';
  texts: string[];
  parts: RenderedPart[];
}

/** Consecutive parts of one role as one turn. */
export function toTurns(parts: RenderedPart[]): Turn[] {
  const turns: Turn[] = [];
  for (const part of parts) {
    const last = turns.at(-1);
    if (last && last.role === part.role) {
      last.texts.push(part.text);
      last.parts.push(part);
    } else turns.push({ role: part.role, texts: [part.text], parts: [part] });
  }
  return turns;
}

function renderTurns(parts: RenderedPart[], o: Resolved): RenderedPrefix {
  const turns = toTurns(parts);
  const contents = turns.map((t) => t.texts.join('\n\n'));
  let remaining = o.maxChars;
  const kept: Array<{ turn: Turn; content: string }> = [];
  let truncated = false;
  for (let i = turns.length - 1; i >= 0; i -= 1) {
    const turn = turns[i]!;
    const content = contents[i]!;
    const length = codePointLength(content);
    if (length <= remaining) {
      kept.unshift({ turn, content });
      remaining -= length;
      continue;
    }
    truncated = true;
    // A cut assistant turn would open the window: drop it so the window starts with the user.
    if (turn.role === 'user' && remaining > 0) {
      // Keep only the parts that reach into the tail.
      const firstPart = firstInTail(turn.texts, remaining);
      const partial: Turn = { role: turn.role, texts: turn.texts.slice(firstPart), parts: turn.parts.slice(firstPart) };
      kept.unshift({ turn: partial, content: tailCodePoints(content, remaining) });
    }
    break;
  }
  if (kept[0]?.turn.role === 'assistant') {
    kept.shift();
    truncated = true;
  }
  const messages: ChatMessage[] = kept.map(({ turn, content }) => ({ role: turn.role, content }));
  const acknowledgementAppended = messages.length > 0 && messages.at(-1)!.role === 'user';
  if (acknowledgementAppended) messages.push({ role: 'assistant', content: o.acknowledgement });
  const keptParts = kept.flatMap(({ turn }) => turn.parts);
  return {
    mode: o.mode,
    messages,
    chars: kept.reduce((n, k) => n + codePointLength(k.content), 0),
    includedMessages: keptParts.map((p) => p.messageIndex),
    truncated,
    summaryIncluded: keptParts.some((p) => p.summary),
    parts: keptParts,
    acknowledgementAppended,
    settings: settingsOf(o),
    notes: [],
  };
}
