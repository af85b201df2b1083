import { describe, expect, it } from 'vitest';
import { markdownText } from './markdown-text.js';

describe('markdownText', () => {
  // Escapes with backslashes, never HTML entities; line breaks become spaces.
  it.each([
    ['<script>alert(1)</script> & co', '\\<script\\>alert(1)\\</script\\> \\& co'],
    ['a|b', 'a\\|b'],
    ['a\\|b', 'a\\\\\\|b'],
    ['x\r\ny\nz', 'x y z'],
    ['&lt;b&gt;', '\\&lt;b\\&gt;'],
    ['openai:gpt-4.1-mini', 'openai:gpt-4.1-mini'],
  ])('%j → %j', (text, escaped) => {
    expect(markdownText(text)).toBe(escaped);
  });
});
