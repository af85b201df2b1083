import { describe, expect, it } from 'vitest';
import { readMainSessions } from './testing/fixtures.js';
import { buildPrefix } from './prefix.js';
import { fillerContext, fillerFlatContext, loremFiller, referenceContext, scratchContext, shuffledRealContext, unrelatedSessionContext } from './reference.js';
import { ACKNOWLEDGEMENT, ASSISTANT_HEADER, type RenderMode, SUMMARY_HEADER, USER_HEADER } from './render.js';
import { codePointLength } from './text.js';

const { claude, codex } = await readMainSessions();
const HEADER = /^(--- USER ---|--- ASSISTANT ---|--- COMPACTION SUMMARY \(resumed session\) ---)$/;

describe('filler (docs/decisions.md#d16): matched in characters and turn structure', () => {
  for (const mode of ['flat', 'turns', 'untruncated'] as RenderMode[]) {
    for (const end of [17, 19, 26]) {
      it(`${mode} at ${end}: same roles, same per-message lengths, no real text`, () => {
        const real = buildPrefix(claude, end, { mode, maxChars: 700 });
        const filler = fillerContext(real, { seed: 7 });
        expect(filler.messages.map((m) => m.role)).toEqual(real.messages.map((m) => m.role));
        expect(filler.messages.map((m) => codePointLength(m.content))).toEqual(real.messages.map((m) => codePointLength(m.content)));
        expect(filler.chars).toBe(real.chars);
        if (real.acknowledgementAppended) expect(filler.messages.at(-1)!.content).toBe(ACKNOWLEDGEMENT);
        const body = filler.messages
          .slice(0, real.acknowledgementAppended ? -1 : undefined)
          .map((m) => m.content)
          .join('\n');
        for (const word of ['coupon', 'tool_use', 'tool_result', 'cart']) expect(body).not.toContain(word);
        if (mode === 'flat') {
          // role headers stay where they were
          const realHeaders = real.messages[0]!.content.split('\n').filter((l) => HEADER.test(l));
          const fillHeaders = filler.messages[0]!.content.split('\n').filter((l) => HEADER.test(l));
          expect(fillHeaders).toEqual(realHeaders);
        }
      });
    }
  }

  it('is deterministic for a seed and differs across seeds', () => {
    const real = buildPrefix(claude, 17);
    expect(fillerContext(real, { seed: 3 })).toEqual(fillerContext(real, { seed: 3 }));
    expect(fillerContext(real, { seed: 3 }).messages[0]!.content).not.toBe(fillerContext(real, { seed: 4 }).messages[0]!.content);
    expect(loremFiller(57, 1)).toHaveLength(57);
    expect(loremFiller(0, 1)).toBe('');
    expect(loremFiller(40, 9)).toMatch(/^[A-Z][a-z]+( [a-z]+)*/);
    expect(() => loremFiller(-1, 0)).toThrow(/length/);
  });

  it('filler-flat is one block of the same total length (the reference control)', () => {
    const real = buildPrefix(claude, 17);
    const flat = fillerFlatContext(real);
    expect(flat.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(codePointLength(flat.messages[0]!.content)).toBe(real.chars);
    expect(flat.messages[0]!.content).not.toContain(USER_HEADER);
    expect(fillerFlatContext(buildPrefix(claude, 0)).messages).toEqual([]);
  });

  it('shuffled-real has the same parts in another order and the same window', () => {
    const real = buildPrefix(claude, 17);
    const shuffled = shuffledRealContext(real, { seed: 11 });
    expect(shuffled.chars).toBe(real.chars);
    const sortedLines = (t: string): string[] => t.split('\n').sort();
    expect(sortedLines(shuffled.messages[0]!.content)).toEqual(sortedLines(real.messages[0]!.content));
    expect(shuffled.messages[0]!.content).not.toBe(real.messages[0]!.content);
    expect(shuffledRealContext(real, { seed: 11 })).toEqual(shuffled);
    const turns = buildPrefix(claude, 17, { mode: 'turns' });
    const shuffledTurns = shuffledRealContext(turns, { seed: 5 });
    expect(shuffledTurns.chars).toBeLessThanOrEqual(turns.chars);
    expect(shuffledTurns.messages.at(-1)!.role).toBe('assistant');
  });

  it('unrelated-session takes another session window of the same length', () => {
    const real = buildPrefix(claude, 17, { maxChars: 900 });
    const other = unrelatedSessionContext(real, codex, { end: 15 });
    expect(other.chars).toBe(real.chars);
    expect(other.messages[0]!.content).not.toContain('coupon');
    expect(other.messages[0]!.content).toContain(ASSISTANT_HEADER);
    const long = buildPrefix(claude, 26, { mode: 'untruncated' });
    const fromShort = unrelatedSessionContext(long, codex, { end: 5 });
    expect(fromShort.chars).toBeLessThan(long.chars);
    expect(fromShort.notes.join(' ')).toMatch(/shorter/);
  });

  it('scratch is empty; the dispatcher checks its arguments', () => {
    expect(scratchContext().messages).toEqual([]);
    const real = buildPrefix(claude, 19);
    expect(referenceContext('filler', real).messages[0]!.content.startsWith(`${SUMMARY_HEADER}\n`)).toBe(true);
    expect(() => referenceContext('unrelated-session', real)).toThrow(/other/);
    expect(() => referenceContext('nope' as never, real)).toThrow(/kind/);
  });
});
