import { describe, expect, it } from 'vitest';
import { buildPrefix } from './prefix.js';
import { readSession } from './read.js';
import { CLAUDE_MAIN } from './testing/fixtures.js';

describe("the reference's context semantics, as options (defaults unchanged)", () => {
  it('sidechains "inline": subagent lines join the main timeline in file order, counted and rendered', async () => {
    const apart = await readSession(CLAUDE_MAIN);
    const inline = await readSession(CLAUDE_MAIN, { sidechains: 'inline' });
    // The inline subagent a7c1 has 4 lines: its prompt (a step), a tool call (a step), a tool result, a text answer (a step).
    expect(inline.counters).toEqual({
      agentSteps: apart.counters.agentSteps + 3,
      userTurns: apart.counters.userTurns,
      messages: apart.counters.messages + 4,
      assistantMessages: apart.counters.assistantMessages + 2,
    });
    expect(inline.models).toContain('claude-haiku-4-5-20251001');
    const prompt = inline.messages.findIndex((m) => m.blocks.some((b) => b.type === 'text' && b.text === 'Run the cart tests and report which fail.'));
    expect(prompt).toBeGreaterThan(0);
    expect(inline.messages[prompt]!.kind).toBe('injected');
    expect(inline.messages[prompt]!.raw[0]!.line).toBe(18);
    // File order: the previous message comes from an earlier line, the one after the subagent from a later one.
    expect(inline.messages[prompt - 1]!.raw[0]!.line).toBeLessThan(18);
    expect(inline.messages[prompt + 4]!.raw[0]!.line).toBeGreaterThan(21);
    const text = buildPrefix(inline, prompt + 4, { mode: 'flat' }).messages[0]!.content;
    expect(text).toContain('--- USER ---\nRun the cart tests and report which fail.');
    expect(text).toContain('[tool_use Bash: ');
    expect(
      buildPrefix(apart, apart.messages.length, { mode: 'untruncated' })
        .messages.map((m) => m.content)
        .join(''),
    ).not.toContain('Run the cart tests');
    // The subagent is still listed as one, either way; its own prompt is its human turn.
    expect(inline.subagents.find((a) => a.agentId === 'a7c1')!.counters).toEqual(apart.subagents.find((a) => a.agentId === 'a7c1')!.counters);
    // Counting mode agrees.
    expect((await readSession(CLAUDE_MAIN, { sidechains: 'inline', content: 'none' })).counters).toEqual(inline.counters);
  });

  it('the compaction summary is one agent step, as in the reference counter (a user row with text)', async () => {
    const s = await readSession(CLAUDE_MAIN);
    const c = s.compactions[0]!;
    const summary = s.messages[c.summaryMessage!]!;
    expect(summary.kind).toBe('compaction_summary');
    expect(summary.counters.agentSteps).toBe(c.counters.agentSteps + 1);
    expect(summary.counters.userTurns).toBe(c.counters.userTurns);
  });
});
