import { describe, expect, it } from 'vitest';
import { runCliInProcess } from './testing/run-cli.js';

/** Each audit's `run --help` says what its dry run prints: the design's MDE and power, before the cost. */
describe('--dry-run help of every built-in audit', () => {
  for (const audit of ['persona', 'memory', 'continuation']) {
    it(`${audit} run --help names the minimum detectable effect and power`, async () => {
      const help = await runCliInProcess([audit, 'run', '--help']);
      expect(help.code).toBe(0);
      const text = /--dry-run\s+([\s\S]*?)call\s+nothing/u.exec(help.stdout)?.[1]?.replace(/\s+/gu, ' ');
      expect(text).toMatch(/minimum detectable .* and power of/u);
      expect(text).toMatch(/UNDERPOWERED/u);
    });
  }
});
