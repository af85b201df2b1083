import { link, readFile, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError, InvalidArgumentError } from '../../core/errors.js';
import { readLineParts } from './line-reader.js';
import { redactFile } from './redact-file.js';
import { useTempDir } from '../testing/temp-dir.js';

const tmp = useTempDir('echolens-redact-file-', 'test');

const KEY = 'ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789';

describe('redactFile', () => {
  it('learns usernames from the whole file before redacting line 1', async () => {
    const input = join(tmp.path, 'in.jsonl');
    await writeFile(input, `{"text":"hi, I am carol"}\n{"cwd":"/home/carol/proj"}\n`);
    const report = await redactFile(input, join(tmp.path, 'out.jsonl'));
    expect(await readFile(join(tmp.path, 'out.jsonl'), 'utf8')).toBe('{"text":"hi, I am <USER>"}\n{"cwd":"/home/<USER>/<WORKSPACE>"}\n');
    expect(report).toMatchObject({ lines: 2, jsonLines: 2, rawLines: 0, discovered: { users: 1, workspaces: 1, hosts: 0 } });
  });

  it('never modifies the input and refuses out == in, links and directories', async () => {
    const input = join(tmp.path, 'in.jsonl');
    await writeFile(input, `{"k":"${KEY}"}\n`);
    await expect(redactFile(input, input)).rejects.toThrow(InvalidArgumentError);
    await symlink(input, join(tmp.path, 'sym.jsonl'));
    await expect(redactFile(input, join(tmp.path, 'sym.jsonl'))).rejects.toThrow(InvalidArgumentError);
    await link(input, join(tmp.path, 'hard.jsonl'));
    await expect(redactFile(input, join(tmp.path, 'hard.jsonl'))).rejects.toThrow(InvalidArgumentError);
    await expect(redactFile(input, tmp.path)).rejects.toThrow(InvalidArgumentError);
    expect(await readFile(input, 'utf8')).toBe(`{"k":"${KEY}"}\n`);
  });

  it('names a missing input', async () => {
    await expect(redactFile(join(tmp.path, 'missing.jsonl'), join(tmp.path, 'o.jsonl'))).rejects.toThrow(InputError);
  });

  it('writes a private file atomically and leaves no temp file behind', async () => {
    const input = join(tmp.path, 'in.jsonl');
    await writeFile(input, `{"k":"${KEY}"}\n`);
    await redactFile(input, join(tmp.path, 'out.jsonl'));
    expect((await stat(join(tmp.path, 'out.jsonl'))).mode & 0o777).toBe(0o600);
    expect((await readdir(tmp.path)).sort()).toEqual(['in.jsonl', 'out.jsonl']);
  });

  it('keeps the old output when the input fails mid-way (line too long)', async () => {
    const input = join(tmp.path, 'in.jsonl');
    await writeFile(join(tmp.path, 'out.jsonl'), 'previous\n');
    await writeFile(input, `{"a":1}\n${'x'.repeat(5000)}\n`);
    await expect(redactFile(input, join(tmp.path, 'out.jsonl'), { maxLineBytes: 1000 })).rejects.toThrow(/in\.jsonl:2/);
    expect(await readFile(join(tmp.path, 'out.jsonl'), 'utf8')).toBe('previous\n');
    expect((await readdir(tmp.path)).sort()).toEqual(['in.jsonl', 'out.jsonl']);
  });

  it('handles an empty file', async () => {
    const input = join(tmp.path, 'empty.jsonl');
    await writeFile(input, '');
    const report = await redactFile(input, join(tmp.path, 'out.jsonl'));
    expect(await readFile(join(tmp.path, 'out.jsonl'), 'utf8')).toBe('');
    expect(report.lines).toBe(0);
  });

  it('keeps CRLF, blank lines, a BOM and a last line without newline', async () => {
    const input = join(tmp.path, 'in.jsonl');
    await writeFile(input, `\uFEFF{"a":"${KEY}"}\r\n\r\n{"b":"/home/dave/x"}`);
    const report = await redactFile(input, join(tmp.path, 'out.jsonl'));
    expect(await readFile(join(tmp.path, 'out.jsonl'), 'utf8')).toBe('\uFEFF{"a":"<SECRET:github_token>"}\r\n\r\n{"b":"/home/<USER>/x"}');
    expect(report).toMatchObject({ lines: 3, blankLines: 1 });
  });

  it('survives invalid UTF-8 and malformed lines, and counts them', async () => {
    const input = join(tmp.path, 'in.jsonl');
    const bad = Buffer.concat([Buffer.from('{"a":"caf'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from(`", "k":"${KEY}"}\n`)]);
    await writeFile(input, Buffer.concat([bad, Buffer.from(`{"broken": "${KEY}\n[1,2\n`)]));
    const report = await redactFile(input, join(tmp.path, 'out.jsonl'));
    const out = (await readFile(join(tmp.path, 'out.jsonl'), 'utf8')).split('\n');
    expect(JSON.parse(out[0]!)).toEqual({ a: 'caf\uFFFD(\uFFFD', k: '<SECRET:github_token>' });
    expect(out[1]).toBe('{"broken": "<SECRET:github_token>');
    expect(out[2]).toBe('[1,2');
    expect(report).toMatchObject({ lines: 3, jsonLines: 1, rawLines: 2, invalidUtf8Lines: 1 });
  });

  it('redacts a line of several megabytes completely', async () => {
    const input = join(tmp.path, 'big.jsonl');
    const filler = 'lorem ipsum dolor sit amet '.repeat(200_000);
    await writeFile(input, `${JSON.stringify({ text: `${KEY} ${filler} ${KEY}` })}\n`);
    await redactFile(input, join(tmp.path, 'out.jsonl'));
    const out = await readFile(join(tmp.path, 'out.jsonl'), 'utf8');
    expect(out).not.toContain(KEY);
    expect(out.split('<SECRET:github_token>')).toHaveLength(3);
    expect(JSON.parse(out)).toHaveProperty('text');
  });
});

describe('readLineParts', () => {
  it('splits long lines into parts and multi-byte characters across chunks intact', async () => {
    const input = join(tmp.path, 'parts.txt');
    const line = 'é'.repeat(100_000);
    await writeFile(input, `${line}\nshort\r\n`);
    const parts = [];
    for await (const part of readLineParts(input, 1000)) parts.push(part);
    const first = parts.filter((p) => p.line === 1);
    expect(first.length).toBeGreaterThan(2);
    expect(first.map((p) => p.text).join('')).toBe(line);
    expect(first.at(-1)).toMatchObject({ end: true, terminator: '\n', invalidUtf8: false });
    expect(parts.at(-1)).toMatchObject({ line: 2, text: 'short', terminator: '\r\n' });
  });
});
