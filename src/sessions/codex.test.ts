import { describe, expect, it } from 'vitest';
import { contextAt } from './context.js';
import { CODEX_ARCHIVED, CODEX_BARE, CODEX_FORK, CODEX_MAIN } from './testing/fixtures.js';
import { readSession } from './read.js';
import type { Block } from './types.js';

const firstText = (blocks: Block[]): string => {
  const b = blocks.find((x) => x.type === 'text');
  return b && b.type === 'text' ? b.text : '';
};

describe('Codex CLI reader on the hand-written fixtures', () => {
  it('gives the golden counters and identity from the first session_meta', async () => {
    const s = await readSession(CODEX_MAIN);
    expect(s.tool).toBe('codex');
    expect(s.id).toBe('0195a000-0000-7000-8000-000000000001');
    expect(s.cwd).toBe('/home/dev/api');
    expect(s.version).toBe('0.46.0');
    expect(s.baseInstructions).toBe('You are Codex, a coding agent based on GPT-5.');
    expect(s.counters).toEqual({ agentSteps: 20, userTurns: 6, messages: 23, assistantMessages: 9 });
    expect(s.models).toEqual(['gpt-5-codex', 'gpt-5.1-codex']);
    expect(s.toolsUsed).toEqual({ shell: 2, apply_patch: 1, local_shell: 1 });
    // token_count last_token_usage: input minus cached
    expect(s.usage).toMatchObject({ inputTokens: 5200 - 4000 + (6100 - 5000) + 3000, cachedInputTokens: 9000, outputTokens: 310, reasoningTokens: 64 });
  });

  it('classifies developer, AGENTS.md and environment context apart from human prompts', async () => {
    const s = await readSession(CODEX_MAIN);
    expect(s.messages.slice(0, 4).map((m) => `${m.role}/${m.kind}`)).toEqual(['system/developer', 'user/injected', 'user/injected', 'user/human']);
    expect(s.messages.filter((m) => m.kind === 'human').map((m) => firstText(m.blocks))).toEqual([
      'The /health endpoint returns 500. Find out why.',
      'Also log the failure reason.',
      'Never mind the logging; run make test.',
      'Now add a readiness endpoint.',
      'Write a changelog entry.',
      'Thanks!',
    ]);
  });

  it('merges the items of one response into one assistant message with tool calls parsed', async () => {
    const s = await readSession(CODEX_MAIN);
    const m = s.messages[4]!;
    expect(m.raw.map((r) => r.line)).toEqual([8, 9]);
    expect(m.model).toBe('gpt-5-codex');
    expect(m.blocks[0]).toEqual({ type: 'thinking', text: '**Inspecting the health handler**' });
    expect(m.blocks[1]).toEqual({
      type: 'tool_call',
      id: 'call_A1',
      name: 'shell',
      input: { command: ['bash', '-lc', 'rg -n health src'], workdir: '/home/dev/api' },
    });
    expect(s.messages[7]!.blocks[0]).toMatchObject({ type: 'tool_result', toolCallId: 'call_A2', isError: false });
    expect(s.messages[21]!.model).toBe('gpt-5.1-codex');
  });

  it('applies thread_rolled_back: the rolled-back turn leaves the context', async () => {
    const s = await readSession(CODEX_MAIN);
    const rollback = s.events.find((e) => e.kind === 'rollback');
    expect(rollback).toMatchObject({ numTurns: 1, removedFrom: 9, atMessage: 11, raw: { line: 22 } });
    const before = contextAt(s, 11).messages.map((m) => m.index);
    expect(before).toContain(9);
    const after = contextAt(s, 13).messages.map((m) => m.index);
    expect(after).not.toContain(9);
    expect(after).not.toContain(10);
    expect(after.slice(-2)).toEqual([11, 12]);
  });

  it('rebuilds a local compaction as kept human prompts + the summary; a remote one as its replacement history', async () => {
    const s = await readSession(CODEX_MAIN);
    expect(s.compactions.map((c) => [c.compaction, c.atMessage, c.summaryAvailable, c.raw.line])).toEqual([
      ['codex-local', 15, true, 29],
      ['codex-remote', 20, false, 37],
    ]);
    expect(s.compactions[0]!.counters).toEqual({ agentSteps: 13, userTurns: 3, messages: 15, assistantMessages: 6 });
    expect(s.compactions[0]!.keptMessages).toEqual([3, 11]);
    const local = contextAt(s, 17);
    expect(local.messages.map((m) => m.index)).toEqual([3, 11, 15, 16]);
    expect(local.messages[2]!.kind).toBe('compaction_summary');
    const remote = contextAt(s, 22);
    expect(remote.messages.map((m) => `${m.index}:${m.kind}`)).toEqual(['-1:developer', '-1:injected', '-1:human', '-1:human', '20:human', '21:assistant']);
    expect(remote.notes.join(' ')).toContain('encrypted');
    expect(s.warnings.map((w) => w.line)).toEqual([37, 45, 46]);
  });

  it('marks history replayed from a forked parent and keeps the child identity', async () => {
    const s = await readSession(CODEX_FORK);
    expect(s.id).toBe('0195a000-0000-7000-8000-000000000002');
    expect(s.forkedFrom).toBe('0195a000-0000-7000-8000-000000000001');
    expect(s.messages.map((m) => m.replayed === true)).toEqual([true, true, true, false, false]);
    expect(s.replayedMessages).toBe(3);
  });

  it('reads a zstd-compressed archived rollout, streaming', async () => {
    const s = await readSession(CODEX_ARCHIVED);
    expect(s.tool).toBe('codex');
    expect(s.counters).toEqual({ agentSteps: 2, userTurns: 1, messages: 2, assistantMessages: 1 });
    expect(s.models).toEqual(['gpt-5']);
    expect(s.warnings).toEqual([]);
  });

  it('reads the bare (pre-envelope) era', async () => {
    const s = await readSession(CODEX_BARE);
    expect(s.id).toBe('0195a000-0000-7000-8000-000000000004');
    expect(s.cwd).toBe('/home/dev/api');
    expect(s.counters).toEqual({ agentSteps: 5, userTurns: 1, messages: 6, assistantMessages: 2 });
    expect(s.messages.slice(0, 3).map((m) => m.kind)).toEqual(['injected', 'injected', 'human']);
    expect(s.warnings).toEqual([]);
  });
});
