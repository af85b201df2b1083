import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { packageRoot } from '../core/version.js';
import { registerSimProfile } from '../models/sim-registry.js';
import { readSession } from '../sessions/read.js';
import { countSharedDraws } from '../store/draw-units.js';
import { cellKey } from '../store/keys.js';
import { openStore } from '../store/run-store.js';
import { continuationConfigSchema } from './config.js';
import type { GroundTruthCall } from './cutpoints.js';
import { applyVerdicts, judgeQuestions, judgeSpec, questionId } from './judge.js';
import { planContinuation } from './plan.js';
import { continuationReport, continuationRunner, inputFingerprint, runContinuation } from './run.js';
import type { RunInfo } from '../store/run-store.js';
import { scoreAnswer } from './scoring.js';
import { simTruthFor } from './sim.js';

registerBuiltinSimProfiles();
/** A test target that answers every cutpoint with the recorded command, reworded. */
registerSimProfile({
  name: 'test-pods-reworded',
  description: 'SIMULATED test target: the recorded Bash call with its command reworded',
  answer(request) {
    const known = simTruthFor(request.messages.at(-1)?.content ?? '');
    return known ? { text: '', toolCalls: [{ name: known.truth.name, input: { command: 'kubectl get pods -o wide' } }] } : { text: 'no idea' };
  },
});

/** A Claude Code transcript of a polling loop: every cutpoint sees the same immediate context. */
function pollingSession(steps: number): string {
  const lines: string[] = [];
  let parent: string | null = null;
  let n = 0;
  const push = (type: 'user' | 'assistant', message: unknown) => {
    n += 1;
    const uuid = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    lines.push(
      JSON.stringify({ sessionId: 'poll', type, uuid, parentUuid: parent, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(), message }),
    );
    parent = uuid;
  };
  push('user', { role: 'user', content: 'Wait until the deployment is ready, then tell me.' });
  for (let i = 0; i < steps; i += 1) {
    push('assistant', { role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'Checking the pods again.' }] });
    push('assistant', {
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'tool_use', id: `toolu_${i}`, name: 'Bash', input: { command: 'kubectl get pods' } }],
    });
    push('user', { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: 'web-0   0/1   Pending' }] });
  }
  const file = join(mkdtempSync(join(tmpdir(), 'echolens-poll-')), 'poll.jsonl');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** The plan of a 12-step polling session at six cutpoints (requests repeat across cutpoints). */
async function pollingPlan() {
  const file = pollingSession(12);
  const session = await readSession(file);
  const config = continuationConfigSchema.parse({ session: file, targets: ['sim:continuation'], cutpoints: { count: 6 }, windowTokens: 100 });
  return { session, config, plan: planContinuation(config, session, undefined) };
}

describe('continuation cutpoints share no draws', () => {
  it('a request planned at two cutpoints is drawn once per cutpoint; unshared requests keep their keys', async () => {
    const { plan } = await pollingPlan();
    const byCutpoint = (spec: { labels: Record<string, unknown> }) => String(spec.labels.cutpoint);
    expect(countSharedDraws(plan.specs, byCutpoint)).toBe(0);
    const salted = plan.specs.filter((s) => s.request.unit !== undefined);
    // The scratch arm (no context, the same immediate turn) repeats at every cutpoint.
    expect(salted.some((s) => s.labels.arm === 'scratch')).toBe(true);
    expect(salted.every((s) => s.request.unit === s.labels.cutpoint)).toBe(true);
    expect(plan.notes.join('\n')).toMatch(/arose at more than one cutpoint: each cutpoint got its own draw/);
  });

  it('the demo session has no shared request: its plan is unchanged', async () => {
    const demo = join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');
    const session = await readSession(demo);
    const plan = planContinuation(continuationConfigSchema.parse({ session: demo, targets: ['sim:continuation'] }), session, undefined);
    expect(plan.specs.every((s) => s.request.unit === undefined)).toBe(true);
  });

  it('a judge question raised at several cutpoints is asked once per cutpoint; its verdict applies to that cutpoint only', async () => {
    const truth = { name: 'Bash', input: { command: 'kubectl get pods' } } as GroundTruthCall;
    const calls = [{ name: 'Bash', input: { command: 'kubectl get pods -o wide' } }];
    const question = judgeQuestions(truth, scoreAnswer(truth, { text: null, toolCalls: calls }), calls)[0]!;
    const shared = judgeSpec('sim:continuation-judge', question);
    const atC01 = judgeSpec('sim:continuation-judge', question, 'C01');
    expect(shared.request.unit).toBeUndefined();
    expect(atC01.request.unit).toBe('C01');
    expect(atC01.labels.question).toBe(`${questionId(question)}@C01`);
    expect(cellKey(atC01)).not.toBe(cellKey(judgeSpec('sim:continuation-judge', question, 'C02')));
    const score = scoreAnswer(truth, { text: null, toolCalls: calls });
    const verdicts = new Map([
      [`${questionId(question)}@C01`, 'equivalent' as const],
      [`${questionId(question)}@C02`, 'different' as const],
    ]);
    expect(applyVerdicts(truth, score, calls, verdicts, 'C01').fidelity).toBe(1);
    expect(applyVerdicts(truth, score, calls, verdicts, 'C02').fidelity).toBe(score.fidelity);
    // A question asked once (no cutpoint in its id) applies wherever it arose.
    expect(applyVerdicts(truth, score, calls, new Map([[questionId(question), 'equivalent' as const]]), 'C07').fidelity).toBe(1);

    const file = pollingSession(12);
    const db = join(mkdtempSync(join(tmpdir(), 'echolens-poll-judge-')), 'runs.db');
    const config = continuationConfigSchema.parse({
      session: file,
      targets: ['sim:test-pods-reworded'],
      cutpoints: { count: 6 },
      windowTokens: 100,
      judge: { model: 'sim:continuation-judge' },
    });
    const run = await runContinuation(config, db, { progress: false });
    const store = openStore(db, { readonly: true });
    const judgeCells = (await store.cellsOfRun(run.runId)).filter((c) => c.labels.stage === 'judge');
    const report = await continuationReport(store, run.runId);
    await store.close();
    // One question (the same reworded command at every cutpoint), asked at each of the 6 cutpoints.
    expect(new Set(judgeCells.map((c) => String(c.labels.question).split('@')[0]))).toEqual(new Set([questionId(question)]));
    expect(new Set(judgeCells.map((c) => String(c.labels.question).split('@')[1]))).toEqual(new Set(report.cutpoints.map((c) => c.id)));
    expect(new Set(judgeCells.map((c) => c.key)).size).toBe(6);
    expect(report.judge?.questions).toBe(6);
  });
});

describe('resuming a continuation run planned before cutpoints were separated', () => {
  it('is refused with the reason, not as a changed transcript', async () => {
    const { session, config, plan } = await pollingPlan();
    const unsalted = plan.specs.map((s) => {
      const { unit: _unit, ...request } = s.request;
      return { ...s, request };
    });
    const run = (fingerprint: string) => ({ id: 'continuation-1', manifest: { options: { inputFingerprint: fingerprint } } }) as unknown as RunInfo;
    const input = { session, cross: undefined, plan };
    expect(() => continuationRunner.checkResume!(run(inputFingerprint(plan)), config, input, 'runs.db')).not.toThrow();
    expect(() => continuationRunner.checkResume!(run(inputFingerprint({ specs: unsalted, cutpoints: plan.cutpoints })), config, input, 'runs.db')).toThrow(
      /run continuation-1 in runs\.db was planned before cutpoints were separated/,
    );
    expect(() => continuationRunner.checkResume!(run('0'.repeat(64)), config, input, 'runs.db')).toThrow(
      /transcript, cross session, tool schema or task file changed/,
    );
  });
});
