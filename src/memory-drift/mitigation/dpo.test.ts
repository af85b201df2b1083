import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { InputError } from '../../core/errors.js';
import { openStore } from '../../store/run-store.js';
import { loadBuiltinPerturbations } from '../perturbations.js';
import { buildCandidatePlan, DPO_REASONING_INSTRUCTION, samplePersonas } from './candidates.js';
import { dpoConfigSchema } from './dpo-config.js';
import { parseDpoJudgeOutput } from './dpo-judge.js';
import { runDpoPairs, writeDpoOutputs } from './dpo.js';
import { mixPreferences, type PreferenceRecord, quickSubset, toOpenRlhfRow, toTrlRow } from './export.js';
import { parseRewriteOutput } from './rewrite.js';
import { type JudgedCandidate, selectDpoPair, selectReferenceCandidate } from './select.js';
import './index.js';
import { filterExternalPairs, parseExternalPreferences } from './tulu.js';

function candidate(index: number, h: number, d: 0 | 1, a: 0 | 1, status: JudgedCandidate['status'] = 'judged'): JudgedCandidate {
  return {
    index,
    text: `response ${index}`,
    withInstruction: index < 5,
    key: `k${index}`,
    status,
    judgement: { helpfulness: h, distracted: d, acknowledged: a, rationale: null },
  };
}

describe('DPO selection (paper rule)', () => {
  it('takes the first chosen and the least helpful rejected; ignores uncertain and invalid candidates', () => {
    const outcome = selectDpoPair([
      candidate(0, 5, 0, 0), // neither: h = 5 but not acknowledged → not chosen; h = 5 → not rejected
      candidate(1, 4, 0, 1), // neither: h < 5 but not distracted and acknowledged
      candidate(2, 5, 0, 1), // chosen
      candidate(3, 3, 1, 1), // rejected (h 3)
      candidate(4, 5, 0, 1), // chosen (second)
      candidate(5, 1, 1, 0, 'uncertain'), // excluded
      candidate(6, 2, 0, 0), // rejected (h 2) — the least helpful
      candidate(7, 1, 1, 0, 'invalid'), // excluded
    ]);
    expect(outcome.kind).toBe('pair');
    if (outcome.kind !== 'pair') return;
    expect(outcome.pair.chosen.index).toBe(2);
    expect(outcome.pair.rejected.index).toBe(6);
  });

  it('reports why a prompt has no pair', () => {
    expect(selectDpoPair([candidate(0, 4, 1, 0)]).kind).toBe('no_chosen');
    expect(selectDpoPair([candidate(0, 5, 0, 1), candidate(1, 5, 1, 0)]).kind).toBe('no_rejected');
    expect(selectDpoPair([candidate(0, 5, 0, 1, 'uncertain')]).kind).toBe('no_judged');
  });

  it('picks the most helpful non-distracted candidate as the GRPO reference', () => {
    expect(selectReferenceCandidate([candidate(0, 5, 1, 1), candidate(1, 3, 0, 0), candidate(2, 4, 0, 1), candidate(3, 4, 0, 0)])?.index).toBe(2);
    expect(selectReferenceCandidate([candidate(0, 5, 1, 1)])).toBeNull();
  });
});

describe('DPO judge parser', () => {
  it('accepts strict JSON, marks uncertain fields, rejects anything else', () => {
    expect(parseDpoJudgeOutput('{"helpfulness": 5, "distracted": 0, "acknowledged": 1, "rationale": "ok"}')).toEqual({
      ok: true,
      value: { kind: 'judged', judgement: { helpfulness: 5, distracted: 0, acknowledged: 1, rationale: 'ok' } },
    });
    expect(parseDpoJudgeOutput('```json\n{"helpfulness": "uncertain", "distracted": 0, "acknowledged": "Uncertain"}\n```')).toEqual({
      ok: true,
      value: { kind: 'uncertain', fields: ['helpfulness', 'acknowledged'] },
    });
    for (const bad of [
      '',
      'helpfulness 5',
      '{"helpfulness": 6, "distracted": 0, "acknowledged": 1}',
      '{"helpfulness": 4.5, "distracted": 0, "acknowledged": 1}',
      '{"helpfulness": 4, "distracted": true, "acknowledged": 1}',
      '{"helpfulness": 4, "distracted": 0}',
      '{"helpfulness": 4, "distracted": 0, "acknowledged": 1, "score": 3}',
      '{"helpfulness": 4, "distracted": 0, "acknowledged": 1} {"helpfulness": 5, "distracted": 0, "acknowledged": 1}',
    ]) {
      expect(parseDpoJudgeOutput(bad).ok, bad).toBe(false);
    }
  });
});

describe('rewrite format check', () => {
  it('accepts the structured format and names what is wrong otherwise', () => {
    expect(parseRewriteOutput('<think><step_1>a b</step_1>\n<step_2>c</step_2></think>\n<answer>yes</answer>')).toEqual({
      ok: true,
      value: '<think><step_1>a b</step_1>\n<step_2>c</step_2></think>\n<answer>yes</answer>',
    });
    expect(parseRewriteOutput('<think><step_1>a</step_1></think><answer>x</answer>')).toEqual({ ok: false, error: 'needs at least two steps' });
    expect(parseRewriteOutput('<think><step_1>a</step_1><step_3>b</step_3></think><answer>x</answer>')).toMatchObject({
      ok: false,
      error: 'step 2 is numbered 3/3',
    });
    expect(parseRewriteOutput('<think><step_1>a</step_1><step_2> </step_2></think><answer>x</answer>')).toMatchObject({ ok: false, error: 'step 2 is empty' });
    expect(parseRewriteOutput('Sure! <think><step_1>a</step_1><step_2>b</step_2></think><answer>x</answer>').ok).toBe(false);
    expect(parseRewriteOutput('<think><step_1>a</step_1><step_2>b</step_2></think><answer> </answer>').ok).toBe(false);
  });
});

describe('external (Tulu) pairs', () => {
  const line = (o: object) => JSON.stringify(o);
  const msgs = (user: string, reply: string) => [
    { role: 'user', content: user },
    { role: 'assistant', content: reply },
  ];
  const long = 'word '.repeat(40).trim();

  it('drops subjective, tied and length-mismatched pairs, counting each under the first filter', () => {
    const text = [
      line({ id: 'keep', chosen: msgs('q1', 'The answer is 4.'), rejected: msgs('q1', 'The answer is 5.') }),
      line({ id: 'tie-rating', chosen: msgs('q2', 'A'), rejected: msgs('q2', 'B'), chosen_rating: 3, rejected_rating: 3 }),
      line({ id: 'tie-text', chosen: msgs('q3', 'same'), rejected: msgs('q3', ' same ') }),
      line({ id: 'subjective-and-long', chosen: msgs('q4', 'x'), rejected: msgs('q4', long), subjective: true }),
      line({ id: 'long', prompt: 'q5', chosen: 'short', rejected: long }),
      '',
    ].join('\n');
    const pairs = parseExternalPreferences(text, 'p.jsonl');
    expect(pairs.map((p) => p.id)).toEqual(['keep', 'tie-rating', 'tie-text', 'subjective-and-long', 'long']);
    expect(pairs[4]!.prompt).toEqual([{ role: 'user', content: 'q5' }]);
    expect(countTokens(long) - countTokens('short')).toBeGreaterThan(20);
    const filtered = filterExternalPairs(pairs);
    expect(filtered.kept.map((p) => p.id)).toEqual(['keep']);
    expect(filtered.dropped).toEqual({ subjective: 1, tie: 2, length_mismatch: 1 });
    // A difference of exactly 20 tokens is kept, 21 is dropped (the paper drops "> 20").
    const withTokens = (extra: number) => {
      let text = 'b';
      while (countTokens(text) - countTokens('b') < extra) text += ' word';
      return text;
    };
    const twenty = withTokens(20);
    const twentyOne = withTokens(21);
    expect(countTokens(twenty) - countTokens('b')).toBe(20);
    expect(countTokens(twentyOne) - countTokens('b')).toBe(21);
    const edge = parseExternalPreferences(
      [line({ id: 'e20', prompt: 'q', chosen: 'b', rejected: twenty }), line({ id: 'e21', prompt: 'q', chosen: twentyOne, rejected: 'b' })].join('\n'),
    );
    const edgeFiltered = filterExternalPairs(edge);
    expect(edgeFiltered.kept.map((p) => p.id)).toEqual(['e20']);
    expect(edgeFiltered.dropped.length_mismatch).toBe(1);
    expect(filterExternalPairs(edge, 21).kept).toHaveLength(2);
  });

  it('names file, line and field for bad rows', () => {
    expect(() => parseExternalPreferences('{"prompt":"q","chosen":[{"role":"user","content":"q"}],"rejected":"r"}', 'x.jsonl')).toThrow(InputError);
    expect(() => parseExternalPreferences('{"prompt":"q","chosen":"c","rejected":"r"}\nnot json', 'x.jsonl')).toThrow(/x\.jsonl:2/);
    expect(() => parseExternalPreferences('{"chosen":"c","rejected":"r"}', 'x.jsonl')).toThrow(/prompt/);
  });
});

describe('mixing, subset and exports', () => {
  const rec = (id: string, source: PreferenceRecord['source']): PreferenceRecord => ({
    id,
    source,
    prompt: [
      { role: 'system', content: 'S' },
      { role: 'user', content: `U ${id}` },
    ],
    chosen: `good ${id}`,
    rejected: `bad ${id}`,
  });
  const sym = Array.from({ length: 10 }, (_, i) => rec(`s${i}`, 'sympreference'));
  const ext = Array.from({ length: 30 }, (_, i) => rec(`e${i}`, 'external'));

  it('keeps the requested SymPreference share and subsamples when external pairs run short', () => {
    const half = mixPreferences(sym, ext, 0.5, 1);
    expect([half.symUsed, half.externalUsed, half.records.length]).toEqual([10, 10, 20]);
    expect(new Set(half.records.map((r) => r.id)).size).toBe(20);
    const ninety = mixPreferences(sym, ext, 0.9, 1);
    expect([ninety.symUsed, ninety.externalUsed]).toEqual([10, 1]);
    const short = mixPreferences(sym, ext.slice(0, 4), 0.5, 1);
    expect([short.symUsed, short.externalUsed]).toEqual([4, 4]);
    expect(mixPreferences(sym, ext, 1, 1).externalUsed).toBe(0);
    expect(() => mixPreferences(sym, ext, 0)).toThrow(/mixRatio/);
    expect(mixPreferences(sym, ext, 0.5, 1).records.map((r) => r.id)).toEqual(half.records.map((r) => r.id));
    expect(quickSubset(half.records, 5, 1)).toHaveLength(5);
    expect(quickSubset(sym, 250)).toHaveLength(10);
  });

  it('writes the field shapes TRL and OpenRLHF read', () => {
    const trl = toTrlRow(sym[0]!);
    expect(Object.keys(trl).sort()).toEqual(['chosen', 'prompt', 'rejected']);
    expect(trl.prompt).toEqual([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'U s0' },
    ]);
    expect(trl.chosen).toEqual([{ role: 'assistant', content: 'good s0' }]);
    expect(trl.rejected).toEqual([{ role: 'assistant', content: 'bad s0' }]);
    const open = toOpenRlhfRow(sym[0]!);
    expect(open).toEqual({ prompt: 'S\n\nU s0\n', chosen: 'good s0', rejected: 'bad s0' });
  });
});

describe('candidate plan', () => {
  const perturbations = loadBuiltinPerturbations();
  const questions = [
    { id: 'q1', domain: 'd', text: 'Should I save or spend my bonus?' },
    { id: 'q2', domain: 'd', text: 'How should I plan a weekend trip?' },
  ];

  it('samples distinct persona-tier stimuli per question and splits N candidates between the two arms', () => {
    const personas = samplePersonas(perturbations, 'q1', 3, 42);
    expect(new Set(personas.map((p) => p.id)).size).toBe(3);
    expect(personas.every((p) => p.tier === 'persona')).toBe(true);
    expect(samplePersonas(perturbations, 'q1', 3, 42)).toEqual(personas);
    const plan = buildCandidatePlan({ questions, perturbations, generator: 'sim:memory', personasPerQuestion: 3 });
    expect(plan.prompts).toHaveLength(6);
    expect(plan.cells).toHaveLength(60);
    const first = plan.cells.slice(0, 10);
    expect(first.filter((c) => c.labels.with_instruction === true)).toHaveLength(5);
    expect(first[0]!.request.messages[0]).toEqual({ role: 'system', content: DPO_REASONING_INSTRUCTION });
    expect(first[9]!.request.messages).toHaveLength(1);
    expect(first[9]!.request.messages[0]!.content).toBe(`${plan.prompts[0]!.persona.text}\nShould I save or spend my bonus?`);
    expect(first[0]!.request.params).toEqual({ temperature: 1, topP: 0.95, maxTokens: 2048 });
    expect(() => samplePersonas(perturbations, 'q1', 10_000, 42)).toThrow(/personasPerQuestion/);
  });
});

describe('dpo-pairs end to end (simulated models)', () => {
  it('produces pairs, exports and a data card, and a second run calls nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-dpo-'));
    const external = join(dir, 'tulu.jsonl');
    writeFileSync(
      external,
      Array.from({ length: 40 }, (_, i) => JSON.stringify({ id: `t${i}`, prompt: `q${i}`, chosen: `right ${i}`, rejected: `wrong ${i}` })).join('\n'),
    );
    const config = dpoConfigSchema.parse({
      questions: { limit: 6 },
      generator: 'sim:memory',
      judge: 'sim:dpo-judge',
      rewrite: { model: 'sim:dpo-rewriter' },
      external: { file: external },
      quickSubset: 3,
      out: join(dir, 'out'),
    });
    const db = join(dir, 'dpo.db');
    const first = await runDpoPairs(config, db, { progress: false });
    expect(first.complete).toBe(true);
    expect(first.card.counts.prompts).toBe(18);
    expect(first.card.counts.candidates.done).toBe(180);
    const j = first.card.counts.judgements;
    expect(j.judged! + j.uncertain! + j.invalid! + j.unanswered!).toBe(180);
    expect(first.sym.length).toBeGreaterThan(0);
    const w = first.card.counts.prompts_without_pair;
    expect(first.sym.length + w.no_judged! + w.no_chosen! + w.no_rejected! + first.card.counts.rewrites.pairs_dropped!).toBe(18);
    for (const record of first.sym) {
      expect(parseRewriteOutput(record.chosen).ok).toBe(true);
      expect(parseRewriteOutput(record.rejected).ok).toBe(true);
      expect(record.chosen).toMatch(/irrelevant/);
    }
    expect(first.card.counts.mixed).toEqual({ total: 2 * first.sym.length, sympreference: first.sym.length, external: first.sym.length });
    const card = writeDpoOutputs(config.out, first);
    const trlLines = readFileSync(join(config.out, 'trl', 'mixed.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(trlLines).toHaveLength(card.counts.mixed.total);
    for (const row of trlLines) {
      expect(Array.isArray(row.prompt) && row.chosen[0].role === 'assistant' && row.rejected[0].role === 'assistant').toBe(true);
    }
    const openLines = readFileSync(join(config.out, 'openrlhf', 'quick.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(openLines.length).toBe(Math.min(3, card.counts.mixed.total));
    for (const row of openLines) expect([typeof row.prompt, typeof row.chosen, typeof row.rejected]).toEqual(['string', 'string', 'string']);
    expect(JSON.parse(readFileSync(join(config.out, 'data-card.json'), 'utf8')).judge).toBe('sim:dpo-judge');
    expect(readFileSync(join(config.out, 'data-card.md'), 'utf8')).toContain('| external: kept | 40 |');

    const second = await runDpoPairs(config, db, { progress: false });
    expect(second.resumed).toBe(true);
    expect(second.sym).toEqual(first.sym);
    expect(second.spendUsd).toBe(0);
  });

  it('runs through runAudit: its stages are recorded, a stopped run is not done and the same command finishes it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-dpo-stages-'));
    const config = dpoConfigSchema.parse({
      questions: { limit: 2 },
      generator: 'sim:memory',
      judge: 'sim:dpo-judge',
      rewrite: { model: 'sim:dpo-rewriter' },
      candidates: 4,
      out: join(dir, 'out'),
    });
    const db = join(dir, 'dpo.db');
    const stop = new AbortController();
    stop.abort();
    const stopped = await runDpoPairs(config, db, { progress: false, signal: stop.signal });
    expect(stopped.complete).toBe(false);
    const store = openStore(db);
    expect((await store.requireRun(stopped.runId)).status).not.toBe('done');
    await store.close();

    const finished = await runDpoPairs(config, db, { progress: false });
    expect(finished.resumed).toBe(true);
    expect(finished.runId).toBe(stopped.runId);
    expect(finished.complete).toBe(true);
    const after = openStore(db);
    const run = await after.requireRun(finished.runId);
    const stages = await after.stages(finished.runId);
    await after.close();
    expect(run.status).toBe('done');
    expect(stages.map((s) => s.stage)).toEqual(['dpo candidates', 'dpo judge', 'dpo rewrite']);
    for (const stage of stages) expect([stage.registered, stage.settled]).toEqual([stage.expected, stage.expected]);
    expect(stages[0]!.expected).toBe(finished.card.counts.prompts * 4);
  });
});
