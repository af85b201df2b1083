import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { packageRoot } from '../core/version.js';
import { openStore } from '../store/run-store.js';
import { continuationConfigSchema } from './config.js';
import type { GroundTruthCall } from './cutpoints.js';
import { applyVerdicts, judgeQuestions, parseEquivalence, questionId, questionOfMessages, judgeMessages } from './judge.js';
import { renderContinuationMarkdown } from './document.js';
import { continuationReport, runContinuation } from './run.js';
import { scoreAnswer } from './scoring.js';
import { simTruthFor } from './sim.js';
import { registerSimProfile } from '../models/sim-registry.js';

registerBuiltinSimProfiles();

/** A test target that answers every cutpoint with the recorded call, its multi-word strings reworded (reversed, plus a word). */
const reword = (value: unknown): unknown =>
  typeof value === 'string' && value.includes(' ')
    ? `${value.split(' ').reverse().join(' ')} now`
    : value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, reword(v)]))
      : value;
registerSimProfile({
  name: 'test-rewording',
  description: 'SIMULATED test target: the recorded next call with reworded free text',
  answer(request) {
    const known = simTruthFor(request.messages.at(-1)?.content ?? '');
    return known ? { text: '', toolCalls: [{ name: known.truth.name, input: reword(known.truth.input) }] } : { text: 'no idea' };
  },
});

const DEMO = join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');
const truth: GroundTruthCall = { name: 'Grep', input: { pattern: 'token refresh', path: 'src/auth.ts' } } as GroundTruthCall;

describe('continuation judge (pure parts)', () => {
  it('asks only about free-text and command arguments below an exact match of a call to the right tool', () => {
    const calls = [{ name: 'Grep', input: { pattern: 'refresh the token', path: 'src/auth.ts' } }];
    const score = scoreAnswer(truth, { text: null, toolCalls: calls });
    const questions = judgeQuestions(truth, score, calls);
    expect(questions).toEqual([{ tool: 'Grep', argument: 'pattern', recorded: 'token refresh', emitted: 'refresh the token' }]);
    const exact = [{ name: 'Grep', input: truth.input }];
    expect(judgeQuestions(truth, scoreAnswer(truth, { text: null, toolCalls: exact }), exact)).toEqual([]);
    const wrongTool = [{ name: 'Read', input: { pattern: 'x' } }];
    expect(judgeQuestions(truth, scoreAnswer(truth, { text: null, toolCalls: wrongTool }), wrongTool)).toEqual([]);
    expect(questionOfMessages(judgeMessages(questions[0]!))).toEqual({ recorded: 'token refresh', emitted: 'refresh the token' });
  });

  it('an equivalent verdict scores the argument 1; a different or unreadable one keeps the deterministic score', () => {
    const calls = [{ name: 'Grep', input: { pattern: 'refresh the token', path: 'src/auth.ts' } }];
    const score = scoreAnswer(truth, { text: null, toolCalls: calls });
    const id = questionId(judgeQuestions(truth, score, calls)[0]!);
    expect(score.fidelity).toBeLessThan(1);
    expect(applyVerdicts(truth, score, calls, new Map([[id, 'equivalent']]))).toMatchObject({ fidelity: 1 });
    const kept = applyVerdicts(truth, score, calls, new Map([[id, 'different']]));
    expect(kept.fidelity).toBe(score.fidelity);
    expect(kept.arguments.find((a) => a.path === 'pattern')?.judged).toBe('different');
  });

  it('reads exactly one JSON verdict', () => {
    expect(parseEquivalence('```json\n{"equivalent": true}\n```')).toEqual({ ok: true, value: true });
    expect(parseEquivalence('{"equivalent": "yes"}').ok).toBe(false);
    expect(parseEquivalence('{"equivalent": true} or {"equivalent": false}').ok).toBe(false);
    expect(parseEquivalence('they look the same').ok).toBe(false);
  });
});

describe('continuation run with a judge', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'echolens-continuation-judge-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('judges the ambiguous arguments once each, caches the judge cells on resume, and never lowers a score', async () => {
    const db = join(dir, 'run.db');
    const base = { session: DEMO, targets: ['sim:test-rewording'], decoding: { seed: 1 } };
    const withJudge = continuationConfigSchema.parse({ ...base, judge: { model: 'sim:continuation-judge' } });
    const first = await runContinuation(withJudge, db, { progress: false });
    const store = openStore(db, { readonly: true });
    const judgeCells = (await store.cellsOfRun(first.runId)).filter((c) => c.labels.stage === 'judge');
    const judged = await continuationReport(store, first.runId);
    await store.close();
    expect(judgeCells.length).toBeGreaterThan(0);
    expect(new Set(judgeCells.map((c) => c.labels.question)).size).toBe(judgeCells.length);
    expect(judged.judge).toMatchObject({ model: 'sim:continuation-judge', questions: judgeCells.length, invalid: 0, unanswered: 0 });
    expect(judged.judge!.equivalent + judged.judge!.different).toBe(judgeCells.length);
    expect(judged.judge!.equivalent).toBeGreaterThan(0);
    expect(renderContinuationMarkdown(judged)).toMatch(/Judge `sim:continuation-judge`.*distinct questions/);

    // The same target answers without a judge: the judge only ever raises an ambiguous argument to 1.
    const plainDb = join(dir, 'plain.db');
    const plain = await runContinuation(continuationConfigSchema.parse(base), plainDb, { progress: false });
    const plainStore = openStore(plainDb, { readonly: true });
    const deterministic = await continuationReport(plainStore, plain.runId);
    await plainStore.close();
    expect(deterministic.judge).toBeNull();
    let raised = 0;
    judged.cells.forEach((cell, i) => {
      const before = deterministic.cells[i]!;
      expect([cell.cutpoint, cell.arm]).toEqual([before.cutpoint, before.arm]);
      if (cell.score.fidelity === null) {
        expect(before.score.fidelity).toBeNull();
        return;
      }
      expect(cell.score.fidelity).toBeGreaterThanOrEqual(before.score.fidelity!);
      if (cell.score.fidelity > before.score.fidelity!) raised += 1;
    });
    expect(raised).toBeGreaterThan(0);

    // Resume: nothing new is asked, the judge cells are the cached ones.
    const again = await runContinuation(withJudge, db, { progress: false });
    expect(again.resumed).toBe(true);
    const after = openStore(db, { readonly: true });
    expect((await after.cellsOfRun(first.runId)).filter((c) => c.labels.stage === 'judge')).toHaveLength(judgeCells.length);
    await after.close();
  }, 60_000);
});
