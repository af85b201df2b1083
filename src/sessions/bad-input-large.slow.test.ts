// The 50 MB line of bad-input.test.ts (about 60 s under load; the fast tier reads the same case at 4 MB).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { expectBigLineRead } from './testing/claude-lines.js';

const dir = mkdtempSync(join(tmpdir(), 'echolens-sessions-bad-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, content: string | Buffer): string {
  const file = join(dir, name);
  writeFileSync(file, content);
  return file;
}

describe('bad input: warnings naming file:line, the rest still read, never a throw', () => {
  it('a 50 MB single line is read; over maxLineBytes it is skipped with a warning', async () => {
    await expectBigLineRead(write, 50);
  }, 180_000);
});
