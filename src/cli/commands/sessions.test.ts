import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLAUDE_HOME, CLAUDE_MAIN, CODEX_HOME, CODEX_MAIN } from '../../sessions/testing/fixtures.js';
import { runCliCaptured } from '../testing/run-cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'echolens-cli-sessions-'));
// The summary cache goes to a temp dir, never the real home.
const cacheDir = process.env.ECHOLENS_CACHE_DIR;
process.env.ECHOLENS_CACHE_DIR = join(tmp, 'cache');
afterAll(() => {
  if (cacheDir === undefined) delete process.env.ECHOLENS_CACHE_DIR;
  else process.env.ECHOLENS_CACHE_DIR = cacheDir;
  rmSync(tmp, { recursive: true, force: true });
});

const run = runCliCaptured;

const roots = ['--claude-dir', CLAUDE_HOME, '--codex-home', CODEX_HOME];

describe('echolens sessions', () => {
  it('list --json: both tools, sorted, filtered', async () => {
    const r = await run(['sessions', 'list', ...roots, '--json', '--sort', 'steps', '--min-steps', '5']);
    expect(r.code).toBe(0);
    const data = JSON.parse(r.out) as { sessions: Array<{ agentSteps: number; tool: string }> };
    expect(data.sessions.map((s) => [s.tool, s.agentSteps])).toEqual([
      ['claude', 24],
      ['codex', 20],
      ['codex', 5],
      ['codex', 5],
    ]);
  });

  it('list prints a table', async () => {
    const r = await run(['sessions', 'list', ...roots, '--tool', 'claude']);
    expect(r.code).toBe(0);
    expect(r.out.split('\n')[0]).toMatch(/^last active\s+tool\s+steps\s+turns/);
    expect(r.out).toContain('2 of 2 sessions');
  });

  it('inspect prints the summary and the context at a position', async () => {
    const r = await run(['sessions', 'inspect', CLAUDE_MAIN, '--at', 'agentSteps=19']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('counters:    agentSteps 24 · userTurns 4 · messages 26 · assistantMessages 10');
    expect(r.out).toContain('C1 line 32 (claude, auto, 155321 tokens before) at agentSteps 17');
    expect(r.out).toContain('--- COMPACTION SUMMARY (resumed session) ---');
    expect(r.out).toContain('=== assistant ===\nAcknowledged. How can I help continue this work?');
  });

  it('inspect --json --render turns', async () => {
    const r = await run(['sessions', 'inspect', CODEX_MAIN, '--json', '--at', 'userTurns=4', '--render', 'turns']);
    expect(r.code).toBe(0);
    const data = JSON.parse(r.out);
    expect(data.summary.counters.agentSteps).toBe(20);
    expect(data.summary.compactions).toHaveLength(2);
    expect(data.prefix.mode).toBe('turns');
    expect(data.prefix.end).toBe(17);
    expect(data.prefix.messages[0].role).toBe('user');
  });

  it('expected failures are one line and exit code 2', async () => {
    const beyond = await run(['sessions', 'inspect', CLAUDE_MAIN, '--at', 'agentSteps=999']);
    expect(beyond.code).toBe(2);
    expect(beyond.err).toMatch(/^echolens: position: .*beyond the session \(agentSteps total 24\)/);
    const clipped = await run(['sessions', 'inspect', CLAUDE_MAIN, '--at', 'agentSteps=999', '--clip']);
    expect(clipped.code).toBe(0);
    expect(clipped.err).toMatch(/clipped to the session end/);
    expect((await run(['sessions', 'inspect', join(tmp, 'missing.jsonl')])).err).toMatch(/missing\.jsonl: cannot open transcript/);
    expect((await run(['sessions', 'list', '--sort', 'size-ish'])).code).toBe(2);
    expect((await run(['sessions', 'inspect', CLAUDE_MAIN, '--render', 'fancy'])).err).toMatch(/--render/);
    expect((await run(['sessions', 'ingest'])).err).toMatch(/either a transcript file or --all/);
  });

  it('ingest --all copies every discovered session into --into', async () => {
    const into = join(tmp, 'store');
    const r = await run(['sessions', 'ingest', '--all', ...roots, '--into', into]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('6 copied, 0 already present');
    expect(readdirSync(into).filter((n) => /\.jsonl(\.zst)?$/.test(n))).toHaveLength(6);
    const again = await run(['sessions', 'ingest', CLAUDE_MAIN, '--into', into]);
    expect(again.out).toContain('0 copied, 1 already present');
  });
});
