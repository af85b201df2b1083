import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { discoverSessions, summarizeSessions } from './discover.js';
import { readSession } from './read.js';
import { FIXTURES } from './testing/fixtures.js';

const HOME = join(FIXTURES, 'claude-continuation');
const PROJECT = join(HOME, 'projects', '-home-dev-app');
const A = 'a11a0000-0000-4000-8000-000000000001';
const B = 'b22b0000-0000-4000-8000-000000000002';
const C = 'c33c0000-0000-4000-8000-000000000003';
const file = (id: string): string => join(PROJECT, `${id}.jsonl`);

describe('Claude Code sessions that continue or fork another one', () => {
  it('a file whose chain starts from another file names where it continues from, in both reading modes', async () => {
    for (const content of ['full', 'none'] as const) {
      const a = await readSession(file(A), { content });
      const b = await readSession(file(B), { content });
      expect(a.continuesFrom).toBeUndefined();
      expect(a.leafUuid).toBe('1a000000-0000-4000-8000-000000000004');
      expect(b.continuesFrom, content).toBe(a.leafUuid);
      expect(b.leafUuid).toBe('2b000000-0000-4000-8000-000000000004');
      expect(b.compactions).toHaveLength(1);
      expect(b.compactions[0]!.summaryAvailable).toBe(true);
      expect(b.forkedFrom).toBeUndefined();
    }
  });

  it('a /branch fork records the session and message it was forked from', async () => {
    for (const content of ['full', 'none'] as const) {
      const c = await readSession(file(C), { content });
      expect(c.forkedFrom, content).toBe(A);
      expect(c.forkedFromMessage).toBe('1a000000-0000-4000-8000-000000000002');
      expect(c.continuesFrom).toBe('1a000000-0000-4000-8000-000000000002');
      expect(c.counters.userTurns).toBe(1);
    }
  });

  it('sessions list links a continuation to the session it continues, and shows forks', async () => {
    const found = await discoverSessions({ claude: [join(HOME, 'projects')], codex: [] });
    const summaries = await summarizeSessions(found.sessions);
    const byId = new Map(summaries.map((s) => [s.id, s]));
    expect(byId.get(B)!.continues).toEqual({ file: file(A), id: A });
    expect(byId.get(A)!.continues).toBeUndefined();
    // A fork starts after an inner message, not after the last one: it is a fork, not a continuation.
    expect(byId.get(C)!.continues).toBeUndefined();
    expect(byId.get(C)!.forkedFrom).toBe(A);
  });
});
