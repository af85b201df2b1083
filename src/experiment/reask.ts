import { getOrInsert } from '../core/get-or-insert.js';
import type { ChatMessage } from '../models/types.js';

/**
 * Reading re-ask chains back. A judge or labeler cell whose output does not
 * parse is re-asked (attempt 1, 2, …), each attempt its own cell labelled
 * with `attempt` (runtime.ts, runParsedStage). Whoever reads a run back — the
 * analyses, the viewer, the live probe — resolves a chain the way the run did:
 * attempts in order, the first output that parses wins; a missing or
 * unfinished attempt ends the chain unanswered; after the last allowed
 * re-ask the item is invalid.
 */

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string };

export type ChainResolution<T, Cell> =
  | { status: 'ok'; value: T; attempts: number; cell: Cell }
  /** Every allowed attempt answered and none parsed; `cell` is the last one. */
  | { status: 'invalid'; error: string; attempts: number; cell: Cell }
  /**
   * The chain ends before an answer parsed (a call failed, or the run stopped).
   * `failed` = attempts that answered but did not parse; `lastFailure` = the last of them.
   */
  | { status: 'unanswered'; failed: number; lastFailure?: { error: string; cell: Cell } };

export interface ChainReader<Cell> {
  /** The answer of a finished cell, or null when it did not finish with text. */
  text(cell: Cell): string | null;
}

/**
 * Resolves one chain (attempt number → cell). `maxReasks` bounds the walk
 * (the config's re-ask count); without it the chain is read as far as it goes.
 */
export function resolveReaskChain<T, Cell>(
  chain: ReadonlyMap<number, Cell>,
  reader: ChainReader<Cell>,
  parse: (text: string) => ParseResult<T>,
  maxReasks = Number.POSITIVE_INFINITY,
): ChainResolution<T, Cell> {
  let lastFailure: { error: string; cell: Cell } | undefined;
  let failed = 0;
  for (let attempt = 0; attempt <= maxReasks; attempt++) {
    const cell = chain.get(attempt);
    const text = cell === undefined ? null : reader.text(cell);
    if (cell === undefined || text === null) {
      // Read without a bound, the chain simply ends after its last stored (failed) attempt.
      if (cell === undefined && lastFailure !== undefined && !Number.isFinite(maxReasks)) {
        return { status: 'invalid', error: lastFailure.error, attempts: failed, cell: lastFailure.cell };
      }
      return { status: 'unanswered', failed, ...(lastFailure ? { lastFailure } : {}) };
    }
    const parsed = parse(text);
    if (parsed.ok) return { status: 'ok', value: parsed.value, attempts: attempt + 1, cell };
    failed += 1;
    lastFailure = { error: parsed.error, cell };
  }
  // Only reachable with a finite bound after at least one failure.
  return { status: 'invalid', error: lastFailure?.error ?? '', attempts: failed, cell: lastFailure?.cell as Cell };
}

/** Groups cells into chains: `group(cell)` names the chain (null = not a re-asked cell), `attempt(cell)` its place. */
export function groupReaskChains<Cell>(
  cells: Iterable<Cell>,
  group: (cell: Cell) => string | null,
  attempt: (cell: Cell) => number,
): Map<string, Map<number, Cell>> {
  const chains = new Map<string, Map<number, Cell>>();
  for (const cell of cells) {
    const name = group(cell);
    if (name === null) continue;
    const chain = getOrInsert(chains, name, () => new Map<number, Cell>());
    chain.set(attempt(cell), cell);
  }
  return chains;
}

/**
 * Asks live (no store) until an answer parses: the first call, then up to
 * `retries` re-asks built by `reask`. Used where cells are not stored (the
 * viewer's live probe); stored runs use runParsedStage.
 */
export async function askUntilParsed<T>(
  ask: (messages: ChatMessage[]) => Promise<string>,
  first: ChatMessage[],
  parse: (text: string) => ParseResult<T>,
  reask: (previous: ChatMessage[], badOutput: string) => ChatMessage[],
  retries: number,
): Promise<{ ok: true; value: T; attempts: number } | { ok: false; error: string; attempts: number }> {
  let messages = first;
  let error = '';
  for (let attempt = 0; attempt <= retries; attempt++) {
    const output = await ask(messages);
    const parsed = parse(output);
    if (parsed.ok) return { ok: true, value: parsed.value, attempts: attempt + 1 };
    error = parsed.error;
    messages = reask(messages, output);
  }
  return { ok: false, error, attempts: retries + 1 };
}
