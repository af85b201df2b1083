import { countTokens } from '../../models/token-count.js';
import { InputError } from '../../core/errors.js';
import type { ChatMessage } from '../../models/types.js';

/** An external preference pair (e.g. Tulu 3 preference mixture), normalised. */
export interface ExternalPair {
  id: string;
  /** Conversation up to the compared assistant turn. */
  prompt: ChatMessage[];
  chosen: string;
  rejected: string;
  chosenRating: number | null;
  rejectedRating: number | null;
  subjective: boolean;
  line: number;
}

const ROLES = new Set(['system', 'user', 'assistant']);

function messagesOf(value: unknown, file: string, line: number, field: string): ChatMessage[] {
  if (!Array.isArray(value) || value.length === 0) throw new InputError('must be a non-empty array of chat messages', { file, line, field });
  return value.map((entry, i) => {
    const m = entry as { role?: unknown; content?: unknown } | null;
    if (m === null || typeof m !== 'object' || typeof m.role !== 'string' || !ROLES.has(m.role) || typeof m.content !== 'string') {
      throw new InputError('must be {role: system|user|assistant, content: string}', { file, line, field: `${field}.${i}` });
    }
    return { role: m.role as ChatMessage['role'], content: m.content };
  });
}

function rating(value: unknown, file: string, line: number, field: string): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new InputError('must be a finite number', { file, line, field });
  return value;
}

export interface ExternalParseOptions {
  /** Boolean field that flags a pair as highly subjective (default `subjective`). */
  subjectiveField?: string;
}

/**
 * Reads a Tulu-format preference JSONL: per line `prompt` (string, optional when the
 * message lists carry it), `chosen` / `rejected` (chat-message lists ending with the compared
 * assistant turn, or plain strings), optional `id`, `chosen_rating` / `rejected_rating`
 * (`score_chosen` / `score_rejected` also accepted) and a subjective flag.
 */
export function parseExternalPreferences(text: string, file = '<preferences>', options: ExternalParseOptions = {}): ExternalPair[] {
  const subjectiveField = options.subjectiveField ?? 'subjective';
  const pairs: ExternalPair[] = [];
  for (const [i, untrimmed] of text.split('\n').entries()) {
    const raw = untrimmed.trim();
    if (raw === '') continue;
    const line = i + 1;
    let row: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(raw);
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      row = parsed as Record<string, unknown>;
    } catch (error) {
      throw new InputError(`not a JSON object (${(error as Error).message})`, { file, line });
    }
    const side = (key: 'chosen' | 'rejected'): { context: ChatMessage[]; reply: string } => {
      const value = row[key];
      if (typeof value === 'string') return { context: [], reply: value };
      const messages = messagesOf(value, file, line, key);
      const last = messages[messages.length - 1]!;
      if (last.role !== 'assistant') throw new InputError('the last message must be the assistant turn being compared', { file, line, field: key });
      return { context: messages.slice(0, -1), reply: last.content };
    };
    const chosen = side('chosen');
    const rejected = side('rejected');
    let prompt: ChatMessage[];
    if (chosen.context.length > 0) prompt = chosen.context;
    else if (typeof row.prompt === 'string' && row.prompt.trim() !== '') prompt = [{ role: 'user', content: row.prompt }];
    else if (Array.isArray(row.prompt)) prompt = messagesOf(row.prompt, file, line, 'prompt');
    else throw new InputError('no prompt: give `prompt` or include the user turn in `chosen`', { file, line, field: 'prompt' });
    const flag = row[subjectiveField];
    if (flag !== undefined && typeof flag !== 'boolean') throw new InputError('must be a boolean', { file, line, field: subjectiveField });
    const id = row.id ?? row.prompt_id;
    pairs.push({
      id: typeof id === 'string' || typeof id === 'number' ? String(id) : `line-${line}`,
      prompt,
      chosen: chosen.reply,
      rejected: rejected.reply,
      chosenRating: rating(row.chosen_rating ?? row.score_chosen, file, line, 'chosen_rating'),
      rejectedRating: rating(row.rejected_rating ?? row.score_rejected, file, line, 'rejected_rating'),
      subjective: flag === true,
      line,
    });
  }
  return pairs;
}

export type ExternalDropReason = 'length_mismatch' | 'tie' | 'subjective';

export interface ExternalFilterResult {
  kept: ExternalPair[];
  dropped: Record<ExternalDropReason, number>;
}

/**
 * The paper's filters on external pairs (§5.1, App. I.1), in this order: highly subjective
 * (flagged), ties (equal ratings, or identical responses), length mismatch (|tokens(y⁺) −
 * tokens(y⁻)| > maxTokenDifference, o200k tokens; default 20). Each pair is counted once,
 * under the first filter that drops it.
 */
export function filterExternalPairs(pairs: readonly ExternalPair[], maxTokenDifference = 20): ExternalFilterResult {
  const dropped: Record<ExternalDropReason, number> = { subjective: 0, tie: 0, length_mismatch: 0 };
  const kept: ExternalPair[] = [];
  for (const pair of pairs) {
    if (pair.subjective) dropped.subjective++;
    else if (
      pair.chosen.trim() === pair.rejected.trim() ||
      (pair.chosenRating !== null && pair.rejectedRating !== null && pair.chosenRating === pair.rejectedRating)
    ) {
      dropped.tie++;
    } else if (Math.abs(countTokens(pair.chosen) - countTokens(pair.rejected)) > maxTokenDifference) dropped.length_mismatch++;
    else kept.push(pair);
  }
  return { kept, dropped };
}
