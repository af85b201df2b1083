import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { base64Bytes, formatBytes, mediaPlaceholder } from './media.js';
import { buildPrefix } from './prefix.js';
import { readSession } from './read.js';
import { RENDER_MODES } from './render.js';
import { FIXTURES } from './testing/fixtures.js';
import type { Block, Session } from './types.js';

const EVENTS = join(FIXTURES, 'codex-events.jsonl');
const NO_EVENTS = join(FIXTURES, 'codex-no-events.jsonl');
const tmp = mkdtempSync(join(tmpdir(), 'echolens-codex-events-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const firstText = (blocks: Block[]): string => {
  const b = blocks.find((x) => x.type === 'text');
  return b && b.type === 'text' ? b.text : '';
};

/** The user-side messages that are not tool results or summaries, as `kind:` and the first `n` characters. */
const promptKinds = (s: Session, n: number): string[] =>
  s.messages
    .filter((m) => m.role === 'user' && m.kind !== 'tool_result' && m.kind !== 'compaction_summary')
    .map((m) => `${m.kind}:${firstText(m.blocks).slice(0, n)}`);

/** The user-turn counter along the timeline counts the human messages so far. */
const expectTurnsFollowKinds = (s: Session): void => {
  expect(s.messages.map((m) => m.counters.userTurns)).toEqual(s.messages.map((_, i) => s.messages.slice(0, i + 1).filter((m) => m.kind === 'human').length));
};

/** One Codex rollout line, and its user and assistant messages. */
const line = (type: string, payload: unknown): string => `${JSON.stringify({ timestamp: '2026-04-02T10:00:00.000Z', type, payload })}\n`;
const user = (text: string): string => line('response_item', { type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
const assistant = (text: string): string => line('response_item', { type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] });
/** A rollout file in the test folder: a session_meta line (the id from the name), then `lines`. */
const rollout = (name: string, ...lines: string[]): string => {
  const file = join(tmp, name);
  writeFileSync(file, line('session_meta', { id: name, cwd: '/w' }) + lines.join(''));
  return file;
};

describe('Codex human turns come from user_message events when the rollout has them', () => {
  it('counts only the typed prompts: unrecognisable injected guidelines are not turns, before or after a compaction', async () => {
    for (const content of ['full', 'none'] as const) {
      const s = await readSession(EVENTS, { content });
      expect(s.counters.userTurns, content).toBe(3);
      expect(s.compactions).toHaveLength(1);
      expect(s.compactions[0]!.counters.userTurns, content).toBe(2);
    }
    const s = await readSession(EVENTS);
    expect(promptKinds(s, 24)).toEqual([
      'injected:Repository guidelines fo',
      'injected:<environment_context>\n  ',
      'human:Add a /version endpoint.',
      'human:Now write tests.',
      'injected:Repository guidelines fo',
      'human:Here is the screenshot o',
    ]);
    // Counters along the timeline follow the corrected kinds.
    expectTurnsFollowKinds(s);
  });

  it('matches a prompt the message wraps (IDE context before it)', async () => {
    const file = rollout(
      'wrapped.jsonl',
      user('Conventions: tabs, not spaces.'),
      user('# Context from my IDE setup:\n## Open tabs:\n- build.ts\n\n## My request for Codex:\nFix the build.'),
      line('event_msg', { type: 'user_message', message: 'Fix the build.', images: [] }),
      assistant('Fixed.'),
    );
    const s = await readSession(file);
    expect(s.messages.map((m) => m.kind)).toEqual(['injected', 'human', 'assistant']);
    expect(s.counters.userTurns).toBe(1);
  });

  it('falls back to text classification in a rollout without user_message events', async () => {
    const s = await readSession(NO_EVENTS);
    // The guidelines are not recognisable as harness text: without events they count.
    expect(s.counters.userTurns).toBe(5);
  });
});

describe('images render as typed placeholders in every rendering', () => {
  it('formats type and size', () => {
    expect(mediaPlaceholder({ kind: 'image', mediaType: 'image/png', bytes: 48 * 1024 })).toBe('[image: image/png, 48 KB]');
    expect(mediaPlaceholder({ kind: 'image' })).toBe('[image]');
    expect(mediaPlaceholder({ kind: 'document', mediaType: 'application/pdf', bytes: 3 * 1024 * 1024 })).toBe('[document: application/pdf, 3.0 MB]');
    expect(formatBytes(300)).toBe('300 B');
    expect(base64Bytes(Buffer.alloc(2048).toString('base64'))).toBe(2048);
    expect(base64Bytes(Buffer.alloc(10).toString('base64'))).toBe(10);
  });

  it('Codex: a prompt image and an image-only tool output', async () => {
    const s = await readSession(EVENTS);
    for (const mode of RENDER_MODES) {
      const text = buildPrefix(s, s.messages.length, { mode })
        .messages.map((m) => m.content)
        .join('\n');
      expect(text, mode).toContain('Here is the screenshot of the error page. Fix it.\n[image: image/png, 2 KB]');
      expect(text, mode).toContain('[tool_result: [image: image/png, 2 KB]]');
    }
  });

  it('Claude Code: an image-only prompt and an image-only tool result', async () => {
    const file = join(tmp, 'claude-images.jsonl');
    const data = Buffer.alloc(48 * 1024, 7).toString('base64');
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data } };
    const line = (o: unknown): string => `${JSON.stringify(o)}\n`;
    writeFileSync(
      file,
      line({ type: 'user', uuid: 'u1', parentUuid: null, sessionId: 's', message: { role: 'user', content: [image] } }) +
        line({
          type: 'assistant',
          uuid: 'a1',
          parentUuid: 'u1',
          sessionId: 's',
          message: { id: 'm1', role: 'assistant', model: 'x', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { file_path: 'shot.png' } }] },
        }) +
        line({
          type: 'user',
          uuid: 'u2',
          parentUuid: 'a1',
          sessionId: 's',
          message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [image] }] },
        }) +
        line({
          type: 'assistant',
          uuid: 'a2',
          parentUuid: 'u2',
          sessionId: 's',
          message: { id: 'm2', role: 'assistant', model: 'x', content: [{ type: 'text', text: 'A cat.' }] },
        }),
    );
    const s = await readSession(file);
    expect(s.messages[0]!.kind).toBe('human');
    for (const mode of RENDER_MODES) {
      const text = buildPrefix(s, s.messages.length, { mode })
        .messages.map((m) => m.content)
        .join('\n');
      expect(text, mode).toContain('[image: image/png, 48 KB]');
      expect(text, mode).toContain('[tool_result: [image: image/png, 48 KB]]');
    }
  });
});

describe('Codex typed prompts whose user_message event text differs from the message (redacted apart)', () => {
  const APART = join(FIXTURES, 'codex-redacted-apart.jsonl');

  it('each user_message event is a typed prompt, matched by order to the adjacent user message', async () => {
    for (const content of ['full', 'none'] as const) {
      const s = await readSession(APART, { content });
      // 6 events, 5 of whose texts match no message: all 6 are human turns.
      expect(s.counters.userTurns, content).toBe(6);
      expect(s.compactions).toHaveLength(1);
      expect(s.compactions[0]!.counters.userTurns, content).toBe(4);
      expect(s.warnings).toEqual([]);
    }
    const s = await readSession(APART);
    expect(promptKinds(s, 20)).toEqual([
      'injected:Repository guideline',
      'injected:<environment_context',
      'human:Rename the <PROJECT>',
      'human:Check that <HOST>:<P',
      'human:Now add a test for t',
      'human:# Context from my ID',
      'injected:Repository guideline',
      'human:Commit as <USER> <<E',
      'human:Push to <HOST> and o',
    ]);
    expectTurnsFollowKinds(s);
  });

  it('an event never takes harness text or a message that is not next to it', async () => {
    const file = rollout(
      'not-adjacent.jsonl',
      user('Team notes: tabs, not spaces.'),
      assistant('Noted.'),
      // An event after an assistant message, then harness text: neither is adjacent prompt text.
      line('event_msg', { type: 'user_message', message: 'something typed [REDACTED]', images: [] }),
      user('<environment_context>\n  <cwd>/w</cwd>\n</environment_context>'),
      assistant('Done.'),
    );
    const s = await readSession(file);
    expect(s.messages.map((m) => m.kind)).toEqual(['injected', 'assistant', 'injected', 'assistant']);
    expect(s.counters.userTurns).toBe(0);
  });
});
