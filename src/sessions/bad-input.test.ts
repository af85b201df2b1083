import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../core/errors.js';
import { discoverSessions, summarizeSessions } from './discover.js';
import { CLAUDE_MAIN, CODEX_MAIN } from './testing/fixtures.js';
import { LineSplitter } from './line-splitter.js';
import { compactionPositions } from './positions.js';
import { buildPrefix } from './prefix.js';
import { readSession } from './read.js';
import { assistant, expectBigLineRead, line, user, useWriteDir } from './testing/claude-lines.js';
import { fillerContext, shuffledRealContext } from './reference.js';
import { RENDER_MODES } from './render.js';

const { dir, write } = useWriteDir('echolens-sessions-bad-');

describe('bad input: warnings naming file:line, the rest still read, never a throw', () => {
  it('a truncated last line', async () => {
    const file = write('truncated.jsonl', user('a', null, 'hello') + assistant('b', 'a', 'hi') + '{"type":"user","uuid":"c","message":{"role":"us');
    const s = await readSession(file);
    expect(s.counters.messages).toBe(2);
    expect(s.warnings).toEqual([{ file, line: 3, message: expect.stringMatching(/^invalid JSON skipped/) }]);
  });

  it('invalid UTF-8 is decoded with replacement characters and reported', async () => {
    const bad = Buffer.concat([
      Buffer.from(user('a', null, 'before')),
      Buffer.from('{"type":"user","uuid":"b","parentUuid":"a","message":{"role":"user","content":"caf'),
      Buffer.from([0xc3, 0x28, 0xff]),
      Buffer.from('"}}\n'),
      Buffer.from(assistant('c', 'b', 'after')),
    ]);
    const file = write('utf8.jsonl', bad);
    const s = await readSession(file);
    expect(s.counters.messages).toBe(3);
    expect(s.warnings).toEqual([{ file, line: 2, message: 'invalid UTF-8 (decoded with replacement characters)' }]);
    const text = s.messages[1]!.blocks[0]!;
    expect(text.type === 'text' && text.text.includes('\uFFFD')).toBe(true);
  });

  it('a 4 MB single line (50 MB in bad-input-large.slow.test.ts) is read; over maxLineBytes it is skipped with a warning', async () => {
    await expectBigLineRead(write, 4);
  }, 180_000);

  it('unknown record types and unknown Codex items', async () => {
    const file = write(
      'rollout-unknown.jsonl',
      line({ timestamp: '2026-01-01T00:00:00Z', type: 'session_meta', payload: { id: 't1', cwd: '/w' } }) +
        line({ timestamp: '2026-01-01T00:00:01Z', type: 'brand_new_kind', payload: {} }) +
        line({ timestamp: '2026-01-01T00:00:02Z', type: 'response_item', payload: { type: 'hologram_call', x: 1 } }) +
        line({
          timestamp: '2026-01-01T00:00:03Z',
          type: 'response_item',
          payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
        }) +
        line([1, 2, 3]) +
        line({ timestamp: '2026-01-01T00:00:04Z', type: 'event_msg', payload: { type: 'thread_rolled_back', num_turns: 'two' } }),
    );
    const s = await readSession(file);
    expect(s.counters.userTurns).toBe(1);
    expect(s.warnings.map((w) => w.line)).toEqual([2, 3, 5, 6]);
  });

  it('an empty file, a blank file, a missing file', async () => {
    const empty = await readSession(write('empty.jsonl', ''));
    expect(empty.counters).toEqual({ agentSteps: 0, userTurns: 0, messages: 0, assistantMessages: 0 });
    expect(empty.warnings.map((w) => w.message)).toEqual(['empty transcript']);
    const blank = await readSession(write('blank.jsonl', '\n\n  \n'));
    expect(blank.messages).toEqual([]);
    expect(buildPrefix(blank, 0).messages).toEqual([]);
    await expect(readSession(join(dir, 'nope.jsonl'))).rejects.toBeInstanceOf(InputError);
    await expect(readSession(join(dir, 'nope.jsonl'))).rejects.toThrow(/nope\.jsonl: cannot open transcript \(ENOENT\)/);
  });

  it('a corrupt zstd stream is an input error naming the file (never an empty transcript)', async () => {
    const file = write('rollout-corrupt.jsonl.zst', Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3, 4, 5, 6, 7, 8]));
    await expect(readSession(file)).rejects.toBeInstanceOf(InputError);
    await expect(readSession(file)).rejects.toThrow(/rollout-corrupt\.jsonl\.zst: corrupt or truncated zstd stream/);
  });

  it('the line splitter gives the same lines for any chunking', () => {
    const text = Buffer.from('a\r\nbb\n\nccc\né\n{"x":1}');
    const expected: string[] = [];
    const reference = new LineSplitter({ line: (_n, t) => expected.push(t), warn: () => {} });
    reference.push(text);
    reference.end();
    expect(expected).toEqual(['a', 'bb', 'ccc', 'é', '{"x":1}']);
    for (let size = 1; size <= text.length; size += 1) {
      const got: string[] = [];
      const warnings: string[] = [];
      const splitter = new LineSplitter({ line: (_n, t) => got.push(t), warn: (_n, m) => warnings.push(m) });
      for (let i = 0; i < text.length; i += size) splitter.push(text.subarray(i, i + size));
      splitter.end();
      expect(got).toEqual(expected);
      expect(warnings).toEqual([]);
    }
  });

  it('a directory with thousands of files (and junk) is listed without a crash', async () => {
    const root = join(dir, 'many', 'projects');
    for (let p = 0; p < 30; p += 1) {
      const project = join(root, `-home-u-p${p}`);
      mkdirSync(project, { recursive: true });
      for (let i = 0; i < 100; i += 1) {
        const id = `${p}-${i}`;
        writeFileSync(join(project, `${id}.jsonl`), user(`u${id}`, null, `task ${id}`) + assistant(`a${id}`, `u${id}`, 'ok'));
      }
      writeFileSync(join(project, 'notes.txt'), 'not a transcript');
      writeFileSync(join(project, 'junk.jsonl'), Buffer.from([0xff, 0x00, 0x13, 0x37]));
    }
    const found = await discoverSessions({ claude: [root], codex: [join(dir, 'missing-codex')] });
    expect(found.sessions).toHaveLength(3030);
    const summaries = await summarizeSessions(found.sessions);
    expect(summaries).toHaveLength(3030);
    expect(summaries.filter((s) => s.agentSteps === 2)).toHaveLength(3000);
    expect(summaries.filter((s) => s.file.endsWith('junk.jsonl')).every((s) => s.warnings > 0)).toBe(true);
  }, 180_000);
});

describe('fuzz: random mutations of fixture lines never throw (count-bounded)', () => {
  const sources = [readFileSync(CLAUDE_MAIN, 'utf8').split('\n'), readFileSync(CODEX_MAIN, 'utf8').split('\n')];
  let state = 20260314;
  const random = (): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const junkValues: unknown[] = [null, 0, -1, 1e308, '', 'x', [], {}, true, [{}], { type: 'text' }, '<synthetic>', 'compact_boundary'];

  function mutateValue(value: unknown, depth: number): unknown {
    if (depth > 4 || random() < 0.15) return pick(junkValues);
    if (Array.isArray(value)) {
      const copy = value.map((v) => (random() < 0.3 ? mutateValue(v, depth + 1) : v));
      if (random() < 0.2) copy.reverse();
      return copy;
    }
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        if (random() < 0.1) continue;
        out[k] = random() < 0.3 ? mutateValue(v, depth + 1) : v;
      }
      return out;
    }
    return random() < 0.5 ? pick(junkValues) : value;
  }

  function mutateLine(text: string, all: string[]): string {
    const r = random();
    if (r < 0.15) return text.slice(0, Math.floor(random() * text.length));
    if (r < 0.25) return pick(all);
    if (r < 0.3) return '';
    // (A raw NUL byte makes the whole file unreadable as text: decode.test.ts covers that.)
    if (r < 0.35) return `${text.slice(0, 10)}\u0001\uFFFF${text.slice(10)}`;
    try {
      const value: unknown = JSON.parse(text);
      if (r < 0.45 && value && typeof value === 'object') {
        const v = value as Record<string, unknown>;
        // DAG damage: self-parents, cycles, dangling links
        v.parentUuid = random() < 0.5 ? v.uuid : pick(['missing', null, 'aaaaaaaa-0000-4000-8000-000000000035']);
        return JSON.stringify(v);
      }
      return JSON.stringify(mutateValue(value, 0));
    } catch {
      return text;
    }
  }

  it('400 mutated transcripts read, positioned, rendered and filled', async () => {
    for (let iteration = 0; iteration < 400; iteration += 1) {
      const lines = pick(sources).filter((l) => l !== '');
      const mutated = lines.map((l) => (random() < 0.3 ? mutateLine(l, lines) : l));
      if (random() < 0.3) mutated.push(...mutated.slice(0, Math.floor(random() * 5)));
      const file = write(`fuzz-${iteration % 8}.jsonl`, mutated.join('\n'));
      const tool = pick([undefined, 'claude', 'codex'] as const);
      const session = await readSession(file, tool ? { tool } : {});
      expect(session.counters.messages).toBe(session.messages.length);
      compactionPositions(session, { beyond: 'drop' });
      for (const end of [0, Math.floor(session.messages.length / 2), session.messages.length]) {
        for (const mode of RENDER_MODES) {
          const prefix = buildPrefix(session, end, { mode, maxChars: 400 });
          fillerContext(prefix, { seed: iteration });
          shuffledRealContext(prefix, { seed: iteration });
        }
      }
    }
  }, 180_000);
});
