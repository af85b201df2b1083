import { createHash } from 'node:crypto';
import { copyFile, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decompress } from 'fzstd';
import { describe, expect, it } from 'vitest';
import { InputError, InvalidArgumentError } from '../../core/errors.js';
import { buildPlantedCorpus, renderCorpus } from './__fixtures__/planted-corpus.js';
import { rawZstdFrame, zstdCompress } from './__fixtures__/zstd.js';
import { readLineParts } from './line-reader.js';
import { redactFile } from './redact-file.js';
import { verifyFile } from './verify/verify-file.js';
import { useTempDir } from '../testing/temp-dir.js';

const FIXTURES = join(import.meta.dirname, '__fixtures__', 'zst');
const FIXTURE_SECRETS = [
  'sk-proj-Zx81QmVv0LpK3nTr7YwB2cD4eF6gH8iJ0kL2mN4oP6qR8sT0uV2wX4yZ6aB8cD0eF',
  'ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789',
  'alice.smith@example.org',
  '/Users/alice',
];

const tmp = useTempDir('echolens-redact-zst-', 'test');

const sha256 = async (path: string) =>
  createHash('sha256')
    .update(await readFile(path))
    .digest('hex');

async function parts(path: string, partBytes?: number) {
  const out = [];
  for await (const part of readLineParts(path, partBytes)) out.push(part);
  return out;
}

async function writeZst(name: string, plain: string | Buffer): Promise<string> {
  const path = join(tmp.path, name);
  const { bytes, tool } = zstdCompress(Buffer.from(plain));
  await writeFile(path, bytes);
  expect(['zstd', 'raw-blocks']).toContain(tool);
  return path;
}

describe('redaction reads .jsonl.zst input', () => {
  it('the committed fixture (made with zstd -19) reads exactly like its plain source, CRLF and blank line included', async () => {
    const plain = join(FIXTURES, 'session.jsonl');
    const zst = join(FIXTURES, 'session.jsonl.zst');
    expect(Buffer.from(decompress(new Uint8Array(await readFile(zst)))).equals(await readFile(plain))).toBe(true);
    const fromZst = await parts(zst);
    expect(fromZst).toEqual(await parts(plain));
    expect(fromZst.map((p) => p.terminator)).toEqual(['\n', '\r\n', '\n', '\n']);
  });

  it('redacts the committed .zst into plain JSONL identical to redacting the plain file; the input is untouched', async () => {
    const zst = join(tmp.path, 'rollout.jsonl.zst');
    await copyFile(join(FIXTURES, 'session.jsonl.zst'), zst);
    const before = await sha256(zst);
    const fromZst = await redactFile(zst, join(tmp.path, 'from-zst.jsonl'));
    const fromPlain = await redactFile(join(FIXTURES, 'session.jsonl'), join(tmp.path, 'from-plain.jsonl'));
    const output = await readFile(join(tmp.path, 'from-zst.jsonl'), 'utf8');
    expect(output).toBe(await readFile(join(tmp.path, 'from-plain.jsonl'), 'utf8'));
    expect(fromZst).toEqual(fromPlain);
    expect(fromZst.replacements).toBeGreaterThanOrEqual(FIXTURE_SECRETS.length);
    for (const secret of FIXTURE_SECRETS) expect(output).not.toContain(secret);
    expect(output).toContain('<SECRET:');
    expect(output.split('\n').map((line) => line.trim() === '' || JSON.parse(line) !== null)).not.toContain(false);
    expect(await sha256(zst)).toBe(before);
    expect((await verifyFile(join(tmp.path, 'from-zst.jsonl'))).clean).toBe(true);
  });

  it('planted corpus compressed at run time: redacted output equals the plain redaction and verifies clean', async () => {
    const corpus = buildPlantedCorpus();
    const text = `${renderCorpus(corpus).join('\n')}\n`;
    await writeFile(join(tmp.path, 'planted.jsonl'), text);
    const zst = await writeZst('planted.jsonl.zst', text);
    const before = await sha256(zst);
    const options = { identities: corpus.identities, quotes: corpus.quotes };
    const fromZst = await redactFile(zst, join(tmp.path, 'zst.redacted.jsonl'), options);
    const fromPlain = await redactFile(join(tmp.path, 'planted.jsonl'), join(tmp.path, 'plain.redacted.jsonl'), options);
    const output = await readFile(join(tmp.path, 'zst.redacted.jsonl'), 'utf8');
    expect(output).toBe(await readFile(join(tmp.path, 'plain.redacted.jsonl'), 'utf8'));
    expect(fromZst).toEqual(fromPlain);
    expect(fromZst.lines).toBe(corpus.lines.length);
    // Every planted secret of 12+ characters is gone verbatim (shorter identity terms are checked by verify).
    for (const planted of corpus.planted) if (planted.value.length >= 12) expect(output).not.toContain(planted.value);
    expect(await sha256(zst)).toBe(before);
    const report = await verifyFile(join(tmp.path, 'zst.redacted.jsonl'), { identities: corpus.identities });
    expect(report.residuals).toEqual([]);
    expect(report.clean).toBe(true);
  });

  it('verify on a .zst that still holds a secret fails and lists it masked, at the right line', async () => {
    const secret = 'ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789';
    const zst = await writeZst('leaky.jsonl.zst', `{"t":"fine"}\n{"t":"token ${secret}"}\n`);
    const report = await verifyFile(zst);
    expect(report.clean).toBe(false);
    expect(report.lines).toBe(2);
    expect(report.residuals).toHaveLength(1);
    expect(report.residuals[0]).toMatchObject({ file: zst, line: 2 });
    expect(report.residuals[0]!.preview).toMatch(/…\(\d+ chars\)/);
    expect(JSON.stringify(report)).not.toContain(secret);
    expect(JSON.stringify(report)).not.toContain(secret.slice(4, 16));
  });

  it('long lines across many decompressed chunks and several concatenated frames are read whole', async () => {
    const long = `{"t":"${'abcdefghij'.repeat(40_000)}"}`;
    const frames = [rawZstdFrame(Buffer.from(`${long}\n{"b":1}\n`)), rawZstdFrame(Buffer.from('{"c":2}\r\nlast'))];
    const zst = join(tmp.path, 'multi.jsonl.zst');
    await writeFile(zst, Buffer.concat(frames));
    const got = await parts(zst, 64 * 1024);
    const whole = (line: number) =>
      got
        .filter((p) => p.line === line)
        .map((p) => p.text)
        .join('');
    expect(got.filter((p) => p.line === 1).length).toBeGreaterThan(3);
    expect(whole(1)).toBe(long);
    expect([whole(2), whole(3), whole(4)]).toEqual(['{"b":1}', '{"c":2}', 'last']);
    expect(got.filter((p) => p.end).map((p) => p.terminator)).toEqual(['\n', '\n', '\r\n', '']);
  });

  it.each([
    ['out.jsonl.zst', 'out.jsonl'],
    ['out.ZST', 'out.jsonl'],
    ['redacted.zst', 'redacted.jsonl'],
  ])('refuses -o %s and suggests %s; nothing is written', async (name, suggestion) => {
    const zst = await writeZst('in.jsonl.zst', '{"t":"x"}\n');
    const error = await redactFile(zst, join(tmp.path, name)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toMatch(/ends in \.zst.*plain JSONL/);
    expect((error as Error).message).toContain(`use ${join(tmp.path, suggestion)}`);
    expect((await readdir(tmp.path)).sort()).toEqual(['in.jsonl.zst']);
  });

  it('does not suggest an output name that already exists (Codex may keep the plain rollout beside the .zst)', async () => {
    const zst = await writeZst('rollout.jsonl.zst', '{"t":"x"}\n');
    await writeFile(join(tmp.path, 'rollout.jsonl'), '{"t":"original"}\n');
    const error = await redactFile(zst, join(tmp.path, 'rollout.jsonl.zst')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toContain(`use ${join(tmp.path, 'rollout.redacted.jsonl')}`);
    expect(await readFile(join(tmp.path, 'rollout.jsonl'), 'utf8')).toBe('{"t":"original"}\n');
  });

  it.each([
    ['garbage', () => Buffer.from('{"this":"is not zstd"}\n')],
    ['truncated', () => zstdCompress(Buffer.from(`{"t":"${'x'.repeat(5000)}"}\n`.repeat(50))).bytes.subarray(0, 40)],
    // A whole valid frame first: the damage is found after lines were already read.
    ['trailing-garbage', () => Buffer.concat([rawZstdFrame(Buffer.from('{"t":"ok"}\n'.repeat(2000))), Buffer.alloc(64, 0x41)])],
  ])('a %s .zst is an InputError naming the file; redact writes nothing, verify reports nothing', async (_, bytes) => {
    const zst = join(tmp.path, 'broken.jsonl.zst');
    await writeFile(zst, bytes());
    const before = await sha256(zst);
    for (const discover of [true, false]) {
      const error = await redactFile(zst, join(tmp.path, 'out.jsonl'), { discover }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InputError);
      expect((error as InputError).file).toBe(zst);
      expect((error as Error).message).toMatch(new RegExp(`^${zst.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .*zstd stream`));
    }
    const verifyError = await verifyFile(zst).catch((e: unknown) => e);
    expect(verifyError).toBeInstanceOf(InputError);
    expect((verifyError as Error).message).toContain(zst);
    expect((await readdir(tmp.path)).sort()).toEqual(['broken.jsonl.zst']);
    expect(await sha256(zst)).toBe(before);
  });
});
