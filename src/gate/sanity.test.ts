import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { runCliInProcess } from '../cli/testing/run-cli.js';
import { startSimWireServer } from '../experiment/testing/sim-wire-server.js';
import type { FakeServer } from '../models/testing/index.js';
import { personaArgs } from '../cli/testing/persona-args.js';
import { answerSanity, type SanityCell } from './sanity.js';

const cell = (model: string, key: string, labels: Record<string, unknown>, text: string): SanityCell => ({
  model,
  key,
  labels,
  result: { status: 'done', text },
});

describe('answerSanity (pure)', () => {
  const grid = (answer: (arm: string, probe: number, position: number) => string) => {
    const cells: SanityCell[] = [];
    for (const arm of ['real', 'filler'])
      for (let probe = 0; probe < 3; probe++)
        for (let position = 0; position < 2; position++)
          cells.push(cell('t:m', `${arm}-${probe}-${position}`, { stage: 'target', arm, probe, position }, answer(arm, probe, position)));
    // Judges answer alike legitimately: never judged.
    for (let i = 0; i < 6; i++) cells.push(cell('j:m', `judge-${i}`, { stage: 'judge', targetKey: `k${i}` }, '{"score": 3}'));
    return cells;
  };

  it('flags one answer to every request', () => {
    expect(answerSanity(grid(() => 'OK'))).toMatch(/t:m gave one and the same answer \("OK"\) to all 12 different requests/u);
  });

  it('flags answers that ignore the arm (a cache keyed on the last message)', () => {
    expect(answerSanity(grid((_arm, probe, position) => `answer to probe ${probe} at ${position}`))).toMatch(
      /t:m gave the same answer to each of 6 prompts whatever arm/u,
    );
  });

  it('passes answers that vary with the context, and judges that agree', () => {
    expect(answerSanity(grid((arm, probe, position) => `${arm} ${probe} ${position}`))).toBeNull();
    // One arm differing in one prompt is enough to show the context reaches the model.
    expect(
      answerSanity(grid((arm, probe, position) => (arm === 'filler' && probe === 0 && position === 0 ? 'different' : `p${probe}@${position}`))),
    ).toBeNull();
  });

  it('does not judge too few answers, empty or failed cells', () => {
    expect(answerSanity(grid(() => 'OK').slice(0, 3))).toBeNull();
    const failed = grid(() => 'OK').map((c) => ({ ...c, result: { ...c.result, status: 'failed' } }));
    expect(answerSanity(failed)).toBeNull();
  });
});

describe('an endpoint that always returns the same text', () => {
  let server: FakeServer;
  const dir = mkdtempSync(join(tmpdir(), 'echolens-sanity-'));
  const db = join(dir, 'run.db');

  beforeAll(async () => {
    registerBuiltinSimProfiles();
    server = await startSimWireServer({
      judge: 'sim:judge',
      isJudge: (messages) => String(messages[0]?.content ?? '').startsWith('You are the echolens assistant-register judge'),
      target: () => 'I am a helpful assistant.',
    });
  });
  afterAll(() => server?.close());

  it('makes the verdict "not computable" with the reason in the run, every report format and the gate — never PASS', async () => {
    const run = await runCliInProcess(
      personaArgs({
        targets: [`openai-compatible:stuck@${server.baseURL}`],
        judges: ['sim:judge'],
        sets: ['positions=[{uniform: 3}]', 'analysis.B=200'],
        db,
      }),
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/verdict: NOT COMPUTABLE — openai-compatible:stuck@\S+ gave one and the same answer \("I am a helpful assistant\."\)/u);

    const md = await runCliInProcess(['report', db, '--format', 'md']);
    expect(md.stdout).toMatch(/\*\*Verdict: NOT COMPUTABLE\*\* — .*endpoint or cache problem/u);
    expect(md.stdout).not.toMatch(/Verdict: PASS/u);

    const json = JSON.parse((await runCliInProcess(['report', db, '--format', 'json'])).stdout) as {
      verdict: string;
      runs: Array<{ verdict: { verdict: string; notComputable?: string } }>;
    };
    expect(json.verdict).toBe('not computable');
    expect(json.runs[0]?.verdict.verdict).toBe('not computable');
    expect(json.runs[0]?.verdict.notComputable).toMatch(/same answer/u);

    const html = join(dir, 'report.html');
    await runCliInProcess(['report', db, '-o', html]);
    expect(readFileSync(html, 'utf8')).toMatch(/not computable: openai-compatible:stuck/u);

    const gate = await runCliInProcess(['gate', db]);
    expect(gate.code).toBe(1);
    expect(gate.stdout).toMatch(/gate: NOT COMPUTABLE/u);
    expect(gate.stdout).toMatch(/answers-vary: not computable: .*same answer/u);
    const gateMd = await runCliInProcess(['gate', db, '--format', 'md']);
    expect(gateMd.stdout).toMatch(/## echolens gate: ⚠️ not computable/u);
  }, 120_000);
});
