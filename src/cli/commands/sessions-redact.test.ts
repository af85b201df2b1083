import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { zstdCompress } from '../../sessions/redact/__fixtures__/zstd.js';
import { runCli } from '../program.js';

let dir: string;
let out: string[];
let err: string[];
const KEY = 'ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789';

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'echolens-cli-redact-'));
  out = [];
  err = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    out.push(String(chunk));
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    err.push(String(chunk));
    return true;
  });
  process.exitCode = undefined;
});

afterEach(async () => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
  await rm(dir, { recursive: true, force: true });
});

const run = (...args: string[]) => runCli(['node', 'echolens', 'sessions', ...args]);

describe('echolens sessions redact | verify', () => {
  it('redacts into a new file, writes a value-free report, and verify passes (exit 0)', async () => {
    const input = join(dir, 'in.jsonl');
    await writeFile(input, `{"cwd":"/Users/erin/acme-tools","text":"Acme token ${KEY}"}\n`);
    const output = join(dir, 'out.jsonl');
    const report = join(dir, 'report.json');
    expect(await run('redact', input, '-o', output, '--identity', 'employer=Acme', '--report', report)).toBe(0);
    expect(await readFile(output, 'utf8')).toBe('{"cwd":"/Users/<USER>/<WORKSPACE>","text":"<EMPLOYER> token <SECRET:github_token>"}\n');
    const reportText = await readFile(report, 'utf8');
    expect(JSON.parse(reportText)).toMatchObject({ lines: 1, counts: { employer: 1, 'secret:github_token': 1, user: 1, workspace: 1 } });
    expect(reportText).not.toMatch(/erin|acme|ghp_/i);
    expect(err.join('')).not.toMatch(/erin|ghp_/i);
    expect(await run('verify', output, '--identity', 'employer=Acme')).toBe(0);
    expect(out.join('')).toContain('clean');
  });

  it('verify exits 1 and prints residuals masked', async () => {
    const file = join(dir, 'leak.jsonl');
    await writeFile(file, `{"a":"fine"}\n{"b":"${KEY}"}\n`);
    expect(await run('verify', file)).toBe(1);
    const printed = out.join('');
    expect(printed).toContain(`${file}:2: github_token ghp…(40 chars) #`);
    expect(printed).not.toContain(KEY.slice(4, 12));
    out = [];
    expect(await run('verify', file, '--json')).toBe(1);
    expect(JSON.parse(out.join(''))).toMatchObject({ clean: false, residualCount: 1 });
  });

  it('exits 2 on usage and input errors', async () => {
    const input = join(dir, 'in.jsonl');
    await writeFile(input, '{}\n');
    expect(await run('redact', input)).toBe(2); // no -o
    expect(await run('redact', input, '-o', input)).toBe(2);
    expect(await run('redact', join(dir, 'missing.jsonl'), '-o', join(dir, 'o.jsonl'))).toBe(2);
    expect(await run('redact', input, '-o', join(dir, 'o.jsonl'), '--identity', 'employer=A')).toBe(2);
    expect(await run('verify', join(dir, 'missing.jsonl'))).toBe(2);
    expect(err.join('')).toContain('missing.jsonl: no such file');
  });

  it('reads identity terms from a file and documents exit codes in --help', async () => {
    const input = join(dir, 'in.jsonl');
    await writeFile(input, '{"t":"Project Bluefin at Initech"}\n');
    const terms = join(dir, 'terms.txt');
    await writeFile(terms, '# my terms\nproject=Bluefin\nemployer=Initech\n');
    expect(await run('redact', input, '-o', join(dir, 'o.jsonl'), '--identity-file', terms)).toBe(0);
    expect(await readFile(join(dir, 'o.jsonl'), 'utf8')).toBe('{"t":"Project <PROJECT> at <EMPLOYER>"}\n');
    expect(await run('verify', '--help')).toBe(0);
    expect(out.join('')).toContain('0 clean, 1 residuals found, 2 usage or input error');
  });
});

describe('echolens sessions redact | verify on .jsonl.zst', () => {
  const zst = async (name: string, text: string) => {
    const path = join(dir, name);
    await writeFile(path, zstdCompress(Buffer.from(text)).bytes);
    return path;
  };

  it('redacts a .jsonl.zst into plain JSONL that verifies clean; the input is unchanged', async () => {
    const text = `{"cwd":"/Users/erin/acme-tools","text":"Acme token ${KEY}"}\n`;
    const input = await zst('rollout.jsonl.zst', text);
    const before = await readFile(input);
    const output = join(dir, 'rollout.redacted.jsonl');
    expect(await run('redact', input, '-o', output, '--identity', 'employer=Acme')).toBe(0);
    expect(await readFile(output, 'utf8')).toBe('{"cwd":"/Users/<USER>/<WORKSPACE>","text":"<EMPLOYER> token <SECRET:github_token>"}\n');
    expect((await readFile(input)).equals(before)).toBe(true);
    expect(err.join('')).not.toMatch(/erin|ghp_/i);
    expect(await run('verify', output, '--identity', 'employer=Acme')).toBe(0);
    expect(out.join('')).toContain('clean: 1 lines scanned');
  });

  it('verify on a .zst holding a secret exits 1 with the secret masked', async () => {
    const file = await zst('leak.jsonl.zst', `{"a":"fine"}\n{"b":"${KEY}"}\n`);
    expect(await run('verify', file)).toBe(1);
    const printed = out.join('');
    expect(printed).toContain(`${file}:2: github_token ghp…(40 chars) #`);
    expect(printed).toContain('NOT CLEAN: 1 residuals in 2 lines');
    expect(printed + err.join('')).not.toContain(KEY.slice(4, 12));
  });

  it('a corrupt .zst exits 2 with one line naming the file and no stack; nothing is written', async () => {
    const file = join(dir, 'broken.jsonl.zst');
    await writeFile(file, '{"plain":"text, not zstd"}\n');
    expect(await run('redact', file, '-o', join(dir, 'out.jsonl'))).toBe(2);
    expect(await run('verify', file)).toBe(2);
    const lines = err.join('').trim().split('\n');
    expect(lines).toHaveLength(2);
    for (const line of lines)
      expect(line).toMatch(new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: corrupt or truncated zstd stream after 0 decompressed bytes`));
    expect(err.join('')).not.toMatch(/\n\s+at /);
    expect(await readdir(dir)).toEqual(['broken.jsonl.zst']);
  });

  it('refuses -o ending in .zst (exit 2) and suggests the .jsonl name', async () => {
    const input = await zst('rollout.jsonl.zst', '{"t":"x"}\n');
    expect(await run('redact', input, '-o', join(dir, 'rollout.redacted.jsonl.zst'))).toBe(2);
    const message = err.join('');
    expect(message).toContain('ends in .zst, but the redacted output is written as plain JSONL');
    expect(message).toContain(`use ${join(dir, 'rollout.redacted.jsonl')}`);
    expect(await readdir(dir)).toEqual(['rollout.jsonl.zst']);
  });

  it('--help of both commands mentions .zst input', async () => {
    expect(await run('redact', '--help')).toBe(0);
    expect(await run('verify', '--help')).toBe(0);
    const help = out.join('');
    expect(help).toContain('.jsonl or .jsonl.zst');
    expect(help).toContain('-o must not end in .zst');
    expect(help).toContain('A .zst file is decompressed while reading');
  });
});
