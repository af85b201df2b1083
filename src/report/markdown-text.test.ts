import { describe, expect, it } from 'vitest';
import { markdownText } from './markdown-text.js';

describe('markdownText', () => {
  it('escapes with backslashes, never HTML entities', () => {
    expect(markdownText('<script>alert(1)</script> & co')).toBe('\\<script\\>alert(1)\\</script\\> \\& co');
    expect(markdownText('a|b')).toBe('a\\|b');
    expect(markdownText('a\\|b')).toBe('a\\\\\\|b');
    expect(markdownText('x\r\ny\nz')).toBe('x y z');
    expect(markdownText('&lt;b&gt;')).toBe('\\&lt;b\\&gt;');
    expect(markdownText('openai:gpt-4.1-mini')).toBe('openai:gpt-4.1-mini');
  });
});
