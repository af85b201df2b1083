/**
 * Small readers and namers the provider fakes share: the turns of a request body,
 * the text of content blocks, and a provider's error name for an HTTP status.
 */

import type { FakeRequest } from './fake-server.js';

/** The turns under a body field (`contents` for Gemini, `messages` for Bedrock); none when it is not an array. */
export function bodyTurns<T>(request: FakeRequest, field: string): T[] {
  const turns = request.body?.[field];
  return Array.isArray(turns) ? (turns as T[]) : [];
}

/** The `text` of content blocks, joined; a block without text adds nothing. */
export function blocksText(blocks: Array<{ text?: string }> | undefined): string {
  return (blocks ?? []).map((block) => (typeof block.text === 'string' ? block.text : '')).join('');
}

/** How a provider names errors: some statuses by name, then one name for any other 5xx and one for the rest. */
export function statusNamer(exact: Record<number, string>, server: string, client: string): (status: number) => string {
  return (status) => exact[status] ?? (status >= 500 ? server : client);
}
