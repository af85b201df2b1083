import { describe, it } from 'vitest';
import { expectBigLineRead, useWriteDir } from './testing/claude-lines.js';

const { write } = useWriteDir('echolens-sessions-bad-');

describe('bad input: warnings naming file:line, the rest still read, never a throw', () => {
  it('a 50 MB single line is read; over maxLineBytes it is skipped with a warning', async () => {
    await expectBigLineRead(write, 50);
  }, 180_000);
});
