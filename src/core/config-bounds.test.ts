import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliInProcess } from '../cli/testing/run-cli.js';
import { memoryConfigSchema } from '../memory-drift/config.js';
import { ConfigError } from './errors.js';
import { loadConfigFile } from './config-file.js';

const dir = mkdtempSync(join(tmpdir(), 'echolens-bounds-'));
const example = readFileSync(new URL('../../examples/memory-sim.yaml', import.meta.url), 'utf8');

function write(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('config bounds', () => {
  it('k: 100000 is refused by the schema, naming the key, before any planning', () => {
    const file = write('big-k.yaml', `${example}\n`);
    expect(() => loadConfigFile(file, memoryConfigSchema, ['k=100000'])).toThrow(ConfigError);
    expect(() => loadConfigFile(file, memoryConfigSchema, ['k=100000'])).toThrow(/k is at most 1000/);
    expect(loadConfigFile(file, memoryConfigSchema, ['k=3']).config.k).toBe(3);
  });

  it('a memory run with k: 100000 exits 2 with one line, no stack, and no store written', async () => {
    const file = write('cli-k.yaml', example);
    const { code, stderr } = await runCliInProcess(['memory', 'run', file, '--set', 'k=100000', '--db', join(dir, 'k.db')]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/k is at most 1000/);
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('a YAML alias bomb is a one-line config error (exit 2), not an internal error', async () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${Array.from({ length: 9 }, () => `*${prev}`).join(',')}]`);
    }
    const file = write('bomb.yaml', `${levels.join('\n')}\n`);
    expect(() => loadConfigFile(file, memoryConfigSchema)).toThrow(ConfigError);
    expect(() => loadConfigFile(file, memoryConfigSchema)).toThrow(/too many alias expansions/);
    const { code, stderr } = await runCliInProcess(['memory', 'run', file, '--db', join(dir, 'bomb.db')]);
    expect(code).toBe(2);
    expect(stderr).not.toMatch(/internal error|\n\s+at /);
  });

  it('limits.timeoutMs is a per-attempt deadline in every run config, bounded', () => {
    const file = write('timeout.yaml', example);
    expect(loadConfigFile(file, memoryConfigSchema, ['limits.timeoutMs=30000']).config.limits.timeoutMs).toBe(30000);
    expect(() => loadConfigFile(file, memoryConfigSchema, ['limits.timeoutMs=0'])).toThrow(ConfigError);
  });
});
