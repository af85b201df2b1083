// One decode and validation step for every transcript reader (transcript-bytes.ts): the same
// file reads the same way in `sessions inspect/list`, persona and continuation runs, redact
// and verify; what cannot be read as a transcript is an input error naming the file (exit 2).
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../core/errors.js';
import { zstdCompress } from './redact/__fixtures__/zstd.js';
import { redactFile } from './redact/redact-file.js';
import { verifyFile } from './redact/verify/verify-file.js';
import { readSession } from './read.js';
import { CLAUDE_NOTES, CODEX_MAIN } from './testing/fixtures.js';

const DEMO_CODEX = join(import.meta.dirname, '..', '..', 'data', 'demo', 'codex-session.jsonl');
import { useTempDir } from './testing/temp-dir.js';
import { runCliCaptured } from '../cli/testing/run-cli.js';

const tmp = useTempDir('echolens-decode-');
const REPO = join(import.meta.dirname, '..', '..');

type Encoding = 'utf-8-bom' | 'utf-16le' | 'utf-16be' | 'utf-32le' | 'utf-32be';

/** `text` in `encoding`, with a byte-order mark when `bom` (UTF-32 written by hand: Node has no codec). */
function encodeText(text: string, encoding: Encoding, bom: boolean): Buffer {
  if (encoding === 'utf-8-bom') return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')]);
  const body = bom ? `\uFEFF${text}` : text;
  if (encoding === 'utf-16le') return Buffer.from(body, 'utf16le');
  if (encoding === 'utf-16be') return Buffer.from(body, 'utf16le').swap16();
  const points = [...body].map((ch) => ch.codePointAt(0)!);
  const out = Buffer.alloc(points.length * 4);
  points.forEach((cp, i) => {
    if (encoding === 'utf-32le') out.writeUInt32LE(cp, i * 4);
    else out.writeUInt32BE(cp, i * 4);
  });
  return out;
}

const run = runCliCaptured;

const VARIANTS: Array<[Encoding, boolean]> = [
  ['utf-8-bom', true],
  ['utf-16le', true],
  ['utf-16le', false],
  ['utf-16be', true],
  ['utf-32le', true],
  ['utf-32be', false],
];

describe('UTF-16 / UTF-32 / BOM transcripts are decoded the same way by every reader', () => {
  for (const [name, source] of [
    ['claude', CLAUDE_NOTES],
    ['codex', CODEX_MAIN],
  ] as const) {
    const text = readFileSync(source, 'utf8');
    it(`${name}: readSession, sessions inspect and redact agree with the UTF-8 file`, async () => {
      const plainFile = join(tmp.path, `${name}-plain.jsonl`);
      copyFileSync(source, plainFile);
      const plain = await readSession(plainFile);
      expect(plain.counters.agentSteps).toBeGreaterThan(0);
      const plainInspect = await run(['sessions', 'inspect', plainFile, '--json']);
      expect(plainInspect.code).toBe(0);
      const plainSummary = JSON.parse(plainInspect.out).summary;
      for (const [encoding, bom] of VARIANTS) {
        const file = join(tmp.path, `${name}-${encoding}-${bom}.jsonl`);
        writeFileSync(file, encodeText(text, encoding, bom));
        const session = await readSession(file);
        expect(session.tool, `${encoding} bom=${bom}`).toBe(plain.tool);
        expect(session.counters, `${encoding} bom=${bom}`).toEqual(plain.counters);
        expect(
          session.messages.map((m) => m.blocks),
          `${encoding} bom=${bom}`,
        ).toEqual(plain.messages.map((m) => m.blocks));
        expect(session.warnings.map((w) => [w.line, w.message])).toEqual(plain.warnings.map((w) => [w.line, w.message]));
        const inspect = await run(['sessions', 'inspect', file, '--json']);
        expect(inspect.code).toBe(0);
        const summary = JSON.parse(inspect.out).summary;
        // Only the file and its decoded size (a BOM is 3 bytes) may differ.
        expect({ ...summary, file: '', bytes: 0, warnings: 0 }).toEqual({ ...plainSummary, file: '', bytes: 0, warnings: 0 });
        // redact reads it too (and writes UTF-8 the plain reader reads the same way).
        const out = join(tmp.path, `${name}-${encoding}-${bom}.redacted.jsonl`);
        const report = await redactFile(file, out, { discover: false });
        expect(report.encoding).toBe(encoding === 'utf-8-bom' ? 'utf-8' : encoding);
        expect((await readSession(out)).counters).toEqual(plain.counters);
      }
    });
  }

  it('sessions list counts a UTF-16 transcript like its UTF-8 twin', async () => {
    const home = join(tmp.path, 'list-home');
    const project = join(home, 'projects', '-home-dev-notes');
    await import('node:fs/promises').then((fs) => fs.mkdir(project, { recursive: true }));
    writeFileSync(join(project, 'a0000000-0000-4000-8000-000000000001.jsonl'), readFileSync(CLAUDE_NOTES));
    writeFileSync(join(project, 'a0000000-0000-4000-8000-000000000002.jsonl'), encodeText(readFileSync(CLAUDE_NOTES, 'utf8'), 'utf-16le', true));
    process.env.ECHOLENS_CACHE_DIR = join(tmp.path, 'cache');
    const listed = await run(['sessions', 'list', '--claude-dir', home, '--codex-home', join(tmp.path, 'no-codex'), '--json', '--no-cache']);
    expect(listed.code).toBe(0);
    const rows = (JSON.parse(listed.out) as { sessions: Array<{ agentSteps: number; userTurns: number; warnings: number }> }).sessions;
    expect(rows).toHaveLength(2);
    expect(rows[0]!.agentSteps).toBeGreaterThan(0);
    expect(rows[1]).toMatchObject({ agentSteps: rows[0]!.agentSteps, userTurns: rows[0]!.userTurns, warnings: 0 });
  });
});

/** The model flags of a small simulated run of each audit on a session. */
const SMALL_RUN_FLAGS = {
  persona: ['--target', 'sim:persona', '--judge', 'sim:judge'],
  continuation: ['--target', 'sim:continuation', '--cutpoints', '10'],
};

describe('the audits read an encoded transcript like its UTF-8 twin', () => {
  it('persona run and continuation run --dry-run plan the same cells for UTF-8, UTF-16 and UTF-32 copies', async () => {
    const text = readFileSync(DEMO_CODEX, 'utf8');
    const plans: Record<string, string[]> = { persona: [], continuation: [] };
    for (const [encoding, bom] of [
      ['utf-8-bom', true],
      ['utf-16le', true],
      ['utf-32be', false],
    ] as Array<[Encoding, boolean]>) {
      const file = join(tmp.path, `rollout-demo-${encoding}.jsonl`);
      writeFileSync(file, encodeText(text, encoding, bom));
      for (const [audit, flags] of Object.entries(SMALL_RUN_FLAGS)) {
        const dry = await run([audit, 'run', '--session', file, ...flags, '--db', join(tmp.path, `${audit}-${encoding}.db`), '--dry-run']);
        expect(dry.code, dry.err).toBe(0);
        plans[audit]!.push(dry.out.replaceAll(file, '<file>'));
      }
    }
    for (const outputs of Object.values(plans)) {
      expect(outputs[0]).toMatch(/cells|cutpoints/);
      expect(new Set(outputs).size).toBe(1);
    }
  }, 120_000);
});

describe('what is refused, identically everywhere', () => {
  it.each([
    ['in the first 4 KiB', 1, /nul-1\.jsonl: binary data or an unknown text encoding/],
    ['after the first 4 KiB', 8, /nul-8\.jsonl: NUL byte at byte \d+/],
  ])('a NUL byte %s of a UTF-8 transcript: the same input error from readSession, redact, verify and inspect', async (_where, copies, expected) => {
    const file = join(tmp.path, `nul-${copies}.jsonl`);
    const good = readFileSync(CLAUDE_NOTES);
    writeFileSync(
      file,
      Buffer.concat([...Array.from({ length: copies }, () => good), Buffer.from('{"type":"user","message":{"role":"user","content":"a\u0000b"}}\n')]),
    );
    const messages: string[] = [];
    for (const read of [() => readSession(file), () => redactFile(file, join(tmp.path, 'nul.out.jsonl')), () => verifyFile(file)]) {
      const error = await read().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(InputError);
      messages.push((error as Error).message);
    }
    expect(new Set(messages).size).toBe(1);
    expect(messages[0]).toMatch(expected);
    const cli = await run(['sessions', 'inspect', file]);
    expect(cli.code).toBe(2);
    expect(cli.err).toMatch(expected);
  });

  it('a corrupt .zst: exit 2 with a clear message from inspect, redact and verify (never "empty transcript")', async () => {
    const good = zstdCompress(readFileSync(CODEX_MAIN)).bytes;
    const file = join(tmp.path, 'rollout-corrupt.jsonl.zst');
    const damaged = Buffer.from(good);
    damaged.fill(0x5a, Math.floor(damaged.length / 2), Math.floor(damaged.length / 2) + 16);
    writeFileSync(file, damaged);
    const truncated = join(tmp.path, 'rollout-truncated.jsonl.zst');
    writeFileSync(truncated, Buffer.from(good).subarray(0, Math.floor(good.length * 0.6)));
    for (const bad of [file, truncated]) {
      const inspect = await run(['sessions', 'inspect', bad]);
      expect(inspect.code).toBe(2);
      expect(inspect.err).toMatch(/corrupt or truncated zstd stream/);
      expect(inspect.err).toContain(bad);
      expect(inspect.out).toBe('');
      expect((await run(['sessions', 'redact', bad, '-o', join(tmp.path, 'z.out.jsonl')])).code).toBe(2);
      expect((await run(['sessions', 'verify', bad])).code).toBe(2);
    }
  });

  it('package.json and README.md are "not a Claude Code or Codex transcript" (exit 2), named', async () => {
    for (const name of ['package.json', 'README.md']) {
      const file = join(REPO, name);
      await expect(readSession(file)).rejects.toThrow(InputError);
      await expect(readSession(file)).rejects.toThrow(/not a Claude Code or Codex transcript/);
      const inspect = await run(['sessions', 'inspect', file]);
      expect(inspect.code).toBe(2);
      expect(inspect.err).toContain(`${file}: not a Claude Code or Codex transcript`);
      // Forcing a tool does not make it one.
      expect((await run(['sessions', 'inspect', file, '--tool', 'codex'])).code).toBe(2);
    }
  });

  it('persona run --session README.md and continuation run --session package.json exit 2 "not a transcript"', async () => {
    for (const [audit, input] of [
      ['persona', 'README.md'],
      ['continuation', 'package.json'],
    ] as const) {
      const r = await run([audit, 'run', '--session', join(REPO, input), ...SMALL_RUN_FLAGS[audit], '--db', join(tmp.path, `${audit}.db`)]);
      expect(r.code).toBe(2);
      expect(r.err).toContain(`${input}: not a Claude Code or Codex transcript`);
      expect(r.err).not.toMatch(/agentSteps/);
    }
  });

  it('malformed lines inside a real transcript still only warn', async () => {
    const lines = readFileSync(CODEX_MAIN, 'utf8').split('\n');
    const file = join(tmp.path, 'rollout-damaged.jsonl');
    writeFileSync(file, ['# a comment', lines[0], '{"broken": ', ...lines.slice(1), '[1,2]', '{"type":"module"}'].join('\n'));
    const session = await readSession(file);
    expect(session.tool).toBe('codex');
    expect(session.counters).toEqual((await readSession(CODEX_MAIN)).counters);
    expect(session.warnings.map((w) => w.line)).toEqual(expect.arrayContaining([1, 3]));
    expect(session.warnings.length).toBeGreaterThanOrEqual(4);
    expect((await run(['sessions', 'inspect', file])).code).toBe(0);
  });

  it('an empty or blank file is an empty transcript (a warning), not an error', async () => {
    const file = join(tmp.path, 'blank.jsonl');
    writeFileSync(file, '\n  \n');
    expect((await readSession(file)).messages).toEqual([]);
  });
});
