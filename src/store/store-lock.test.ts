import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../core/errors.js';
import { RunStore } from './run-store.js';

const HOLDER = `
import { RunStore } from ${JSON.stringify(new URL('./run-store.ts', import.meta.url).pathname)};
const store = RunStore.open(process.argv[2]);
process.stdout.write('open\\n');
setInterval(() => {}, 1000);
`;

describe('one writing process per store', () => {
  it('a second process is refused while the first holds the store, and takes over once it was killed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-lock-'));
    const file = join(dir, 'runs.db');
    await RunStore.open(file).close();
    writeFileSync(join(dir, 'holder.mts'), HOLDER);
    const child = spawn(process.execPath, ['--import', 'tsx', join(dir, 'holder.mts'), file], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('open') && resolve());
      child.on('exit', (code) => reject(new Error(`holder exited with ${code}`)));
    });
    expect(() => RunStore.open(file)).toThrow(InputError);
    expect(() => RunStore.open(file)).toThrow(/in use by process \d+/);
    // Readers are never locked out.
    await RunStore.open(file, { readonly: true }).close();
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const store = RunStore.open(file);
    await store.close();
    expect(existsSync(`${file}.lock`)).toBe(false);
  }, 60_000);

  it('re-opening in the same process shares the lock', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'echolens-lock-')), 'runs.db');
    const a = RunStore.open(file);
    const b = RunStore.open(file);
    await b.close();
    expect(existsSync(`${file}.lock`)).toBe(true);
    await a.close();
    expect(existsSync(`${file}.lock`)).toBe(false);
  });
});

describe('read-only opens', () => {
  it('leave no -wal or -shm file behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-ro-'));
    const file = join(dir, 'runs.db');
    await RunStore.open(file).close();
    expect(readdirSync(dir).sort()).toEqual(['runs.db']);
    const store = RunStore.open(file, { readonly: true });
    await store.listRuns();
    await store.close();
    expect(readdirSync(dir).sort()).toEqual(['runs.db']);
  });
});
