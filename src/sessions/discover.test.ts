import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultRoots, discoverSessions, selectSummaries, type SessionSummary, summarizeSessions } from './discover.js';
import { CLAUDE_HOME, CLAUDE_MAIN, CODEX_ARCHIVED, CODEX_HOME, CODEX_MAIN } from './testing/fixtures.js';
import { ingestSession } from './ingest.js';
import { readSession } from './read.js';

const tmp = mkdtempSync(join(tmpdir(), 'echolens-sessions-discover-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const fixtureRoots = { claude: [join(CLAUDE_HOME, 'projects')], codex: [join(CODEX_HOME, 'sessions'), join(CODEX_HOME, 'archived_sessions')] };

describe('roots', () => {
  it('follows CLAUDE_CONFIG_DIR (comma-separated) and CODEX_HOME, with the documented defaults', () => {
    expect(defaultRoots({}, '/h')).toEqual({
      claude: ['/h/.config/claude/projects', '/h/.claude/projects'],
      codex: ['/h/.codex/sessions', '/h/.codex/archived_sessions'],
    });
    expect(defaultRoots({ XDG_CONFIG_HOME: '/x' }, '/h').claude).toEqual(['/x/claude/projects', '/h/.claude/projects']);
    expect(defaultRoots({ CLAUDE_CONFIG_DIR: '/a, /b,', CODEX_HOME: '/c,/d' }, '/h')).toEqual({
      claude: ['/a/projects', '/b/projects'],
      codex: ['/c/sessions', '/c/archived_sessions', '/d/sessions', '/d/archived_sessions'],
    });
  });
});

describe('discovery and listing', () => {
  it('finds sessions of both tools; subagent files are attached, not listed', async () => {
    const found = await discoverSessions(fixtureRoots);
    const names = found.sessions.map((s) => `${s.tool}:${basename(s.file)}`).sort();
    expect(names).toEqual([
      'claude:5e55a000-0000-4000-8000-000000000001.jsonl',
      'claude:5e55a000-0000-4000-8000-000000000002.jsonl',
      'codex:rollout-2025-08-01T09-00-00-0195a000-0000-7000-8000-000000000004.jsonl',
      'codex:rollout-2026-03-14T10-00-00-0195a000-0000-7000-8000-000000000003.jsonl.zst',
      'codex:rollout-2026-03-15T10-00-00-0195a000-0000-7000-8000-000000000001.jsonl',
      'codex:rollout-2026-03-15T11-00-00-0195a000-0000-7000-8000-000000000002.jsonl',
    ]);
    const main = found.sessions.find((s) => s.file === CLAUDE_MAIN)!;
    expect(main.subagentFiles.map((f) => basename(f)).sort()).toEqual(['agent-b2d4.jsonl', 'agent-legacy1.jsonl']);
    expect(found.warnings).toEqual([]);
    expect((await discoverSessions(fixtureRoots, { tool: 'codex' })).sessions.every((s) => s.tool === 'codex')).toBe(true);
  });

  it('prefers the plain rollout when a .jsonl.zst twin exists; missing roots are fine', async () => {
    const home = join(tmp, 'codex-twin');
    cpSync(join(CODEX_HOME, 'archived_sessions'), join(home, 'archived_sessions'), { recursive: true });
    cpSync(CODEX_MAIN, join(home, 'archived_sessions', basename(CODEX_ARCHIVED).replace(/\.zst$/, '')));
    const found = await discoverSessions({ claude: [join(tmp, 'none')], codex: [join(home, 'archived_sessions'), join(home, 'sessions')] });
    expect(found.sessions.map((s) => basename(s.file))).toEqual([basename(CODEX_ARCHIVED).replace(/\.zst$/, '')]);
    expect(found.warnings).toEqual([]);
  });

  it('summarizes with the golden counts and filters / sorts', async () => {
    const summaries = await summarizeSessions((await discoverSessions(fixtureRoots)).sessions);
    const main = summaries.find((s) => s.file === CLAUDE_MAIN)!;
    expect(main).toMatchObject({ agentSteps: 24, userTurns: 4, messages: 26, compactions: 1, subagents: 3, warnings: 3 });
    expect(main.size).toBe(statSync(CLAUDE_MAIN).size + sizeOfSubagents());
    expect(selectSummaries(summaries, { sort: 'steps' }).map((s) => s.agentSteps)).toEqual([24, 20, 5, 5, 3, 2]);
    expect(selectSummaries(summaries, { tool: 'claude' }).map((s) => s.tool)).toEqual(['claude', 'claude']);
    expect(
      selectSummaries(summaries, { minSteps: 6 })
        .map((s) => s.agentSteps)
        .sort(),
    ).toEqual([20, 24]);
    expect(selectSummaries(summaries, { since: '2026-03-15' }).every((s) => (s.lastTimestamp ?? '') >= '2026-03-15')).toBe(true);
    expect(selectSummaries(summaries, { since: '2026-03-15' })).toHaveLength(2);
    const last = selectSummaries(summaries).map((s) => s.lastTimestamp);
    expect([...last].sort().reverse()).toEqual(last);
  });

  it('counts a Codex subagent rollout on its parent instead of listing it', async () => {
    const home = join(tmp, 'codex-sub', 'sessions');
    cpSync(join(CODEX_HOME, 'sessions', '2026'), join(home, '2026'), { recursive: true });
    const child = join(home, 'rollout-2026-03-15T12-00-00-0195a000-0000-7000-8000-0000000000aa.jsonl');
    const meta = {
      id: '0195a000-0000-7000-8000-0000000000aa',
      cwd: '/w',
      source: { subagent: { thread_spawn: { parent_thread_id: '0195a000-0000-7000-8000-000000000001', depth: 1 } } },
    };
    writeFileSync(child, `${JSON.stringify({ timestamp: '2026-03-15T12:00:00Z', type: 'session_meta', payload: meta })}\n`);
    const summaries = await summarizeSessions((await discoverSessions({ claude: [], codex: [home] })).sessions);
    expect(summaries.map((s: SessionSummary) => s.id).sort()).toEqual(['0195a000-0000-7000-8000-000000000001', '0195a000-0000-7000-8000-000000000002']);
    expect(summaries.find((s) => s.id === '0195a000-0000-7000-8000-000000000001')!.subagents).toBe(1);
  });
});

function sizeOfSubagents(): number {
  const dir = join(CLAUDE_HOME, 'projects', '-home-dev-shop');
  return statSync(join(dir, 'agent-legacy1.jsonl')).size + statSync(join(dir, '5e55a000-0000-4000-8000-000000000001', 'subagents', 'agent-b2d4.jsonl')).size;
}

describe('ingest', () => {
  it('copies content-addressed, never touches the source, is idempotent and keeps subagents attachable', async () => {
    const into = join(tmp, 'store');
    const before = readFileSync(CLAUDE_MAIN);
    const first = await ingestSession(CLAUDE_MAIN, { into });
    expect(first.alreadyPresent).toBe(false);
    expect(basename(first.dest)).toMatch(/^claude-[0-9a-f]{16}\.jsonl$/);
    expect(readFileSync(first.dest)).toEqual(before);
    expect(readFileSync(CLAUDE_MAIN)).toEqual(before);
    expect(first.subagents.map((f) => basename(f)).sort()).toEqual(['agent-b2d4.jsonl', 'agent-legacy1.jsonl']);
    const second = await ingestSession(CLAUDE_MAIN, { into });
    expect(second).toMatchObject({ alreadyPresent: true, dest: first.dest, sha256: first.sha256 });
    const sidecar = JSON.parse(readFileSync(first.dest.replace(/\.jsonl$/, '.source.json'), 'utf8'));
    expect(sidecar).toMatchObject({ source: CLAUDE_MAIN, tool: 'claude', sha256: first.sha256, sessionId: '5e55a000-0000-4000-8000-000000000001' });
    const copy = await readSession(first.dest);
    expect(copy.counters).toEqual((await readSession(CLAUDE_MAIN)).counters);
    expect(copy.subagents.map((a) => a.agentId).sort()).toEqual(['a7c1', 'b2d4', 'legacy1']);
    const zst = await ingestSession(CODEX_ARCHIVED, { into });
    expect(basename(zst.dest)).toMatch(/^codex-[0-9a-f]{16}\.jsonl\.zst$/);
    expect((await readSession(zst.dest)).counters.messages).toBe(2);
    expect(readdirSync(into).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });
});
