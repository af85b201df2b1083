import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLEARED_TOOL_RESULT, contextAt } from './context.js';
import { CLAUDE_MAIN, FIXTURES, readMainSessions } from './testing/fixtures.js';
import { resolvePosition } from './positions.js';
import { buildPrefix, renderContinuation } from './prefix.js';
import { readSession } from './read.js';
import { ACKNOWLEDGEMENT, type RenderOptions, SUMMARY_HEADER } from './render.js';
import { codePointLength } from './text.js';
import type { Session } from './types.js';

const { claude, codex } = await readMainSessions();

/** Committed expected text; regenerate with UPDATE_GOLDEN=1 after reviewing the change. */
function golden(name: string, actual: string): void {
  const file = join(FIXTURES, 'golden', `${name}.txt`);
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(file, actual);
  expect(existsSync(file), `missing golden ${file} (run with UPDATE_GOLDEN=1 and review it)`).toBe(true);
  expect(actual).toBe(readFileSync(file, 'utf8'));
}

function rendered(session: Session, steps: number, options: RenderOptions): string {
  const p = buildPrefix(session, resolvePosition(session, 'agentSteps', steps)!, options);
  return `${p.messages.map((m) => `=== ${m.role} ===\n${m.content}`).join('\n')}\n`;
}

const cases: Array<[string, Session, number, RenderOptions]> = [
  ['claude-pre-compaction-flat', claude, 17, { mode: 'flat' }],
  ['claude-pre-compaction-turns', claude, 17, { mode: 'turns' }],
  ['claude-end-flat-600', claude, 24, { mode: 'flat', maxChars: 600 }],
  ['claude-end-turns-600', claude, 24, { mode: 'turns', maxChars: 600 }],
  ['claude-end-untruncated', claude, 24, { mode: 'untruncated' }],
  ['claude-post-compaction-flat', claude, 19, { mode: 'flat' }],
  ['codex-after-rollback-flat', codex, 13, { mode: 'flat' }],
  ['codex-after-local-compaction-turns', codex, 16, { mode: 'turns' }],
  ['codex-after-remote-compaction-untruncated', codex, 20, { mode: 'untruncated' }],
];

describe('golden rendered prefixes', () => {
  for (const [name, session, steps, options] of cases) {
    it(name, () => golden(name, rendered(session, steps, options)));
  }
});

describe('prefix rendering rules', () => {
  it('flat: reference headers, one user message + the acknowledgement, tool payloads cut to 200 characters', () => {
    const p = buildPrefix(claude, 17);
    expect(p.messages).toHaveLength(2);
    expect(p.messages[1]).toEqual({ role: 'assistant', content: ACKNOWLEDGEMENT });
    expect(p.messages[0]!.content.startsWith('--- USER ---\nCaveat:')).toBe(true);
    expect(p.chars).toBe(codePointLength(p.messages[0]!.content));
    const toolResult = p.messages[0]!.content.split('\n\n--- ').find((part) => part.includes('export function total'))!;
    const inner = toolResult.slice(toolResult.indexOf('[tool_result: ') + 14, -1);
    expect(codePointLength(inner)).toBe(200);
    expect(p.messages[0]!.content).not.toContain('thinking');
  });

  it('flat: after a compaction the context is the summary under its header plus what follows', () => {
    const p = buildPrefix(claude, 19);
    const text = p.messages[0]!.content;
    expect(text.startsWith(`${SUMMARY_HEADER}\nThis session is being continued`)).toBe(true);
    expect(text).not.toContain('Caveat');
    expect(p.summaryIncluded).toBe(true);
    expect(p.compaction).toBe(0);
  });

  it('flat: the window keeps the last maxChars characters', () => {
    const full = buildPrefix(claude, 17).messages[0]!.content;
    const cut = buildPrefix(claude, 17, { maxChars: 500 });
    expect(cut.truncated).toBe(true);
    expect(cut.chars).toBe(500);
    expect(full.endsWith(cut.messages[0]!.content)).toBe(true);
    expect(cut.includedMessages.at(-1)).toBe(16);
  });

  it('turns: roles alternate, start with the user and end with an assistant turn', () => {
    for (const steps of [4, 7, 12, 17, 19, 24]) {
      for (const maxChars of [150, 600, 30_000]) {
        const p = buildPrefix(claude, resolvePosition(claude, 'agentSteps', steps)!, { mode: 'turns', maxChars });
        const roles = p.messages.map((m) => m.role);
        expect(roles[0]).toBe('user');
        expect(roles.at(-1)).toBe('assistant');
        for (let i = 1; i < roles.length; i += 1) expect(roles[i]).not.toBe(roles[i - 1]);
        expect(p.chars).toBeLessThanOrEqual(maxChars);
      }
    }
  });

  it('untruncated keeps everything since the last compaction with whole tool payloads', () => {
    const p = buildPrefix(claude, 17, { mode: 'untruncated' });
    expect(p.truncated).toBe(false);
    expect(p.messages.map((m) => m.content).join('\n')).toContain('return applyCoupon(sum, coupon);\n     5\t}');
    expect(p.settings.maxChars).toBeNull();
  });

  it('a position exactly at a boundary is before it; the microcompaction clears results only once it happened', () => {
    expect(contextAt(claude, 17).compaction).toBeUndefined();
    expect(contextAt(claude, 18).compaction?.ordinal).toBe(0);
    const before = contextAt(claude, 23).messages.flatMap((m) => m.blocks);
    expect(before.some((b) => b.type === 'tool_result' && b.content === CLEARED_TOOL_RESULT)).toBe(false);
    const after = contextAt(claude, 24);
    const cleared = after.messages.flatMap((m) => m.blocks).filter((b) => b.type === 'tool_result' && b.content === CLEARED_TOOL_RESULT);
    expect(cleared).toHaveLength(1);
    expect(after.notes).toEqual(['1 tool result(s) cleared by microcompaction']);
    // the session itself is not modified
    expect(JSON.stringify(claude.messages)).not.toContain(CLEARED_TOOL_RESULT);
  });

  it('rejects out-of-range ends and sessions read without content', async () => {
    expect(() => contextAt(claude, 27)).toThrow(/end: must be an integer in \[0, 26\]/);
    const none = await readSession(CLAUDE_MAIN, { content: 'none', subagents: false });
    expect(() => contextAt(none, 0)).toThrow(/content "none"/);
    expect(() => buildPrefix(claude, 5, { maxChars: 0 })).toThrow(/maxChars/);
  });

  it('renders the real continuation between two positions (docs/decisions.md#d20)', () => {
    const c = renderContinuation(claude, 19, 24);
    expect(c.includedMessages).toEqual([19, 20, 21, 22, 23]);
    expect(c.messages[0]!.role).toBe('assistant');
    expect(c.messages.at(-1)!.role).toBe('assistant');
    expect(c.messages.map((m) => m.content).join('\n')).toContain(CLEARED_TOOL_RESULT);
    expect(() => renderContinuation(claude, 5, 3)).toThrow(/range/);
  });
});
