import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readSession } from '../read.js';
import type { Session } from '../types.js';

/** Paths of the hand-written fixtures (shared by the sessions tests). */
export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', '__fixtures__');
export const CLAUDE_HOME = join(FIXTURES, 'claude-home');
export const CODEX_HOME = join(FIXTURES, 'codex-home');
export const CLAUDE_MAIN = join(CLAUDE_HOME, 'projects', '-home-dev-shop', '5e55a000-0000-4000-8000-000000000001.jsonl');
export const CLAUDE_NOTES = join(CLAUDE_HOME, 'projects', '-home-dev-notes', '5e55a000-0000-4000-8000-000000000002.jsonl');
export const CODEX_MAIN = join(CODEX_HOME, 'sessions', '2026', '03', '15', 'rollout-2026-03-15T10-00-00-0195a000-0000-7000-8000-000000000001.jsonl');
export const CODEX_FORK = join(CODEX_HOME, 'sessions', '2026', '03', '15', 'rollout-2026-03-15T11-00-00-0195a000-0000-7000-8000-000000000002.jsonl');
export const CODEX_ARCHIVED = join(CODEX_HOME, 'archived_sessions', 'rollout-2026-03-14T10-00-00-0195a000-0000-7000-8000-000000000003.jsonl.zst');
export const CODEX_BARE = join(CODEX_HOME, 'sessions', 'rollout-2025-08-01T09-00-00-0195a000-0000-7000-8000-000000000004.jsonl');

/** The main Claude Code and Codex fixture sessions, read in full. */
export async function readMainSessions(): Promise<{ claude: Session; codex: Session }> {
  return { claude: await readSession(CLAUDE_MAIN), codex: await readSession(CODEX_MAIN) };
}
