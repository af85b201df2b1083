import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSession } from './read.js';
import { CODEX_FORK, CODEX_MAIN, FIXTURES } from './testing/fixtures.js';
import { continuationLinks, linkSessionFamilies, UnitMerger } from './units.js';

const CONTINUATION_DIR = join(FIXTURES, 'claude-continuation', 'projects', '-home-dev-app');

describe('session families (one conversation = one unit)', () => {
  it('links Claude Code files that continue one conversation, by the same rule as `sessions list`', async () => {
    const files = readdirSync(CONTINUATION_DIR)
      .filter((f) => f.endsWith('.jsonl'))
      .sort();
    const sessions = await Promise.all(files.map((f) => readSession(join(CONTINUATION_DIR, f))));
    const links = continuationLinks(sessions);
    expect(links.size).toBeGreaterThan(0);
    const families = linkSessionFamilies(sessions.map((session, i) => ({ label: `S${i + 1}`, session }))).families();
    const reasons = families.flatMap((f) => f.reasons).join('\n');
    for (const [later, earlier] of links) expect(reasons).toContain(`S${later + 1} continuation of S${earlier + 1}`);
  });

  it('links a recorded fork, a copy of a session id, and an id-rewritten copy (same opening exchange)', async () => {
    const [main, fork] = await Promise.all([readSession(CODEX_MAIN), readSession(CODEX_FORK)]);
    const rewritten = { ...main, id: 'another-id', forkedFrom: undefined } as typeof main;
    const families = linkSessionFamilies([
      { label: 'S1', session: main },
      { label: 'S2', session: fork },
      { label: 'S3', session: main },
      { label: 'S4', session: rewritten },
    ]).families();
    expect(families).toHaveLength(1);
    expect(families[0]!.members).toEqual(['S1', 'S2', 'S3', 'S4']);
    const reasons = families[0]!.reasons.join('\n');
    expect(reasons).toMatch(/S2 (fork of|same opening exchange as) S1/);
    expect(reasons).toMatch(/S3 same session id as S1/);
    expect(reasons).toMatch(/S4 same opening exchange as S1/);
  });

  it('names a unit by its earliest member, whatever the order of joins', () => {
    const merger = new UnitMerger(['S1', 'S2', 'S3', 'S4']);
    merger.join('S4', 'S3', 'S4 x S3');
    merger.join('S3', 'S2', 'S3 x S2');
    expect(merger.find('S4')).toBe('S2');
    expect(merger.families()).toEqual([{ unit: 'S2', members: ['S2', 'S3', 'S4'], reasons: ['S4 x S3', 'S3 x S2'] }]);
    expect(merger.find('S1')).toBe('S1');
  });
});
