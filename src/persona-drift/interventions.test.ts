import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../models/types.js';
import { assembleProbeMessages, insertionTurns, INTERVENTIONS, mergeAdjacentRoles } from './interventions.js';
import { loadPersonaStimuli } from './stimuli.js';

const texts = loadPersonaStimuli().interventions;
const context: ChatMessage[] = [
  { role: 'user', content: '--- USER ---\nfix the build' },
  { role: 'assistant', content: 'Acknowledged. How can I help continue this work?' },
];

describe('mitigation arms', () => {
  it('A-anchor is two user turns each followed by a scripted assistant turn (V0 + V2 demo)', () => {
    const turns = insertionTurns('a-anchor', texts);
    expect(turns.map((t) => t.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(turns[0]?.content.startsWith('[Reminder] You are an AI assistant.')).toBe(true);
    expect(turns[0]?.content).toContain('no markdown');
    expect(turns[1]?.content).toBe('Understood.');
    expect(turns[2]?.content).toBe('list files in the current directory');
    expect(turns[3]?.content).toBe('ls');
    expect(insertionTurns('a-anchor-reference', texts)[0]?.content).not.toContain('no markdown');
  });

  it('placebos reuse the four-turn scaffold with non-persona content', () => {
    for (const placebo of ['placebo_anchor', 'placebo_iso_notes', 'placebo_iso_recipe'] as const) {
      const turns = insertionTurns(placebo, texts);
      expect(turns.map((t) => t.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
      expect(turns.map((t) => t.content).join(' ')).not.toMatch(/AI assistant/);
    }
    expect(insertionTurns('placebo_iso_recipe', texts)[3]?.content).toBe('2000');
  });

  it('goal re-injection quotes the goal verbatim and requires one', () => {
    const turns = insertionTurns('goal', texts, 'Port the parser to Rust');
    expect(turns[0]?.content).toBe(
      '[Reminder] Restating the original goal of this session, verbatim: """Port the parser to Rust""" Please keep working toward this goal.',
    );
    expect(() => insertionTurns('goal', texts)).toThrow(/goal/);
  });

  it('assembles system, context, insertion, decay, continuation and request in order', () => {
    const messages = assembleProbeMessages({
      system: 'sys',
      context,
      mitigation: 'v0',
      texts,
      decay: 2,
      request: 'Who are you?',
    });
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user']);
    expect(messages[3]?.content).toBe(texts.v0);
    expect(messages[5]?.content).toBe(texts.decayExchanges[0]?.[0]);
    expect(messages.at(-1)?.content).toBe('Who are you?');
  });

  it('sandwich puts the reminder before the prefix and right before the probe, with no demo', () => {
    const messages = assembleProbeMessages({ context, mitigation: 'sandwich', texts, request: 'probe' });
    const reminders = messages.filter((m) => m.content.includes(texts.v0));
    expect(reminders).toHaveLength(2);
    expect(messages[0]?.content).toContain(texts.v0);
    expect(messages.at(-3)?.content).toContain(texts.v0);
    expect(messages.some((m) => m.content === 'ls')).toBe(false);
  });

  it('cadence re-inserts the turns before every N-message continuation chunk', () => {
    const continuation: ChatMessage[] = Array.from({ length: 6 }, (_, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: `real ${i}`,
    }));
    const messages = assembleProbeMessages({ context, mitigation: 'v0', texts, continuation, cadence: 2, request: 'probe' });
    expect(messages.filter((m) => m.content === texts.v0)).toHaveLength(3);
    const roles = messages.map((m) => m.role);
    for (let i = 1; i < roles.length; i++) expect(roles[i]).not.toBe(roles[i - 1]);
  });

  it('every mitigation yields alternating roles ending with the request', () => {
    for (const mitigation of INTERVENTIONS) {
      const messages = assembleProbeMessages({ context, mitigation, texts, goal: 'g', request: 'probe' });
      for (let i = 1; i < messages.length; i++) expect(messages[i]?.role).not.toBe(messages[i - 1]?.role);
      expect(messages.at(-1)).toEqual({ role: 'user', content: 'probe' });
    }
  });

  it('merges adjacent same-role turns', () => {
    expect(
      mergeAdjacentRoles([
        { role: 'user', content: 'a' },
        { role: 'user', content: 'b' },
      ]),
    ).toEqual([{ role: 'user', content: 'a\n\nb' }]);
  });

  it('keeps the context messages it does not change by reference (cells share one prefix in memory)', () => {
    const long: ChatMessage[] = [
      { role: 'user', content: 'x'.repeat(10_000) },
      { role: 'assistant', content: 'Understood.', cacheBreakpoint: true },
    ];
    const one = assembleProbeMessages({ system: 'sys', context: long, mitigation: 'none', texts, request: 'probe one' });
    const two = assembleProbeMessages({ system: 'sys', context: long, mitigation: 'none', texts, request: 'probe two' });
    expect(one[1]).toBe(long[0]);
    expect(two[1]).toBe(long[0]);
    expect(one[2]).toBe(long[1]);
    // A merged turn is a new object; the caller's messages are left as they were.
    const merged = mergeAdjacentRoles([long[1]!, { role: 'assistant', content: 'more' }]);
    expect(merged[0]).toEqual({ role: 'assistant', content: 'Understood.\n\nmore', cacheBreakpoint: true });
    expect(long[1]).toEqual({ role: 'assistant', content: 'Understood.', cacheBreakpoint: true });
  });

  it('rejects bad decay and cadence values', () => {
    expect(() => assembleProbeMessages({ context, mitigation: 'v0', texts, decay: -1, request: 'x' })).toThrow(/decay/);
    expect(() => assembleProbeMessages({ context, mitigation: 'v0', texts, cadence: 0, request: 'x' })).toThrow(/cadence/);
  });
});
