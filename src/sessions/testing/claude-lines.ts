import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';
import { buildPrefix } from '../prefix.js';
import { readSession } from '../read.js';

/**
 * A temporary directory for the calling test file (removed after its tests) and a `write` that puts
 * a file in it and returns the file's path.
 */
export function useWriteDir(prefix: string): { dir: string; write: (name: string, content: string | Buffer) => string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, content: string | Buffer): string => {
    const file = join(dir, name);
    writeFileSync(file, content);
    return file;
  };
  return { dir, write };
}

/** One JSON Lines record. */
export const line = (o: unknown): string => `${JSON.stringify(o)}\n`;

/** A Claude Code user record of session s1. */
export const user = (uuid: string, parent: string | null, content: unknown): string =>
  line({ type: 'user', uuid, parentUuid: parent, sessionId: 's1', timestamp: '2026-01-01T00:00:00Z', message: { role: 'user', content } });

/** A Claude Code assistant record of session s1 answering with `text`. */
export const assistant = (uuid: string, parent: string, text: string): string =>
  line({
    type: 'assistant',
    uuid,
    parentUuid: parent,
    sessionId: 's1',
    message: { id: `m-${uuid}`, role: 'assistant', model: 'claude-x', content: [{ type: 'text', text }] },
  });

/**
 * Writes (with `write`) a session whose tool result is one line of `megabytes` MB and checks that it
 * is read whole, and that over `maxLineBytes` (1 MB) the line is skipped with warnings naming the lines.
 */
export async function expectBigLineRead(write: (name: string, content: string) => string, megabytes: number): Promise<void> {
  const big = 'x'.repeat(megabytes * 1024 * 1024);
  const file = write(
    'big.jsonl',
    user('a', null, 'run it') +
      line({
        type: 'assistant',
        uuid: 'b',
        parentUuid: 'a',
        message: { id: 'm1', role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'cat big' } }] },
      }) +
      user('c', 'b', [{ type: 'tool_result', tool_use_id: 't1', content: big }]) +
      assistant('d', 'c', 'done'),
  );
  const s = await readSession(file);
  expect(s.warnings).toEqual([]);
  const result = s.messages[2]!.blocks[0]!;
  expect(result.type === 'tool_result' && result.content.length).toBe(big.length);
  const p = buildPrefix(s, 4);
  expect(p.messages[0]!.content).toContain(`[tool_result: ${'x'.repeat(200)}]`);
  const capped = await readSession(file, { maxLineBytes: 1024 * 1024 });
  // the chain is broken at the skipped line: the reader says so and keeps what it can reach
  expect(capped.warnings.map((w) => [w.line, w.message])).toEqual([
    [3, 'line longer than 1048576 bytes skipped'],
    [4, 'parent c not in this file; the main chain starts here'],
  ]);
  expect(capped.counters.messages).toBe(1);
}
