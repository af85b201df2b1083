import { describe, expect, it } from 'vitest';
import { skimJsonLine } from './json-skim.js';

const small = { minLineBytes: 0, maxStringBytes: 12, keepBytes: 7 };
const skim = (value: unknown): unknown => JSON.parse(skimJsonLine(Buffer.from(JSON.stringify(value)), small));

/** Every string of `skimmed` is the same string or a cut head of the original (a split UTF-8 char may end in U+FFFD). */
function sameShape(original: unknown, skimmed: unknown): void {
  if (typeof original === 'string') {
    expect(typeof skimmed).toBe('string');
    const s = skimmed as string;
    if (Buffer.byteLength(JSON.stringify(original)) - 2 <= small.maxStringBytes) expect(s).toBe(original);
    else if (s !== original) {
      // a cut head (kept whole only when the head is blank)
      const head = s.replace(/\uFFFD+$/, '');
      expect(original.startsWith(head)).toBe(true);
      expect(s.length).toBeLessThan(original.length);
    }
    return;
  }
  if (Array.isArray(original)) {
    expect(Array.isArray(skimmed)).toBe(true);
    expect((skimmed as unknown[]).length).toBe(original.length);
    for (const [i, v] of original.entries()) sameShape(v, (skimmed as unknown[])[i]);
    return;
  }
  if (original !== null && typeof original === 'object') {
    expect(Object.keys(skimmed as object)).toEqual(Object.keys(original));
    for (const [k, v] of Object.entries(original)) sameShape(v, (skimmed as Record<string, unknown>)[k]);
    return;
  }
  expect(skimmed).toEqual(original);
}

describe('skimJsonLine', () => {
  it('cuts long strings and leaves everything else', () => {
    const value = { type: 'user', message: { content: [{ type: 'text', text: 'x'.repeat(100) }, { type: 'tool_result', content: 'short' }] }, n: 3, ok: true };
    const out = skim(value) as typeof value;
    expect(out.type).toBe('user');
    expect(out.message.content[0]!.text).toBe('xxxxxxx');
    expect(out.message.content[1]!.content).toBe('short');
    expect(out.n).toBe(3);
  });

  it('never cuts inside an escape and keeps blank heads whole', () => {
    expect(skim({ a: 'abcde\\"fghijklmnop' })).toEqual({ a: 'abcde\\' });
    expect(skim({ a: 'abcd\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9' })).toMatchObject({ a: expect.stringMatching(/^abcd/) });
    expect(skim({ a: 'ab\u0001cdefghijklmnop' })).toEqual({ a: 'ab' });
    const blank = `${' \n\t'.repeat(10)}text`;
    expect(skim({ a: blank })).toEqual({ a: blank });
  });

  it('leaves short lines and malformed lines as they are', () => {
    const line = Buffer.from('{"a":"' + 'y'.repeat(50));
    expect(skimJsonLine(line, small)).toBe(line.toString());
    const short = Buffer.from('{"a":"' + 'z'.repeat(50) + '"}');
    expect(skimJsonLine(short)).toBe(short.toString());
  });

  it('keeps the structure of random JSON (seeded, 500 cases)', () => {
    let state = 99;
    const random = (): number => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return state / 4294967296;
    };
    const alphabet = ['a', 'b', '"', '\\', '\n', '\u00e9', '\u20ac', '\ud83d\ude00', ' ', '/', '\u0007', 'u', '{', '}'];
    const text = (): string => Array.from({ length: Math.floor(random() * 30) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
    const value = (depth: number): unknown => {
      const r = random();
      if (depth > 3 || r < 0.35) return text();
      if (r < 0.45) return Math.floor(random() * 1000) / 7;
      if (r < 0.5) return random() < 0.5 ? null : true;
      if (r < 0.75) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
      const o: Record<string, unknown> = {};
      for (let i = 0; i < 4; i += 1) if (random() < 0.7) o[`k${i}`] = value(depth + 1);
      return o;
    };
    for (let i = 0; i < 500; i += 1) {
      const v = value(0);
      sameShape(v, skim(v));
    }
  });
});
