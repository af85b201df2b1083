import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TimeRange } from './time-range.js';

describe('TimeRange', () => {
  it('keeps the smallest and largest timestamp in JavaScript string order, from bytes or strings', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), fc.string({ unit: 'grapheme', maxLength: 30 }), fc.string({ unit: 'binary', maxLength: 8 })), {
          minLength: 1,
          maxLength: 40,
        }),
        fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
        (stamps, asBytes) => {
          const range = new TimeRange();
          stamps.forEach((stamp, i) => {
            if (asBytes[i]) {
              const line = Buffer.from(`x${stamp}y`, 'utf8');
              range.seeBytes(line, 1, line.length - 1);
            } else range.seeString(stamp);
          });
          // Plain string comparisons, what the parser did before. Bytes come from UTF-8 lines, where a lone surrogate cannot be.
          const seen = stamps.map((s, i) => (asBytes[i] ? Buffer.from(s, 'utf8').toString('utf8') : s));
          const sorted = [...seen].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
          expect(range.earliest).toBe(sorted[0]);
          expect(range.latest).toBe(sorted.at(-1));
        },
      ),
      { numRuns: 400, seed: 11 },
    );
    expect(new TimeRange().earliest).toBeUndefined();
  });

  it('orders supplementary characters after U+FFFF-range ones as strings do, not as bytes', () => {
    const range = new TimeRange();
    range.seeString('\uffff');
    range.seeString('\ud83d\ude00');
    // '\ud83d\ude00' < '\uffff' in UTF-16 code units, although its UTF-8 bytes are larger.
    expect(range.earliest).toBe('\ud83d\ude00');
    expect(range.latest).toBe('\uffff');
  });
});
