import { describe, expect, it } from 'vitest';
import { countTokens, countTokensSliced } from './token-count.js';

describe('countTokensSliced', () => {
  // Texts whose every slice boundary case occurs: runs of spaces, newlines, tabs, punctuation,
  // non-Latin scripts, and stretches without whitespace longer than a slice.
  const texts = [
    'The quick brown fox jumps over the lazy dog. '.repeat(400),
    'word  two   spaces\n\n  indented\tline, (punct) — dash; “quotes” 123 4567 '.repeat(300),
    'Ünïcödé wörds 日本語のテキスト 中文 text mixed with ascii  and  more '.repeat(300),
    `${'x'.repeat(5000)} tail ${'y'.repeat(700)} ${'z '.repeat(2000)}`,
    ' leading and trailing spaces   '.repeat(500),
  ];

  it('gives the same count as countTokens on the whole text, for small slices too', async () => {
    for (const text of texts) {
      const whole = countTokens(text);
      for (const slice of [64, 257, 1000, 4096]) expect(await countTokensSliced(text, slice)).toBe(whole);
    }
  });

  it('yields to the event loop between slices', async () => {
    let done = false;
    const counting = countTokensSliced(texts[0]!, 100).then((n) => {
      done = true;
      return n;
    });
    // Without yields the count would settle in microtasks, before this immediate runs.
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(done).toBe(false);
    expect(await counting).toBe(countTokens(texts[0]!));
  });
});
