import { countTokens, countTokensSliced } from './token-count.js';
import type { ChatMessage } from './types.js';

/**
 * The prompt token count a `sim:` model reports (usage.inputTokens): o200k tokens of the messages'
 * contents joined by newlines. A megabyte prompt takes tens of ms of BPE work and allocates a young
 * object per pre-token, so a reward server counts it in the worker thread that built the prompt
 * (reward-label-prompt.ts) and records the count here on the message list; the sim adapter then
 * takes it instead of counting on the thread that answers `/health`.
 */
interface Primed {
  roles: string[];
  contents: string[];
  tokens: number;
}

const primed = new WeakMap<readonly ChatMessage[], Primed>();

/** The text whose tokens are counted: the contents joined by newlines. */
export function promptText(messages: readonly ChatMessage[]): string {
  return messages.map((m) => m.content).join('\n');
}

/** countTokens(promptText(messages)), where the messages were built (all at once). */
export function countPromptTokens(messages: readonly ChatMessage[]): number {
  return countTokens(promptText(messages));
}

/** Records `tokens` as the prompt token count of this very list, while its messages keep these roles and contents. */
export function primePromptTokens(messages: readonly ChatMessage[], tokens: number): void {
  primed.set(messages, { roles: messages.map((m) => m.role), contents: messages.map((m) => m.content), tokens });
}

/**
 * The prompt token count of `messages`: the primed count when the list is unchanged since, else
 * counted here a slice at a time with yields in between (countTokensSliced: the same count).
 */
export async function promptTokens(messages: readonly ChatMessage[]): Promise<number> {
  const entry = primed.get(messages);
  if (
    entry !== undefined &&
    entry.contents.length === messages.length &&
    messages.every((m, i) => m.content === entry.contents[i] && m.role === entry.roles[i])
  ) {
    return entry.tokens;
  }
  return countTokensSliced(promptText(messages));
}
