import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sessionGoal } from './goal.js';
import { readSession } from './read.js';
import { CLAUDE_MAIN, CODEX_MAIN, FIXTURES } from './testing/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'echolens-goal-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let n = 0;
function claudeFile(userTexts: Array<string | { text: string; meta: boolean }>): string {
  n += 1;
  const file = join(tmp, `s${n}.jsonl`);
  let parent: string | null = null;
  const lines: string[] = [];
  userTexts.forEach((u, i) => {
    const { text, meta } = typeof u === 'string' ? { text: u, meta: false } : u;
    lines.push(
      JSON.stringify({
        type: 'user',
        uuid: `u${i}`,
        parentUuid: parent,
        sessionId: 's',
        ...(meta ? { isMeta: true } : {}),
        message: { role: 'user', content: text },
      }),
    );
    lines.push(
      JSON.stringify({
        type: 'assistant',
        uuid: `a${i}`,
        parentUuid: `u${i}`,
        sessionId: 's',
        message: { id: `m${i}`, role: 'assistant', model: 'x', content: [{ type: 'text', text: 'ok' }] },
      }),
    );
    parent = `a${i}`;
  });
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

describe('session goal for re-injection', () => {
  it('is the first human prompt of an ordinary session', async () => {
    const goal = sessionGoal(await readSession(CLAUDE_MAIN));
    expect(goal).toMatchObject({ text: 'The checkout total is wrong when a coupon is applied. Can you find the bug?', source: 'prompt', skipped: [] });
    expect(sessionGoal(await readSession(CODEX_MAIN))?.text).toBe('The /health endpoint returns 500. Find out why.');
    // Codex: injected guidelines (unrecognisable text) are not the goal once events tell prompts apart.
    expect(sessionGoal(await readSession(join(FIXTURES, 'codex-events.jsonl')))?.text).toBe('Add a /version endpoint.');
  });

  it('skips a slash command, its expansion and harness prompts', async () => {
    const file = claudeFile([
      '<command-message>init is analyzing your codebase…</command-message>\n<command-name>/init</command-name>',
      'Please analyze this codebase and create a CLAUDE.md file, which will be given to future instances of Claude Code.',
      '<command-name>/review</command-name>',
      'Review the open pull request for style problems.',
      'Make the login form keep the e-mail after a failed attempt.',
    ]);
    const s = await readSession(file);
    const goal = sessionGoal(s)!;
    expect(goal.text).toBe('Make the login form keep the e-mail after a failed attempt.');
    expect(goal.skipped.map((k) => k.reason)).toEqual(['slash command expansion', 'slash command expansion']);
    expect(s.messages[goal.messageIndex]!.kind).toBe('human');
  });

  it('skips a typed slash command and an /init prompt written without its command line; falls back to command arguments', async () => {
    const typed = await readSession(claudeFile(['/compact', 'Generate a file named AGENTS.md that serves as a contributor guide.', 'Port the CLI to Deno.']));
    expect(sessionGoal(typed)).toMatchObject({ text: 'Port the CLI to Deno.', skipped: [{ reason: 'slash command' }, { reason: 'harness prompt' }] });
    const onlyCommand = await readSession(
      claudeFile([
        '<command-name>/fix</command-name>\n<command-args>the flaky upload test</command-args>',
        'Fix the flaky upload test: expanded instructions.',
      ]),
    );
    expect(sessionGoal(onlyCommand)).toMatchObject({ text: 'the flaky upload test', source: 'command arguments' });
    expect(sessionGoal(await readSession(claudeFile(['/clear'])))).toBeUndefined();
  });
});
