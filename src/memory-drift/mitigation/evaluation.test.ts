import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openExperimentRun, runParsedStage } from '../../experiment/runtime.js';
import { openStore } from '../../store/run-store.js';
import { lexicalDiversity } from '../../metrics/lexical-diversity.js';
import { loadBuiltinOntology } from '../ontology.js';
import { SIM_STEP_CUES } from '../sim.js';
import type { DpoPrompt } from './candidates.js';
import { evaluateHeldOut, parseHeldOut, renderEvaluationMarkdown, runEvaluation } from './evaluation.js';
import './index.js';
import { buildReferences, runReferences } from './references.js';
import { CachedLabeler } from './reward-labeler.js';
import type { JudgedCandidate } from './select.js';

const A = 'Practical/Efficiency and resource optimization';
const B = 'Protective/Security and stability';
const step = (symbol: string, i: number) => `<step_${i + 1}>${SIM_STEP_CUES[symbol]!.sentences[0]}</step_${i + 1}>`;
const answer = (symbols: string[], text: string) => `<think>${symbols.map(step).join('')}</think><answer>${text}</answer>`;

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'echolens-eval-'));
  const run = await openExperimentRun(join(dir, 'e.db'), 'memory-evaluate', { test: true }, 42);
  const labeler = new CachedLabeler({ store: run.store, runId: run.runId, labeler: 'sim:labeler', ontology: loadBuiltinOntology() });
  return { run, labeler };
}

describe('GRPO references', () => {
  it('labels the best non-distracted candidate per question and reports questions without one', async () => {
    const { labeler } = await setup();
    const question = (id: string) => ({ id, domain: 'd', text: `question ${id}` });
    const persona = { id: 'p1', text: 'I am a teacher.', category: 'occupation', tier: 'persona' as const };
    const prompts: DpoPrompt[] = [
      { id: 'q1::p1', question: question('q1'), persona },
      { id: 'q2::p1', question: question('q2'), persona },
    ];
    const judged = (index: number, text: string, h: number, d: 0 | 1): JudgedCandidate => ({
      index,
      text,
      withInstruction: true,
      key: `k${index}`,
      status: 'judged',
      judgement: { helpfulness: h, distracted: d, acknowledged: 1, rationale: null },
    });
    const candidates = new Map([
      ['q1::p1', [judged(0, answer([B, B], 'x'), 5, 1), judged(1, answer([A, B], 'y'), 4, 0), judged(2, answer([B], 'z'), 3, 0)]],
      ['q2::p1', [judged(0, answer([A], 'w'), 5, 1)]],
    ]);
    const built = await buildReferences(prompts, candidates, labeler);
    expect(built.references).toHaveLength(1);
    expect(built.references[0]).toMatchObject({ question_id: 'q1', symbols: [A, B], source_key: 'k1', helpfulness: 4 });
    expect(built.missing).toEqual([{ question_id: 'q2', reason: 'no confidently judged, non-distracted candidate' }]);
  });
});

describe('held-out evaluation (Table 2 columns)', () => {
  it('computes mean DTW against references, lexical diversity and judged helpfulness', async () => {
    const { run, labeler } = await setup();
    const rows = parseHeldOut(
      [
        JSON.stringify({
          question_id: 'q1',
          question: 'Q?',
          persona: 'I am a teacher.',
          response: answer([A, B], 'Save some of it and spend the rest wisely.'),
        }),
        JSON.stringify({ question_id: 'q1', question: 'Q?', response: answer([B, B], 'Save it all.') }),
        JSON.stringify({ question_id: 'q9', question: 'Q?', response: answer([A], 'no reference') }),
      ].join('\n'),
      'h.jsonl',
    );
    const references = new Map([['q1', [A, B]]]);
    const summary = await evaluateHeldOut('base', rows, {
      references,
      labeler,
      judge: 'sim:dpo-judge',
      judgeStage: (items, retries) => runParsedStage(run.store, run.runId, items, retries, { progress: false }),
    });
    // [A, B] vs [A, B] → 0; [B, B] vs [A, B] → 1/2.
    expect(summary.meanDtw).toBeCloseTo(0.25, 12);
    expect(summary.dtwCount).toBe(2);
    expect(summary.dtwExcluded).toEqual({ noReference: 1, labelerFailed: 0 });
    expect(summary.meanDiversity).toBeCloseTo(
      (lexicalDiversity(rows[0]!.response) + lexicalDiversity(rows[1]!.response) + lexicalDiversity(rows[2]!.response)) / 3,
      12,
    );
    expect(summary.helpfulnessCount + summary.helpfulnessExcluded.uncertain + summary.helpfulnessExcluded.invalid).toBe(3);
    if (summary.helpfulnessCount > 0) {
      expect(summary.meanHelpfulness).toBeGreaterThanOrEqual(1);
      expect(summary.meanHelpfulness).toBeLessThanOrEqual(5);
    }
    if (summary.helpfulnessCount > 0) {
      expect(summary.nonDistraction).toBeGreaterThanOrEqual(0);
      expect(summary.nonDistraction).toBeLessThanOrEqual(1);
    }
    const noJudge = await evaluateHeldOut('post', rows, { references, labeler });
    expect(noJudge.meanHelpfulness).toBeNull();
    expect(noJudge.nonDistraction).toBeNull();
    const md = renderEvaluationMarkdown([summary, noJudge]);
    expect(md).toContain('| base | 0.250 |');
    expect(md).toContain('non-distraction');
    expect(md).toContain('| post | 0.250 |');
    expect(() => parseHeldOut('{"question_id":"q","question":"x"}', 'h.jsonl')).toThrow(/h\.jsonl:1.*response/);
  });
  it('memory evaluate and memory references run through runAudit: stages recorded, done, a second run calls nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-eval-run-'));
    const db = join(dir, 'evaluate.db');
    const ontology = loadBuiltinOntology();
    const rows = parseHeldOut(
      [
        JSON.stringify({ question_id: 'q1', question: 'Q?', response: answer([A, B], 'Spend wisely.') }),
        JSON.stringify({ question_id: 'q1', question: 'Q?', response: answer([B, B], 'Save it all.') }),
      ].join('\n'),
      'h.jsonl',
    );
    const config = { labeler: 'sim:labeler', judge: 'sim:dpo-judge', ontology };
    // The second model repeats the base's answers: its labels come from the labeler's memory, no cells.
    const input = {
      references: new Map([['q1', [A, B]]]),
      models: [
        { name: 'base', rows },
        { name: 'post', rows },
      ],
    };
    const first = await runEvaluation(config, input, db, { progress: false });
    expect(first.interrupted).toBe(false);
    expect(first.result.map((s) => s.meanDtw)).toEqual([0.25, 0.25]);
    const store = openStore(db);
    expect((await store.requireRun(first.runId)).status).toBe('done');
    const stages = await store.stages(first.runId);
    const attempts = async (s: typeof store) => (await s.cellResultsOfRun(first.runId)).reduce((sum, cell) => sum + cell.result.attempts, 0);
    const attemptsBefore = await attempts(store);
    await store.close();
    expect(stages.map((s) => [s.stage, s.expected, s.settled])).toEqual([
      ['labels base', 2, 2],
      ['helpfulness base', 2, 2],
      ['labels post', 0, 0],
      ['helpfulness post', 2, 2],
    ]);
    const second = await runEvaluation(config, input, db, { progress: false });
    expect(second.runId).toBe(first.runId);
    expect(second.resumed).toBe(true);
    expect(second.result).toEqual(first.result);
    const reopened = openStore(db);
    expect(attemptsBefore).toBeGreaterThan(0);
    expect(await attempts(reopened)).toBe(attemptsBefore);
    await reopened.close();

    const question = { id: 'q1', domain: 'd', text: 'question q1' };
    const persona = { id: 'p1', text: 'I am a teacher.', category: 'occupation', tier: 'persona' as const };
    const candidate: JudgedCandidate = {
      index: 0,
      text: answer([A], 'w'),
      withInstruction: true,
      key: 'k0',
      status: 'judged',
      judgement: { helpfulness: 4, distracted: 0, acknowledged: 1, rationale: null },
    };
    const refs = await runReferences(
      { labeler: 'sim:labeler', ontology },
      { prompts: [{ id: 'q1::p1', question, persona }], candidates: new Map([['q1::p1', [candidate]]]) },
      db,
      7,
      { progress: false },
    );
    expect(refs.result.references.map((r) => r.symbols)).toEqual([[A]]);
    const after = openStore(db);
    expect((await after.requireRun(refs.runId)).status).toBe('done');
    expect((await after.stages(refs.runId)).map((s) => [s.stage, s.expected, s.settled])).toEqual([['reference labels', 1, 1]]);
    await after.close();
  });
});
