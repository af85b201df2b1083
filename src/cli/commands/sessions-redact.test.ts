import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
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
