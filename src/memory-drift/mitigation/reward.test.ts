import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openExperimentRun } from '../../experiment/runtime.js';
import { loadBuiltinOntology } from '../ontology.js';
import { SIM_STEP_CUES } from '../sim.js';
import './index.js';
import { CachedLabeler } from './reward-labeler.js';
import { responseFromQuery } from './reward-request.js';
import { type RunningRewardServer, startRewardServer } from './reward-server.js';
import { readabilityReward } from '../../metrics/readability.js';
import {
  checkRewardWeights,
  parseReferences,
  questionIdFromLabel,
  REWARD_PRESETS,
  referenceFromLabel,
  scoreLabelledResponse,
  worstCaseReward,
} from './reward.js';

const A = 'Practical/Efficiency and resource optimization';
const B = 'Protective/Security and stability';
const C = 'Social/Social equity and justice';
const sentence = (symbol: string) => SIM_STEP_CUES[symbol]!.sentences[0]!;
// Steps labelled [A, C] by sim:labeler; the reference is [A, B, C]: DTW raw 1, normalised 1/3.
const FULL = `<think><step_1>${sentence(A)}</step_1><step_2>${sentence(C)}</step_2></think><answer>Do the cheaper thing fairly.</answer>`;
const NO_ANSWER = `<step_1>${sentence(A)}</step_1><step_2>${sentence(C)}</step_2>`;
const REFERENCES = [JSON.stringify({ question_id: 'q1', symbols: [A, B, C] }), JSON.stringify({ question_id: 'q2', symbols: [C] })].join('\n');

describe('reward (pure)', () => {
  it('R = r_fmt − DTW by default, with the SRI term only when weighted', () => {
    const paper = scoreLabelledResponse(FULL, [A, B, C], [A, C]);
    expect(paper.format).toBe(1);
    expect(paper.dtw).toBeCloseTo(1 / 3, 12);
    expect(paper.reward).toBeCloseTo(1 - 1 / 3, 12);
    const withSri = scoreLabelledResponse(FULL, [A, B, C], [A, C], { format: 1, dtw: 1, sri: 1 });
    expect(withSri.reward).toBeCloseTo(1 - 1 / 3 - withSri.sri, 12);
    expect(withSri.sri).toBeGreaterThan(0);
    const none = scoreLabelledResponse('no steps at all', [A], []);
    expect(none).toMatchObject({ format: 0, dtw: 1, sri: 1, r_dtw: -1, r_sri: -1, anti_distraction: 0, reward: -1 });
  });

  it("presets: the authors' 0.5·(1 − DTW) + 0.5·r_fmt and their DTW+SRI variant", () => {
    const authors = scoreLabelledResponse(FULL, [A, B, C], [A, C], REWARD_PRESETS.authors);
    expect(authors.r_dtw).toBeCloseTo(2 / 3, 12);
    expect(authors.reward).toBeCloseTo(0.5 * 1 + 0.5 * (2 / 3), 12);
    const sri = scoreLabelledResponse(FULL, [A, B, C], [A, C], REWARD_PRESETS['authors-sri']);
    expect(sri.reward).toBeCloseTo(0.2 + 0.4 * (2 / 3) + 0.4 * (1 - sri.sri), 12);
    expect(scoreLabelledResponse(FULL, [A, B, C], [A, C], REWARD_PRESETS.paper).reward).toBeCloseTo(1 - 1 / 3, 12);
  });

  it('auxiliary rewards enter with their weights', () => {
    // Anti-distraction of [A, C] against [A, B, C]: pos 1/3, edit 2/3, prefix 1/3, DTW similarity 2/3, length 1/3.
    const ad = scoreLabelledResponse(FULL, [A, B, C], [A, C], { format: 0, dtw: 0, sri: 0, antiDistraction: 1 });
    expect(ad.anti_distraction).toBeCloseTo((0.35 + 0.3 * 2 + 0.15 + 0.2 * 2 - 0.1) / 3, 12);
    expect(ad.reward).toBeCloseTo(ad.anti_distraction, 12);
    const read = scoreLabelledResponse(FULL, [A, B, C], [A, C], { format: 0, dtw: 0, sri: 0, readability: 2, readabilityTarget: 50, readabilityWidth: 10 });
    expect(read.readability).toBeCloseTo(readabilityReward(FULL, 50, 10), 12);
    expect(read.reward).toBeCloseTo(2 * read.readability, 12);
    const div = scoreLabelledResponse(FULL, [A, B, C], [A, C], { format: 0, dtw: 0, sri: 0, diversity: 1 });
    // "Do the cheaper thing fairly": 5 distinct of 5 tokens → σ(8 · (1 · 1 − 0.2)) = σ(6.4).
    expect(div.reward).toBeCloseTo(1 / (1 + Math.exp(-6.4)), 12);
    expect(() => checkRewardWeights({ format: 1, dtw: 1, sri: 0, readabilityWidth: 0 })).toThrow(/readabilityWidth/);
  });

  it('an unlabelled item gets its label-free parts and the worst of the rest', () => {
    const text = { format: 1, readability: 0.5, diversity: 0.25 };
    expect(worstCaseReward(text, REWARD_PRESETS.paper)).toBe(1 - 1);
    expect(worstCaseReward(text, REWARD_PRESETS.authors)).toBe(0.5);
    expect(worstCaseReward(text, { format: 1, dtw: 1, sri: 1, readability: 1, diversity: 2, antiDistraction: 3 })).toBe(1 + 0.5 + 0.5 - 2);
  });

  it('reads references and question ids strictly', () => {
    expect(parseReferences(REFERENCES).get('q1')).toEqual([A, B, C]);
    expect(() => parseReferences('{"question_id":"q","symbols":[]}', 'r.jsonl')).toThrow(/r\.jsonl:1.*symbols/);
    expect(() => parseReferences(`${REFERENCES}\n${REFERENCES.split('\n')[0]}`, 'r.jsonl')).toThrow(/duplicate/);
    expect(() => parseReferences('{"question_id":"q","symbols":["Nope/Nope"]}', 'r.jsonl', new Set([A]))).toThrow(/not in the ontology/);
    expect(questionIdFromLabel('q1')).toBe('q1');
    expect(questionIdFromLabel('{"question_id":"q7","persona":"x"}')).toBe('q7');
    expect(questionIdFromLabel({ question_id: 'q8' })).toBe('q8');
    expect(questionIdFromLabel(['q1'])).toBeNull();
    expect(questionIdFromLabel('')).toBeNull();
    expect(responseFromQuery('PROMPT answer', 'PROMPT ')).toBe('answer');
    expect(responseFromQuery('other answer', 'PROMPT ')).toBe('other answer');
  });
});

describe('reward server (sim:labeler)', () => {
  let server: RunningRewardServer;
  let labeler: CachedLabeler;
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-reward-'));
    const run = await openExperimentRun(join(dir, 'reward.db'), 'memory-reward', { test: true }, 42);
    labeler = new CachedLabeler({ store: run.store, runId: run.runId, labeler: 'sim:labeler', ontology: loadBuiltinOntology() });
    server = await startRewardServer({ references: parseReferences(REFERENCES), labeler, weights: { format: 1, dtw: 1, sri: 0 }, port: 0 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('scores known responses exactly and returns the components', async () => {
    const { status, body } = await post('/score', {
      items: [
        { question_id: 'q1', response: FULL },
        { question_id: 'q1', response: NO_ANSWER },
      ],
    });
    expect(status).toBe(200);
    type Scored = { labels: string[]; reward: number; components: { format: number; dtw: number } };
    const [full, noAnswer] = body.results as Scored[];
    expect(full!.labels).toEqual([A, C]);
    expect(full!.components.format).toBe(1);
    expect(full!.components.dtw).toBeCloseTo(1 / 3, 12);
    expect(full!.reward).toBeCloseTo(2 / 3, 12);
    expect(noAnswer!.components.format).toBe(0.75);
    expect(noAnswer!.reward).toBeCloseTo(0.75 - 1 / 3, 12);
  });

  it('answers OpenRLHF and verl request shapes, with per-item errors', async () => {
    const prompt = '<|user|>Should I?<|assistant|>';
    const open = await post('/openrlhf', {
      query: [prompt + FULL, prompt + FULL, 'x'],
      prompts: [prompt, prompt, ''],
      labels: ['q1', 'nope', '{"question_id":"q2"}'],
    });
    expect(open.status).toBe(200);
    const rewards = open.body.rewards as number[];
    expect(rewards[0]).toBeCloseTo(2 / 3, 12);
    expect(rewards[1]).toBe(1 - 1); // format 1, worst drift for an unknown id
    expect(rewards[2]).toBe(-1); // no steps: format 0, DTW 1
    const results = open.body.results as Array<Record<string, unknown>>;
    expect(results[1]!.error).toBe('unknown question id "nope"');
    expect((open.body.extra_logs as { error: number[] }).error).toEqual([0, 1, 0]);

    const verl = await post('/verl', { data_source: 'driftlens', solution_str: FULL, ground_truth: 'q1', extra_info: {} });
    expect(verl.status).toBe(200);
    expect(verl.body.score).toBeCloseTo(2 / 3, 12);
    expect(verl.body.error).toBe(0);
    expect(verl.body.details).toEqual({ labels: [A, C] });
    const batch = await post('/verl', {
      batch: [
        { solution_str: FULL, ground_truth: 'q1' },
        { solution_str: FULL, ground_truth: null, extra_info: { question_id: 'q2' } },
        { solution_str: FULL, ground_truth: 7 },
      ],
    });
    const scores = batch.body.results as Array<Record<string, unknown>>;
    expect(scores[0]!.score).toBeCloseTo(2 / 3, 12);
    expect(scores[1]!.score).toBeCloseTo(1 - 1 / 2, 12); // [A, C] vs [C]: DTW raw 1, normalised by max(2, 1)
    expect(scores[2]!.error).toBe(1);
    expect(scores[2]!.details).toEqual({ error: 'no question id in the label' });
    expect(scores[2]!.score).toBe(1 - 1);
  });

  it('takes the reference trajectory itself as the verl label (a list, or its Python literal), and flags an OpenRLHF prompt that is not a prefix', async () => {
    expect(referenceFromLabel([A, B, C])).toEqual([A, B, C]);
    expect(referenceFromLabel(`['${A}', "${B}", '${C}']`)).toEqual([A, B, C]);
    expect(referenceFromLabel('q1')).toBeNull();
    expect(referenceFromLabel([])).toBeNull();
    expect(referenceFromLabel("['a', ]x")).toBeNull();
    const list = await post('/verl', { data_source: 'symbolic_test', solution_str: FULL, ground_truth: [A, B, C] });
    expect(list.body.error).toBe(0);
    expect(list.body.score).toBeCloseTo(2 / 3, 12); // the same reference as q1
    const literal = await post('/verl', { batch: [{ solution_str: FULL, ground_truth: `['${C}']` }] });
    expect((literal.body.results as Array<Record<string, unknown>>)[0]!.score).toBeCloseTo(1 - 1 / 2, 12);

    const prompt = '<|user|>Should I?<|assistant|>';
    const open = await post('/openrlhf', {
      query: [`${prompt}${FULL}`, `<|user|>Something else<|assistant|>${FULL}`],
      prompts: [prompt, prompt],
      labels: ['q1', [A, B, C]],
    });
    expect((open.body.extra_logs as { error: number[] }).error).toEqual([0, 1]);
    const results = open.body.results as Array<Record<string, unknown>>;
    expect(results[1]!.error).toMatch(/does not start with prompts\[1\]/);
    expect((open.body.rewards as number[])[1]).toBeLessThan((open.body.rewards as number[])[0]!);
  });

  it('never labels the same response twice', async () => {
    const before = { ...labeler.stats };
    await post('/score', {
      items: [
        { question_id: 'q1', response: FULL },
        { question_id: 'q2', response: FULL },
      ],
    });
    expect(labeler.stats.calls).toBe(before.calls);
    expect(labeler.stats.memoryHits - before.memoryHits).toBe(2);
  });

  it('answers wrong payloads with a 4xx and a reason, and keeps serving', async () => {
    const cases: Array<[string, unknown, number, RegExp]> = [
      ['/score', '{not json', 400, /not JSON/],
      ['/score', { items: 'x' }, 400, /items/],
      ['/score', { items: [{ question_id: 'q1' }] }, 400, /response must be a string/],
      ['/openrlhf', { query: ['a', 'b'], labels: ['q1'] }, 400, /labels/],
      ['/openrlhf', { query: ['a'], prompts: ['a', 'b'], labels: ['q1'] }, 400, /prompts/],
      ['/openrlhf', [1, 2], 400, /query/],
      ['/verl', { ground_truth: 'q1' }, 400, /solution_str/],
      ['/nowhere', {}, 404, /no route/],
    ];
    for (const [path, body, status, reason] of cases) {
      const res = await post(path, body);
      expect(res.status, path).toBe(status);
      expect(String(res.body.error)).toMatch(reason);
    }
    const get = await fetch(`${server.url}/score`);
    expect(get.status).toBe(405);
    const health = await fetch(`${server.url}/health`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { stats: { badRequests: number } }).stats.badRequests).toBe(cases.length + 1);
    const after = await post('/score', { items: [{ question_id: 'q1', response: FULL }] });
    expect((after.body.results as Array<{ reward: number }>)[0]!.reward).toBeCloseTo(2 / 3, 12);
  });
});

describe('label cache across segments and restarts', () => {
  it('moves to a new run segment when full and reuses stored cells after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-segments-'));
    const run = await openExperimentRun(join(dir, 'reward.db'), 'memory-reward', { test: 'segments' }, 42);
    const ontology = loadBuiltinOntology();
    const first = new CachedLabeler({ store: run.store, runId: run.runId, labeler: 'sim:labeler', ontology, segmentCells: 2 });
    const responses = [A, B, C].map((symbol) => `<step_1>${sentence(symbol)}</step_1><step_2>${sentence(A)}</step_2>`);
    for (const response of responses) await first.labelAll([response]);
    expect(first.stats.calls).toBe(3);
    expect((await run.store.getRun(`${run.runId}.1`))?.manifest.options).toMatchObject({ segmentOf: run.runId, segment: 1 });
    expect(await run.store.getRun(`${run.runId}.2`)).toBeUndefined();
    // A restarted server has an empty LRU but finds the labeler cells in the store.
    const restarted = new CachedLabeler({ store: run.store, runId: run.runId, labeler: 'sim:labeler', ontology });
    const again = await restarted.labelAll(responses);
    expect(again.map((o) => (o.ok ? o.symbols : null))).toEqual([
      [A, A],
      [B, A],
      [C, A],
    ]);
    expect(restarted.stats).toMatchObject({ calls: 0, storeHits: 3, memoryHits: 0 });
    await run.store.close();
  });
});

describe('labelling a batch of long responses', () => {
  it('cuts it into stages of at most stageChars characters of steps, with the same labels as one stage', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-stages-'));
    const ontology = loadBuiltinOntology();
    // Six responses of about 1,000 characters of steps each, distinct, labelled [x, A, C].
    const long = (i: number, symbol: string) =>
      `<step_1>${sentence(symbol)} ${'filler '.repeat(120)}${i}</step_1><step_2>${sentence(A)}</step_2><step_3>${sentence(C)}</step_3>`;
    const responses = Array.from({ length: 6 }, (_, i) => long(i, [A, B, C][i % 3]!));
    const oneRun = await openExperimentRun(join(dir, 'one.db'), 'memory-reward', { test: 'one-stage' }, 42);
    const whole = new CachedLabeler({ store: oneRun.store, runId: oneRun.runId, labeler: 'sim:labeler', ontology });
    const expected = await whole.labelAll(responses);
    expect(whole.stagesRun).toBe(1);
    const splitRun = await openExperimentRun(join(dir, 'split.db'), 'memory-reward', { test: 'split' }, 42);
    const split = new CachedLabeler({ store: splitRun.store, runId: splitRun.runId, labeler: 'sim:labeler', ontology, stageChars: 2_500 });
    const got = await split.labelAll(responses);
    // Two responses (about 2,000 characters) fit in 2,500: three stages.
    expect(split.stagesRun).toBe(3);
    expect(split.stats.calls).toBe(6);
    expect(got).toEqual(expected);
    expect(got.every((o) => o.ok && o.symbols.length === 3)).toBe(true);
    await oneRun.store.close();
    await splitRun.store.close();
  });
});
