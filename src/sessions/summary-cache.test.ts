import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { discoverSessions, summarizeSessions } from './discover.js';
import { defaultCacheDir, SUMMARY_CACHE_FILE, SummaryCache } from './summary-cache.js';
import { CLAUDE_HOME, CODEX_HOME } from './testing/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'echolens-summary-cache-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A private copy of the fixture homes (the cache test appends to a file). */
function copyHomes(name: string): { claude: string[]; codex: string[] } {
  const dir = join(tmp, name);
  cpSync(CLAUDE_HOME, join(dir, 'claude'), { recursive: true });
  cpSync(CODEX_HOME, join(dir, 'codex'), { recursive: true });
  return { claude: [join(dir, 'claude', 'projects')], codex: [join(dir, 'codex', 'sessions'), join(dir, 'codex', 'archived_sessions')] };
}

describe('summary cache', () => {
  it('lives under ECHOLENS_CACHE_DIR, else XDG_CACHE_HOME, else ~/.cache', () => {
    expect(defaultCacheDir({ ECHOLENS_CACHE_DIR: '/c' }, '/h')).toBe('/c');
    expect(defaultCacheDir({ XDG_CACHE_HOME: '/x' }, '/h')).toBe('/x/echolens');
    expect(defaultCacheDir({}, '/h')).toBe('/h/.cache/echolens');
  });

  it('gives the same summaries as reading, and reads only files whose size or mtime changed', async () => {
    const roots = copyHomes('same');
    const cacheDir = join(tmp, 'cache-same');
    const found = await discoverSessions(roots);
    const plain = await summarizeSessions(found.sessions);

    const first = await SummaryCache.open(cacheDir);
    expect(first.reset).toBe('none yet');
    const cold = await summarizeSessions(found.sessions, { cache: first });
    await first.save();
    expect(cold).toEqual(plain);
    expect([first.hits, first.misses]).toEqual([0, found.sessions.length]);

    const second = await SummaryCache.open(cacheDir);
    const warm = await summarizeSessions(found.sessions, { cache: second });
    expect(warm).toEqual(plain);
    expect([second.hits, second.misses]).toEqual([found.sessions.length, 0]);

    // One file grows: only it is read again, and its counts change.
    const grown = found.sessions.find((s) => s.tool === 'claude' && s.file.endsWith('000000000002.jsonl'))!;
    const before = warm.find((s) => s.file === grown.file)!;
    appendFileSync(
      grown.file,
      `${JSON.stringify({ type: 'user', uuid: 'added-1', parentUuid: null, sessionId: before.id, timestamp: '2026-03-20T10:00:00.000Z', message: { role: 'user', content: 'One more question.' } })}\n`,
    );
    const rediscovered = await discoverSessions(roots);
    const third = await SummaryCache.open(cacheDir);
    const after = await summarizeSessions(rediscovered.sessions, { cache: third });
    expect([third.hits, third.misses]).toEqual([found.sessions.length - 1, 1]);
    expect(after.find((s) => s.file === grown.file)!.lastTimestamp).toBe('2026-03-20T10:00:00.000Z');
  });

  it('ignores a corrupt cache or one of another format, and rewrites it', async () => {
    const roots = copyHomes('corrupt');
    const found = await discoverSessions(roots);
    const plain = await summarizeSessions(found.sessions);
    for (const [name, content] of [
      ['garbage', '{"format": 1, "entries": [tru'],
      ['other-format', JSON.stringify({ format: 999, echolens: 'x', entries: {} })],
      ['bad-entry', JSON.stringify({ format: 1, echolens: 'wrong', entries: { [found.sessions[0]!.file]: { size: 'x' } } })],
    ] as const) {
      const dir = join(tmp, `cache-${name}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, SUMMARY_CACHE_FILE), content);
      const cache = await SummaryCache.open(dir);
      expect(cache.reset, name).toBeDefined();
      expect(await summarizeSessions(found.sessions, { cache })).toEqual(plain);
      await cache.save();
      const rewritten = JSON.parse(readFileSync(join(dir, SUMMARY_CACHE_FILE), 'utf8')) as { format: number; entries: Record<string, unknown> };
      expect(rewritten.format).toBe(1);
      expect(Object.keys(rewritten.entries).sort()).toEqual(found.sessions.map((s) => s.file).sort());
    }
  });

  it('an entry made for another size or mtime is not used', async () => {
    const dir = join(tmp, 'cache-keys');
    const cache = await SummaryCache.open(dir);
    const counted = { tool: 'claude' as const, models: [], userTurns: 1, agentSteps: 2, messages: 3, compactions: 0, inlineSubagents: 0, warnings: 0 };
    cache.set('/f.jsonl', 10, 1000, counted);
    expect(cache.get('/f.jsonl', 10, 1000)).toEqual(counted);
    expect(cache.get('/f.jsonl', 11, 1000)).toBeUndefined();
    expect(cache.get('/f.jsonl', 10, 1001)).toBeUndefined();
    expect(cache.get('/g.jsonl', 10, 1000)).toBeUndefined();
  });
});
