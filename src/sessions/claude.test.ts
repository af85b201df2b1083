import { describe, expect, it } from 'vitest';
import { CLAUDE_MAIN, CLAUDE_NOTES } from './testing/fixtures.js';
import { readSession } from './read.js';
import type { Block } from './types.js';

const texts = (blocks: Block[]): string[] => blocks.map((b) => (b.type === 'text' ? b.text : b.type));

describe('Claude Code reader on the hand-written fixture', () => {
  it('gives the golden counters (docs/decisions.md#d13)', async () => {
    const s = await readSession(CLAUDE_MAIN);
    expect(s.tool).toBe('claude');
    expect(s.id).toBe('5e55a000-0000-4000-8000-000000000001');
    expect(s.cwd).toBe('/home/dev/shop');
    expect(s.version).toBe('2.1.152');
    // 4 user records with text (3 injected + 1 human) + 3 lines of msg_01A + 3 of msg_02B + msg_03C + the synthetic
    // line + msg_04D + msg_05E + human + msg_07G + reminder = 17 before the compaction; summary + 2 human + 4 assistant after.
    expect(s.counters).toEqual({ agentSteps: 24, userTurns: 4, messages: 26, assistantMessages: 10 });
    expect(s.lines).toBe(47);
    expect(s.offChainRecords).toBe(2); // the rewound "Thanks. Also add a test." branch
    expect(s.models).toEqual(['claude-sonnet-4-5-20250929']);
    expect(s.toolsUsed).toEqual({ Read: 2, Grep: 1, Task: 1, Edit: 1, Write: 1, Bash: 1 });
    expect(s.firstTimestamp).toBe('2026-03-14T10:00:01.000Z');
    expect(s.lastTimestamp).toBe('2026-03-14T10:03:30.000Z');
  });

  it('merges the lines of one API message and keeps every raw line reference', async () => {
    const s = await readSession(CLAUDE_MAIN);
    const first = s.messages[4]!;
    expect(first.role).toBe('assistant');
    expect(first.raw.map((r) => r.line)).toEqual([7, 8, 9]);
    expect(first.raw.every((r) => r.file === CLAUDE_MAIN)).toBe(true);
    expect(first.blocks.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_call']);
    expect(first.blocks[2]).toEqual({ type: 'tool_call', id: 'toolu_01', name: 'Read', input: { file_path: '/home/dev/shop/src/cart.ts' } });
    // usage repeated on the three lines counts once
    expect(first.usage?.outputTokens).toBe(210);
    expect(first.counters.agentSteps).toBe(7);
  });

  it('splices a parallel tool result left on a side branch right after the assistant message', async () => {
    const s = await readSession(CLAUDE_MAIN);
    const seq = s.messages.slice(6, 10).map((m) => `${m.role}:${m.raw.map((r) => r.line).join('+')}`);
    expect(seq).toEqual(['assistant:12+13+14', 'user:15', 'user:16', 'assistant:17']);
    const results = s.messages.slice(7, 9).flatMap((m) => m.blocks);
    expect(results.map((b) => (b.type === 'tool_result' ? b.toolCallId : '?'))).toEqual(['toolu_02', 'toolu_03']);
  });

  it('classifies human prompts apart from harness-injected content and excludes synthetic lines', async () => {
    const s = await readSession(CLAUDE_MAIN);
    expect(s.messages.slice(0, 4).map((m) => m.kind)).toEqual(['injected', 'injected', 'injected', 'human']);
    expect(s.messages[16]!.kind).toBe('injected'); // <system-reminder>
    const human = s.messages.filter((m) => m.kind === 'human').map((m) => texts(m.blocks)[0]);
    expect(human).toEqual([
      'The checkout total is wrong when a coupon is applied. Can you find the bug?',
      'Actually, first explain why it was applied twice.',
      'Now add a regression test for the coupon.',
      'Great, commit it.',
    ]);
    const all = JSON.stringify(s.messages);
    expect(all).not.toContain('API Error: 529');
    expect(all).not.toContain('Thanks. Also add a test.');
    // the synthetic line still counts as an agent step (reference counter), on the message before it
    expect(s.messages[10]!.counters.agentSteps).toBe(12);
  });

  it('records the compaction with its counter positions and the summary that follows', async () => {
    const s = await readSession(CLAUDE_MAIN);
    expect(s.compactions).toHaveLength(1);
    const c = s.compactions[0]!;
    expect(c).toMatchObject({
      compaction: 'claude',
      ordinal: 0,
      trigger: 'auto',
      preTokens: 155321,
      atMessage: 17,
      summaryMessage: 17,
      summaryAvailable: true,
      raw: { file: CLAUDE_MAIN, line: 32 },
    });
    expect(c.counters).toEqual({ agentSteps: 17, userTurns: 2, messages: 17, assistantMessages: 6 });
    expect(s.messages[17]!.kind).toBe('compaction_summary');
    expect(s.messages[17]!.segment).toBe(1);
    expect(s.messages[16]!.segment).toBe(0);
    const micro = s.events.find((e) => e.kind === 'microcompaction');
    expect(micro).toMatchObject({ atMessage: 23, clearedToolIds: ['toolu_06'], raw: { line: 40 } });
  });

  it('keeps sidechains apart, in all three layouts', async () => {
    const s = await readSession(CLAUDE_MAIN);
    const subs = Object.fromEntries(s.subagents.map((a) => [a.agentId, a]));
    expect(Object.keys(subs).sort()).toEqual(['a7c1', 'b2d4', 'legacy1']);
    expect(subs.a7c1!.layout).toBe('inline');
    expect(subs.a7c1!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(subs.b2d4).toMatchObject({ layout: 'subagents-dir', agentType: 'code-reviewer', description: 'Review coupon test', toolUseId: 'toolu_rev1' });
    expect(subs.b2d4!.counters).toEqual({ agentSteps: 3, userTurns: 1, messages: 4, assistantMessages: 2 });
    expect(subs.legacy1!.layout).toBe('legacy-file');
    expect(JSON.stringify(s.messages)).not.toContain('toolu_s1');
  });

  it('warns with file:line for the unknown record, the malformed line and the replayed uuid, and reads the rest', async () => {
    const s = await readSession(CLAUDE_MAIN);
    const where = s.warnings.map((w) => `${w.line}: ${w.message.split(' (')[0]}`);
    expect(where).toEqual([
      '43: unknown record type "weird-future-record" skipped',
      '44: invalid JSON skipped',
      '42: 1 replayed line(s) with an already-seen uuid ignored',
    ]);
    expect(s.warnings.every((w) => w.file === CLAUDE_MAIN)).toBe(true);
  });

  it('counts a small session with an error tool result', async () => {
    const s = await readSession(CLAUDE_NOTES);
    expect(s.counters).toEqual({ agentSteps: 3, userTurns: 1, messages: 4, assistantMessages: 2 });
    const result = s.messages[2]!.blocks[0]!;
    expect(result).toMatchObject({ type: 'tool_result', isError: true, content: 'File does not exist.' });
    expect(s.subagents).toEqual([]);
    expect(s.warnings).toEqual([]);
  });

  it('counts the same in content "none" mode and keeps no messages', async () => {
    const full = await readSession(CLAUDE_MAIN);
    const none = await readSession(CLAUDE_MAIN, { content: 'none' });
    expect(none.messages).toEqual([]);
    expect(none.counters).toEqual(full.counters);
    expect(none.compactions.map((c) => c.counters)).toEqual(full.compactions.map((c) => c.counters));
    expect(none.toolsUsed).toEqual(full.toolsUsed);
    expect(none.usage).toEqual(full.usage);
  });
});
