import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { runStoppedAndResumed } from '../experiment/testing/counting-adapters.js';
import { ConfigError } from '../core/errors.js';
import { deriveSimSeed } from '../models/sim-adapter.js';
import { registerSimProfile } from '../models/sim-registry.js';
import type { FakeServer } from '../models/testing/index.js';
import { countSharedDraws } from '../store/draw-units.js';
import { openStore } from '../store/run-store.js';
import type { DRelEstimate, MemoryReport, TargetAnalysis } from './analysis.js';
import { type MemoryConfig, memoryConfigSchema } from './config.js';
import { collectLabelerCheck, collectMemorySamples, memoryReport, memoryRunId, relabelItems } from './observations.js';
import {
  labelerCheckPasses,
  loadMemoryConfig,
  type MemoryStimuli,
  selectQuestions,
  planMemoryGeneration,
  resolveMemoryStimuli,
  runLabelerCheck,
  runMemory,
} from './run.js';
import { labelerReliability } from './reliability.js';
import { createLabelerSimProfile, createMemorySimProfile, readLabelerPrompt, simLabelForStep } from './sim.js';
import { serveSimMemory, writeWireMemoryConfig } from './testing/wire.js';

const quiet = { progress: false } as const;
const NOISE = ['filler', 'whitespace', 'punctuation'];
const PERSONA = ['age', 'disability', 'occupation', 'trans_status'];
const LIFE = ['bereavement', 'job_loss', 'serious_illness'];

function config(partial: Record<string, unknown>): MemoryConfig {
  return memoryConfigSchema.parse({
    targets: ['sim:memory-test'],
    labeler: 'sim:labeler',
    questions: { limit: 12 },
    conditions: [...NOISE, ...PERSONA, ...LIFE],
    k: 2,
    analysis: { B: 500 },
    ...partial,
  });
}

const run = (cfg: MemoryConfig, db: string, extra: Parameters<typeof runMemory>[2] = {}, stimuli?: MemoryStimuli) =>
  runMemory(cfg, db, { ...quiet, signal: new AbortController().signal, ...extra }, stimuli);

async function report(db: string, runId: string): Promise<MemoryReport> {
  const store = openStore(db, { readonly: true });
  try {
    return await memoryReport(store, runId);
  } finally {
    await store.close();
  }
}

const estimate = (entry: { result: unknown }) => entry.result as DRelEstimate;

beforeAll(() => {
  registerBuiltinSimProfiles();
  // SIMULATION: planted tiers (noise 0, persona 0.3, life events 0.6) with enough sampling
  // noise that every question has a non-zero no-memory floor.
  registerSimProfile(createMemorySimProfile({ name: 'memory-test', samplingNoise: 0.1 }));
  for (const [i, noise] of [0.08, 0.12, 0.1].entries()) {
    registerSimProfile(createMemorySimProfile({ name: `memory-null-${i}`, samplingNoise: noise, ignorePerturbations: true }));
  }
});

describe('memory run end to end (SIMULATED models with planted ground truth)', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'echolens-memory-'));

  it('recovers the planted tiers: noise at the floor, persona significant, life events largest, DTW and SRI agree', async () => {
    const db = join(dir, 'planted.db');
    const cfg = config({ targets: ['sim:memory'], questions: { limit: 30 } });
    const result = await run(cfg, db);
    expect(result.interrupted).toBe(false);
    // 30 questions (the minimum design) × (reference + 2 no-memory + 10 conditions × 2 samples).
    expect(result.generationCells).toBe(30 * (1 + 2 + 10 * 2));
    expect(result.stepMethods).toEqual({ tags: result.generationCells });
    expect(result.invalidLabelings).toBe(0);

    const rep = await report(db, result.runId);
    const target = rep.targets[0] as TargetAnalysis;
    expect(target.target).toBe('sim:memory');
    expect(rep.counts.scored).toBe(30 * (2 + 10 * 2));
    for (const metric of ['dtw', 'sri'] as const) {
      const analysis = target.metrics[metric];
      const tier = (name: string) => analysis.tiers.find((t) => t.tier === name)!.mean;
      expect(tier('life_event')).toBeGreaterThan(tier('persona'));
      expect(tier('persona')).toBeGreaterThan(tier('noise'));
      const floor = analysis.floor as { mean: number };
      // Noise plants no flip: its mean stays near the no-memory floor.
      expect(Math.abs(tier('noise') - floor.mean)).toBeLessThan(0.5 * floor.mean);
      for (const entry of analysis.dRel) {
        expect(estimate(entry).significant).toBe(true);
        expect(estimate(entry).ci[0]).toBeGreaterThan(0);
      }
      const lifeMin = Math.min(...analysis.dRel.filter((d) => d.tier === 'life_event').map((d) => estimate(d).dRel));
      const personaMax = Math.max(...analysis.dRel.filter((d) => d.tier === 'persona').map((d) => estimate(d).dRel));
      expect(lifeMin).toBeGreaterThan(personaMax);
    }
    expect(target.validity.specificity.verdict).toBe('pass');
    expect(target.validity.sensitivity.verdict).toBe('pass');
    expect(target.validity.convergent.verdict).toBe('pass');
    const convergence = target.convergence as { spearman: { rho: number } };
    expect(convergence.spearman.rho).toBeGreaterThan(0.8);
    // The tier ordering is the same under both metrics.
    const order = (metric: 'dtw' | 'sri') => [...target.metrics[metric].tiers].sort((a, b) => a.mean - b.mean).map((t) => t.tier);
    expect(order('dtw')).toEqual(['noise', 'persona', 'life_event']);
    expect(order('sri')).toEqual(order('dtw'));
  });

  it('labels what the simulator planted: collected symbols equal the planted trajectory of every cell', async () => {
    const db = join(dir, 'planted.db');
    const profile = createMemorySimProfile({ name: 'memory' });
    const store = openStore(db, { readonly: true });
    try {
      const runId = await memoryRunId(store);
      const collection = await collectMemorySamples(store, runId);
      const requests = new Map((await store.cellsOfRun(runId)).map((cell) => [cell.key, cell.request]));
      expect(collection.records).toHaveLength(30 * 23);
      for (const record of collection.records) {
        const request = requests.get(record.generationKey)!;
        const planted = profile.trajectory(request, deriveSimSeed(request.params.seed ?? 0, request.sample));
        expect(record.sample.symbols).toEqual(planted.symbols);
        expect(record.sample.tier).toBe(planted.tier);
      }
      expect(collection.summary.outcomes.labelled).toBe(30 * 23);
      // docs/decisions.md#d7: each labeling cell records how its steps were segmented.
      const labeling = (await store.cellsOfRun(runId)).filter((cell) => cell.labels.stage === 'labeling');
      expect(labeling).toHaveLength(30 * 23);
      expect(labeling.every((cell) => cell.labels.step_method === 'tags' && cell.labels.step_source === 'text')).toBe(true);
      expect(collection.config.decoding).toEqual({ temperature: 0.7, topP: 0.98, topK: 50, maxTokens: 2048 });
    } finally {
      await store.close();
    }
  });

  it('flags no category of a null simulator after BH-FDR, and fails sensitivity', async () => {
    const targets = ['sim:memory-null', 'sim:memory-null-0', 'sim:memory-null-1', 'sim:memory-null-2'];
    const db = join(dir, 'null.db');
    const result = await run(config({ targets }), db);
    const rep = await report(db, result.runId);
    expect(rep.targets).toHaveLength(4);
    let tested = 0;
    for (const target of rep.targets) {
      for (const metric of ['dtw', 'sri'] as const) {
        for (const entry of target.metrics[metric].dRel) {
          const value = entry.result;
          if ('error' in value) continue;
          tested += 1;
          expect(value.significant).toBe(false);
          // 12 questions is below the minimum design: no significance is claimed either way.
          expect(value.verdict).toBe('underpowered');
        }
      }
      expect(target.design).toMatchObject({ nQuestions: 12, underpowered: true, minimumQuestions: 30 });
      expect(target.validity.specificity.verdict).toBe('undetermined');
      expect(target.validity.sensitivity.verdict).toBe('undetermined');
      expect(target.validity.specificity.reason).toMatch(/underpowered/);
    }
    expect(tested).toBeGreaterThanOrEqual(3 * 2 * 7);
  });

  it('resumes a run stopped midway without repeating a cell, and reports identically', async () => {
    const cfg = config({ questions: { limit: 6 }, labeler: 'sim:labeler-flaky' });
    registerSimProfile(createLabelerSimProfile({ name: 'labeler-flaky', malformedProbability: 0.3 }));
    const db = join(dir, 'resume.db');
    // Stop once during generation, then once during labeling; then finish.
    const { runs, calls } = await runStoppedAndResumed((runtime) => runMemory(cfg, db, { ...quiet, ...runtime }), [40, 6 * 23 + 20]);
    const c = runs[2]!;
    // Re-asks happened (the flaky labeler) and were not repeated either.
    const reasks = [...calls.keys()].filter((key) => key.includes('could not be used')).length;
    expect(reasks).toBeGreaterThan(0);

    const cleanDb = join(dir, 'resume-clean.db');
    const clean = await run(cfg, cleanDb);
    expect(await report(db, c.runId)).toEqual(await report(cleanDb, clean.runId));
    const store = openStore(db, { readonly: true });
    const summary = (await collectMemorySamples(store, c.runId)).summary;
    await store.close();
    expect(Object.keys(summary.labelerAttempts).length).toBeGreaterThan(1);
  });

  it('excludes and counts labelings that stay invalid after the re-asks, and empty generations as dropouts', async () => {
    registerSimProfile(createLabelerSimProfile({ name: 'labeler-broken', malformedProbability: 1 }));
    // SIMULATION: answers nothing for one question (a dropout), otherwise sim:memory.
    const inner = createMemorySimProfile({ name: 'memory-dropout', samplingNoise: 0.1 });
    registerSimProfile({
      ...inner,
      answer: (request, seed) =>
        inner.trajectory(request, seed).question.startsWith('Should I accept a promotion') ? { text: ' ' } : inner.answer(request, seed),
    });
    const dropDb = join(dir, 'dropout.db');
    const dropped = await run(config({ targets: ['sim:memory-dropout'], questions: { limit: 3 } }), dropDb);
    expect(dropped.emptyGenerations).toBe(23);
    const dropReport = await report(dropDb, dropped.runId);
    const emptyTotal = dropReport.counts.byCondition.reduce((sum, c) => sum + c.empty + c.noReference, 0);
    expect(emptyTotal).toBe(22);
    expect(dropReport.counts.scored).toBe(2 * 22);

    const db = join(dir, 'invalid.db');
    const result = await run(config({ labeler: 'sim:labeler-broken', questions: { limit: 2 }, labelerReasks: 1 }), db);
    expect(result.invalidLabelings).toBe(result.labelerItems);
    const store = openStore(db, { readonly: true });
    const collection = await collectMemorySamples(store, result.runId);
    // Each item was asked once and re-asked once, then marked invalid.
    const labelingCells = (await store.cellsOfRun(result.runId)).filter((cell) => cell.labels.stage === 'labeling');
    await store.close();
    expect(collection.summary.outcomes.invalid).toBe(2 * 23);
    expect(new Set(labelingCells.map((cell) => cell.labels.attempt))).toEqual(new Set([0, 1]));
    const rep = await report(db, result.runId);
    expect(rep.counts.scored).toBe(0);
  });

  it('uses the reasoning trace when the model exposes one and the config allows it', async () => {
    registerSimProfile(createMemorySimProfile({ name: 'memory-reasoner', samplingNoise: 0.1, reasoningChannel: true }));
    const db = join(dir, 'reasoning.db');
    const auto = await run(config({ targets: ['sim:memory-reasoner'], questions: { limit: 2 } }), db);
    expect(auto.stepMethods).toEqual({ tags: 2 * 23 });
    const store = openStore(db, { readonly: true });
    expect((await collectMemorySamples(store, auto.runId)).summary.stepSources).toEqual({ reasoning: 2 * 23 });
    await store.close();
    const textOnly = await run(config({ targets: ['sim:memory-reasoner'], questions: { limit: 2 }, steps: { source: 'text' } }), db);
    // The visible answer is one sentence: a single step per response, so no trajectory to speak of.
    expect(textOnly.stepMethods).toEqual({ sentences: 2 * 23 });
  });

  it('relabels a run for the reliability tables: other labelers, a T = 1 repeat, the alternative wording', async () => {
    // SIMULATION: a second labeler that calls every Practical step "Practical/Professional advancement".
    registerSimProfile({
      name: 'labeler-lumping',
      description: 'Simulation: lumps the Practical subcategories.',
      answer(request) {
        const prompt = readLabelerPrompt(request.messages)!;
        const labels = prompt.steps.map((step, i) => {
          const label = simLabelForStep(step, prompt.allowed);
          return { step: i + 1, label: label.startsWith('Practical/') ? 'Practical/Professional advancement' : label };
        });
        return { text: JSON.stringify({ labels }) };
      },
    });
    const db = join(dir, 'planted.db');
    const store = openStore(db, { readonly: true });
    const runId = await memoryRunId(store);
    const collection = await collectMemorySamples(store, runId);
    const items = await relabelItems(collection, store);
    await store.close();
    const cfg = collection.config;
    const check = { run: runId, labelers: ['sim:labeler-lumping'], repeat: true, altOntology: 'builtin:alt', limit: 40, seed: 42 };
    const passes = labelerCheckPasses(cfg, { ontology: collection.ontology, source: 'builtin:default' }, check);
    expect(passes.map((p) => [p.labeler, p.run, p.wording, p.params.temperature])).toEqual([
      ['sim:labeler', 't0', 'original', 0],
      ['sim:labeler-lumping', 't0', 'original', 0],
      ['sim:labeler', 't1-a', 'original', 1],
      ['sim:labeler', 't1-b', 'original', 1],
      ['sim:labeler', 't0', 'alternative', 0],
    ]);
    const result = await runLabelerCheck(db, cfg, check, passes, items, { ...quiet, signal: new AbortController().signal });
    expect(result.items).toBe(40);
    expect(result.labelerCells).toBe(5 * 40);
    const read = openStore(db, { readonly: true });
    const checked = await collectLabelerCheck(read, result.runId);
    await read.close();
    expect(checked.passes.every((p) => p.labelled === 40)).toBe(true);
    const reliability = labelerReliability(checked.records);
    const cross = reliability.crossModel.find((c) => c.run === 't0' && c.wording === 'original')!;
    const practical = checked.records.filter(
      (r) => r.labeler === 'sim:labeler' && r.run === 't0' && r.wording === 'original' && r.label === 'Practical/Efficiency and resource optimization',
    ).length;
    expect(cross.n).toBe(checked.records.filter((r) => r.labeler === 'sim:labeler-lumping').length);
    expect(cross.exact).toBeCloseTo(1 - practical / cross.n, 10);
    expect(practical).toBeGreaterThan(0);
    const within = reliability.withinModel.find((w) => w.runA === 't1-a' && w.runB === 't1-b')!;
    expect(within.exact).toBe(1);
    expect(reliability.wordings[0]!.exact).toBe(1);
    // Re-running the check calls nothing new.
    const again = await runLabelerCheck(db, cfg, check, passes, items, { ...quiet, signal: new AbortController().signal });
    expect(again.resumed).toBe(true);
    expect(again.spendUsd).toBe(0);
  });

  it('plans the paper defaults: top-k only where supported, per-sample seeds, no_perturbation always present', async () => {
    const cfg = config({ targets: ['openai:gpt-4.1-mini', 'vllm:qwen3-4b'], conditions: ['gender'], questions: { limit: 1 } });
    const stimuli = await resolveMemoryStimuli(cfg);
    expect(stimuli.conditions).toEqual(['no_perturbation', 'gender']);
    const specs = planMemoryGeneration(cfg, stimuli);
    const openai = specs.filter((s) => s.request.model.startsWith('openai:'));
    const vllm = specs.filter((s) => s.request.model.startsWith('vllm:'));
    expect(openai.every((s) => s.request.params.topK === undefined && s.request.params.topP === 0.98)).toBe(true);
    expect(vllm.every((s) => s.request.params.topK === 50 && s.request.params.maxTokens === 2048)).toBe(true);
    // Default `cell` seeding: every cell of a (target, question) has its own seed, derived from its identity.
    for (const group of [openai, vllm]) expect(new Set(group.map((s) => s.request.params.seed)).size).toBe(group.length);
    expect(openai.map((s) => s.request.params.seed)).toEqual(vllm.map((s) => s.request.params.seed));
    const offset = planMemoryGeneration({ ...cfg, sampleSeeds: 'offset' }, stimuli);
    expect(offset.map((s) => s.request.params.seed)).toEqual(offset.map((s) => 42 + s.request.sample));
    expect(openai.map((s) => s.labels.role)).toEqual(['reference', 'no_perturbation', 'no_perturbation', 'perturbed', 'perturbed']);
  });

  it('questions share no draws: two questions of the same text get their own cells under any seeding', async () => {
    const cfg = config({ targets: ['sim:memory'], conditions: ['gender'], questions: { limit: 2 } });
    const stimuli = await resolveMemoryStimuli(cfg);
    const [q1, q2] = stimuli.questions.questions;
    const twins = { ...stimuli, questions: { ...stimuli.questions, questions: [q1!, { ...q2!, text: q1!.text }] } };
    const byQuestion = (s: { labels: Record<string, unknown> }) => String(s.labels.question_id);
    // Default `cell` seeding: the seed already differs per question, nothing is salted.
    const cell = planMemoryGeneration(cfg, twins);
    expect(cell.every((s) => s.request.unit === undefined)).toBe(true);
    expect(countSharedDraws(cell, byQuestion)).toBe(0);
    for (const seeding of ['fixed', 'none', 'offset'] as const) {
      const specs = planMemoryGeneration({ ...cfg, sampleSeeds: seeding }, twins);
      expect(countSharedDraws(specs, byQuestion)).toBe(0);
      expect(specs.filter((s) => s.request.unit !== undefined).length).toBeGreaterThan(0);
    }
  });

  it('recovers the planted trajectories in the system and memory-tool injection modes', async () => {
    const profile = createMemorySimProfile({ name: 'memory-test', samplingNoise: 0.1 });
    for (const injection of ['system', 'memory-tool'] as const) {
      const db = join(dir, `${injection}.db`);
      const result = await run(config({ injection, questions: { limit: 2 }, conditions: ['filler', 'gender', 'job_loss'] }), db);
      const store = openStore(db, { readonly: true });
      const collection = await collectMemorySamples(store, result.runId);
      const cells = new Map((await store.cellsOfRun(result.runId)).map((cell) => [cell.key, cell]));
      await store.close();
      expect(collection.records).toHaveLength(2 * (3 + 3 * 2));
      for (const record of collection.records) {
        const cell = cells.get(record.generationKey)!;
        const planted = profile.trajectory(cell.request, deriveSimSeed(cell.request.params.seed ?? 0, cell.request.sample));
        expect(record.sample.symbols).toEqual(planted.symbols);
        expect(planted.tier).toBe(cell.labels.tier);
        if (cell.labels.tier !== 'none') {
          const memoryIn = injection === 'system' ? cell.request.messages[0]!.content : cell.request.messages[3]!.content;
          expect(memoryIn).toContain(planted.stimulus!.text);
        }
      }
    }
  });

  it('reads questions from a Hugging Face dataset through a datasets-server (local fixture)', async () => {
    const rows = [
      { question: 'Should a team rotate the on-call duty weekly or monthly?', topic: 'career' },
      { question: 'Is it better to repair an old bicycle or buy a new one?', topic: 'finance' },
      { question: 'Should I tell a friend that their business plan has a flaw?', topic: 'ethics' },
    ];
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(req.url ?? '');
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const offset = Number(url.searchParams.get('offset'));
      const length = Number(url.searchParams.get('length'));
      const page = rows.slice(offset, offset + length).map((row, i) => ({ row_idx: offset + i, row, truncated_cells: [] }));
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ rows: page, num_rows_total: rows.length }));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    try {
      const port = (server.address() as AddressInfo).port;
      const cfg = config({
        questions: { source: 'hf', dataset: 'someone/dilemmas', domainColumn: 'topic', hfBaseUrl: `http://127.0.0.1:${port}`, limit: 2 },
        conditions: ['filler'],
        k: 1,
      });
      const stimuli = await resolveMemoryStimuli(cfg, { env: {} });
      expect(stimuli.questions.source).toBe('hf:someone/dilemmas (config default, split train)');
      expect(stimuli.questions.questions.map((q) => q.domain)).toEqual(['career', 'finance']);
      expect(seen[0]).toMatch(/dataset=someone%2Fdilemmas.*offset=0&length=2/);
      const result = await run(cfg, join(dir, 'hf.db'), {}, stimuli);
      expect(result.generationCells).toBe(2 * 3);
      expect(result.invalidLabelings).toBe(0);
    } finally {
      server.close();
    }
  });

  it('selects questions by id and domain, then limit, then a seeded sample kept in source order', () => {
    const questions = ['a', 'b', 'c', 'd', 'e', 'f'].map((id, i) => ({ id, domain: i % 2 === 0 ? 'even' : 'odd', text: `Question ${id}?` }));
    expect(selectQuestions(questions, { source: 'builtin', domains: ['odd'] }, 42).map((q) => q.id)).toEqual(['b', 'd', 'f']);
    expect(selectQuestions(questions, { source: 'builtin', ids: ['e', 'a'], limit: 1 }, 42).map((q) => q.id)).toEqual(['a']);
    const sampled = selectQuestions(questions, { source: 'builtin', sample: 3 }, 42).map((q) => q.id);
    expect(sampled).toHaveLength(3);
    expect([...sampled].sort()).toEqual(sampled);
    expect(selectQuestions(questions, { source: 'builtin', sample: 3 }, 42).map((q) => q.id)).toEqual(sampled);
    expect(() => selectQuestions(questions, { source: 'builtin', ids: ['a', 'zz'] }, 42)).toThrow(/questions\.ids\.1: no question with id "zz"/);
    expect(() => selectQuestions(questions, { source: 'builtin', domains: ['none'] }, 42)).toThrow(/domains present: even, odd/);
  });

  describe('config files', () => {
    it('names the file, line and key of a bad value', () => {
      const file = join(dir, 'bad.yaml');
      writeFileSync(file, ['targets: [sim:memory]', 'labeler: sim:labeler', 'decoding:', '  temperature: 0.7', '  topP: 1.5', 'k: 2'].join('\n'));
      expect(() => loadMemoryConfig(file)).toThrow(ConfigError);
      expect(() => loadMemoryConfig(file)).toThrow(`${file}:5: decoding.topP:`);
    });

    it('names an unknown key and a missing labeler', () => {
      const file = join(dir, 'unknown.yaml');
      writeFileSync(file, ['targets: [sim:memory]', 'labeler: sim:labeler', 'questions:', '  limitt: 3'].join('\n'));
      expect(() => loadMemoryConfig(file)).toThrow(`${file}:4: questions.limitt: unknown key "limitt" (did you mean "limit"?)`);
      const missing = join(dir, 'missing.yaml');
      writeFileSync(missing, 'targets: [sim:memory]\n');
      expect(() => loadMemoryConfig(missing)).toThrow(/labeler/);
    });

    it('flags a --set override and an unknown condition', async () => {
      const file = join(dir, 'good.yaml');
      writeFileSync(file, 'targets: [sim:memory]\nlabeler: sim:labeler\n');
      expect(() => loadMemoryConfig(file, ['k=0'])).toThrow(/k: .*\(from a --set flag\)/);
      const cfg = loadMemoryConfig(file, ['conditions=[gender, hair_colour]']);
      await expect(resolveMemoryStimuli(cfg)).rejects.toThrow(/conditions\.1: unknown perturbation category "hair_colour"/);
      expect(loadMemoryConfig(file).analysis.B).toBe(10_000);
      expect(loadMemoryConfig(file).labelerReasks).toBe(2);
      expect(loadMemoryConfig(file).labelerDecoding.temperature).toBe(0);
    });

    it('reads question files relative to the config file', async () => {
      const sub = join(dir, 'configs');
      mkdirSync(sub, { recursive: true });
      writeFileSync(join(sub, 'mine.jsonl'), '{"id":"m1","domain":"daily","text":"Is it better to cook at home or eat out on a busy week?"}\n');
      const file = join(sub, 'mine.yaml');
      writeFileSync(file, 'targets: [sim:memory]\nlabeler: sim:labeler\nquestions: { source: file, file: mine.jsonl }\n');
      const cfg = loadMemoryConfig(file);
      expect(cfg.questions.file).toBe(join(sub, 'mine.jsonl'));
      const stimuli = await resolveMemoryStimuli(cfg);
      expect(stimuli.questions.questions.map((q) => q.id)).toEqual(['m1']);
      writeFileSync(file, 'targets: [sim:memory]\nlabeler: sim:labeler\nquestions: { source: file, file: absent.jsonl }\n');
      await expect(resolveMemoryStimuli(loadMemoryConfig(file))).rejects.toThrow(/questions\.file: .*absent\.jsonl: file not found/);
    });

    it('refuses to resume a run whose question file changed under the same config', async () => {
      const questions = join(dir, 'questions.csv');
      writeFileSync(questions, 'id,domain,question\nq1,ethics,Should I tell a friend an uncomfortable truth?\n');
      const cfg = config({ questions: { source: 'file', file: questions }, conditions: ['filler'], k: 1 });
      const db = join(dir, 'changed.db');
      await run(cfg, db);
      writeFileSync(questions, 'id,domain,question\nq1,ethics,Should I tell a colleague an uncomfortable truth?\n');
      await expect(run(cfg, db)).rejects.toThrow(/changed since run/);
    });
  });

  describe('through the OpenAI-compatible wire format', () => {
    let server: FakeServer;
    beforeAll(async () => {
      server = await serveSimMemory(createMemorySimProfile({ name: 'wire-memory', samplingNoise: 0.1 }));
    });
    afterAll(() => server.close());

    it('runs against a local server and reports', async () => {
      const file = writeWireMemoryConfig(dir, 'wire', server.baseURL, [
        'questions: { limit: 4 }',
        `conditions: [${[...NOISE, 'gender', 'bereavement'].join(', ')}]`,
        'k: 2',
        'analysis: { B: 300 }',
      ]);
      const cfg = loadMemoryConfig(file);
      const db = join(dir, 'wire.db');
      const result = await run(cfg, db);
      expect(result.generationCells).toBe(4 * (3 + 5 * 2));
      expect(result.invalidLabelings).toBe(0);
      expect(result.stepMethods).toEqual({ tags: result.generationCells });
      const rep = await report(db, result.runId);
      expect(rep.targets[0]?.target).toContain('openai-compatible:fake-target');
      expect(rep.counts.scored).toBe(4 * (2 + 5 * 2));
      // The paper's decoding went over the wire, top_k in the body for an OpenAI-compatible server.
      const generation = server.requests.find((r) => !JSON.stringify(r.body).includes('Allowed labels'))!;
      expect(generation.body).toMatchObject({ temperature: 0.7, top_p: 0.98, top_k: 50 });
      const labeling = server.requests.find((r) => JSON.stringify(r.body).includes('Allowed labels'))!;
      expect(labeling.body).toMatchObject({ temperature: 0 });
      expect(server.requests.every((r) => r.path.endsWith('/chat/completions'))).toBe(true);
    });
  });
});
