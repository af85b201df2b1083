import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../../core/errors.js';
import { findPii } from '../pii.js';
import { maskedPreview } from './mask.js';
import { scanText, unescapeJsonText } from './scan.js';
import { verifyFile } from './verify-file.js';
import { useTempDir } from '../../testing/temp-dir.js';

const tmp = useTempDir('echolens-verify-');

const SECRET = 'sk-proj-Ab3dEf9hIjKlMnOpQrStUvWxYz0123456789abcdEFGH';
const kinds = (text: string, terms: { term: string; label: string }[] = []) => scanText(text, terms).map((h) => h.kind);

describe('scanText', () => {
  it('finds each kind of residual', () => {
    expect(kinds(`key ${SECRET}`)).toEqual(['openai_key']);
    expect(kinds('AKIAIOSFODNN7EXAMPL2')).toEqual(['aws_access_key_id']);
    expect(kinds('-----BEGIN OPENSSH PRIVATE KEY-----\nabc')).toEqual(['ssh_key']);
    expect(kinds('https://bob:pa55word@db.example.com/x')).toEqual(['password']);
    expect(kinds('Authorization: Bearer abcdefghijklmnopqrstuvwxyz')).toContain('authorization');
    expect(kinds('DB_PASSWORD=hunter22')).toEqual(['secret_assignment']);
    expect(kinds('mail bob@example.org')).toEqual(['email']);
    expect(kinds('<a href="mailto:bob@example.org">')).toEqual(['email']);
    expect(kinds('/Users/bob/x and C:\\\\Users\\\\bob and -home-bob-proj and ~bob/x')).toEqual(['home_path', 'home_path', 'home_path', 'home_path']);
    expect(kinds('http://localhost:3000 and 192.168.1.4')).toEqual(['host', 'host']);
    expect(kinds('token 8fK2pQ9xZ3mL7vB1nR5tY0wE4cA6hJ2d')).toEqual(['high_entropy']);
    expect(kinds(`img ${'iVBORw0KGgoAAAANSUhEUgAA'.repeat(10)}`)).toEqual(['base64_data']);
    expect(kinds('ACME-corp and acme.corp', [{ term: 'Acme Corp', label: 'employer' }])).toEqual(['identity:employer', 'identity:employer']);
  });

  it('accepts placeholders and ordinary text', () => {
    const text =
      'OPENAI_API_KEY=<SECRET:openai_key> /Users/<USER>/src/<WORKSPACE> -Users-<USER>-x ssh <USER>@<HOST> ' +
      'http://<HOST>:<PORT>/ <EMAIL> msg_01XFDUDYJgAACzvnptvVoYEL 3f1c2a9e-8b7d-4c6e-9a5f-1e2d3c4b5a69 ' +
      'git@github.com:nodejs/node.git const apiKey = process.env.OPENAI_API_KEY; /home/ubuntu/x';
    expect(scanText(text)).toEqual([]);
  });

  it('reads JSON escapes: a secret spelled with \\u escapes is still seen', () => {
    expect(unescapeJsonText('\\u0073k-\\n\\\\')).toBe('sk-\n\\');
    const escaped = SECRET.replace('s', '\\u0073');
    expect(kinds(escaped)).toEqual(['openai_key']);
  });
});

describe('verifyFile', () => {
  it('lists residuals masked with file:line and a keyed hash, never the value', async () => {
    const file = join(tmp.path, 'leak.jsonl');
    await writeFile(file, `{"a":"clean"}\n{"b":"${SECRET}"}\n{"c":"${SECRET}"}\n`);
    const report = await verifyFile(file, { hashKey: 'k' });
    expect(report.clean).toBe(false);
    expect(report.residuals.map((r) => [r.kind, r.line, r.preview])).toEqual([
      ['openai_key', 2, `sk-…(${SECRET.length} chars)`],
      ['openai_key', 3, `sk-…(${SECRET.length} chars)`],
    ]);
    expect(report.residuals[0]!.hash).toBe(report.residuals[1]!.hash);
    expect(JSON.stringify(report)).not.toContain(SECRET.slice(3, 11));
    // A different key gives different hashes: a hash cannot be looked up across runs.
    const other = await verifyFile(file, { hashKey: 'other' });
    expect(other.residuals[0]!.hash).not.toBe(report.residuals[0]!.hash);
  });

  it('scans a long line in full, in windows, including a secret across a window edge', async () => {
    const file = join(tmp.path, 'long.jsonl');
    const filler = 'word '.repeat(20_000);
    const line = `${filler}${SECRET} ${filler} tail ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789`;
    await writeFile(file, `${line}\n`);
    for (const windowChars of [4096, 7000, 1 << 20]) {
      const report = await verifyFile(file, { windowChars, overlapChars: 512 });
      expect(report.countsByKind).toEqual({ github_token: 1, openai_key: 1 });
      expect(report.residuals.every((r) => r.line === 1)).toBe(true);
    }
  });

  it('is clean on an empty file and fails with InputError on a missing one', async () => {
    const file = join(tmp.path, 'empty.jsonl');
    await writeFile(file, '');
    expect(await verifyFile(file)).toMatchObject({ clean: true, lines: 0 });
    await expect(verifyFile(join(tmp.path, 'nope.jsonl'))).rejects.toThrow(InputError);
  });

  it('flags a given name the redactor leaves (its own looser check) only when names are asked for', async () => {
    const file = join(tmp.path, 'names.jsonl');
    const text = 'Agnieszka naprawiła build wczoraj';
    expect(findPii(text)).toEqual([]); // the redactor's rules need a cue or an English sentence here
    await writeFile(file, `${JSON.stringify({ type: 'user', message: { content: text } })}\n`);
    expect((await verifyFile(file, { pii: ['names'] })).countsByKind).toEqual({ 'pii:names_loose': 1 });
    expect((await verifyFile(file, { pii: ['phones'] })).clean).toBe(true);
    expect((await verifyFile(file)).clean).toBe(true);
  });

  it('caps the listing but counts everything', async () => {
    const file = join(tmp.path, 'many.jsonl');
    const lines = Array.from({ length: 30 }, (_, i) => `{"m":"user${i}@example.org"}`);
    await writeFile(file, `${lines.join('\n')}\n`);
    const report = await verifyFile(file, { maxListed: 5 });
    expect(report).toMatchObject({ residualCount: 30, truncated: true });
    expect(report.residuals).toHaveLength(5);
  });
});

describe('maskedPreview', () => {
  it('shows at most three characters of a public prefix', () => {
    expect(maskedPreview('github_token', 'ghp_AbCdEfGhIj')).toBe('ghp…(14 chars)');
    expect(maskedPreview('high_entropy', 'AbCdEfGhIj0123456789')).toBe('…(20 chars)');
    expect(maskedPreview('identity:employer', 'Acme')).toBe('…(4 chars)');
  });
});

describe('scanText on pathological input', () => {
  it('finishes on repetitions that would be quadratic in a naive scanner', () => {
    for (const unit of ['-Users-', 'password=', 'http://a:b@', 'C:\\\\Users\\\\', 'a@a.a@a.', 'eyJ', '~a']) {
      const text = unit.repeat(Math.ceil(20_000 / unit.length));
      expect(Array.isArray(scanText(text))).toBe(true);
    }
  });
});
