/**
 * Small readers and namers the provider fakes share: the text of a request body's turns and
 * messages, the text of content blocks, a provider's error name for an HTTP status, and the
 * model an answer names.
 */

import type { FakeReply, FakeRequest } from './fake-server.js';

/**
 * The text of the turns under a body field (`contents` for Gemini, `messages` for Bedrock; none when
 * it is not an array), each from the content blocks under its `blocks` field, joined by newlines.
 */
export function turnsText(request: FakeRequest, field: string, blocks: string): string {
  const turns = request.body?.[field];
  if (!Array.isArray(turns)) return '';
  return turns.map((turn: Record<string, unknown> | null) => blocksText(turn?.[blocks] as Parameters<typeof blocksText>[0])).join('\n');
}

/** The `text` of content blocks, joined; a block without text adds nothing. */
export function blocksText(blocks: Array<{ text?: string }> | undefined): string {
  return (blocks ?? []).map((block) => (typeof block.text === 'string' ? block.text : '')).join('');
}

/** How a provider names errors: some statuses by name, then one name for any other 5xx and one for the rest. */
export function statusNamer(exact: Record<number, string>, server: string, client: string): (status: number) => string {
  return (status) => exact[status] ?? (status >= 500 ? server : client);
}

/** The model an answer names: the reply's, else the request's, else `fallback`. */
export function answerModel(request: FakeRequest, reply: FakeReply, fallback: string): string {
  return reply.model ?? (typeof request.body?.model === 'string' ? request.body.model : fallback);
}

/** The content of each message of a chat body (content that is not a string as JSON). */
export function messageTexts(request: FakeRequest): string[] {
  const messages = Array.isArray(request.body?.messages) ? (request.body.messages as Array<{ content?: unknown }>) : [];
  return messages.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '')));
}
