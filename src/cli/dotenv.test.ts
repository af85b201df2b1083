import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadDotEnv } from './dotenv.js';

describe('.env loading', () => {
  it('sets unset variables from .env; the environment wins; can be turned off', () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-dotenv-'));
    writeFileSync(join(dir, '.env'), '# keys\nOPENAI_API_KEY=sk-from-file\nANTHROPIC_API_KEY="quoted value"\nEXISTING=file\n');
    const env: NodeJS.ProcessEnv = { EXISTING: 'shell' };
    expect(loadDotEnv(env, dir).sort()).toEqual(['ANTHROPIC_API_KEY', 'OPENAI_API_KEY']);
    expect(env.OPENAI_API_KEY).toBe('sk-from-file');
    expect(env.ANTHROPIC_API_KEY).toBe('quoted value');
    expect(env.EXISTING).toBe('shell');
    const off: NodeJS.ProcessEnv = { ECHOLENS_NO_DOTENV: '1' };
    expect(loadDotEnv(off, dir)).toEqual([]);
    expect(off.OPENAI_API_KEY).toBeUndefined();
    expect(loadDotEnv({}, mkdtempSync(join(tmpdir(), 'echolens-dotenv-none-')))).toEqual([]);
  });
});
