import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { sectionsHtml } from '../report/document/render-html.js';
import { sectionsMarkdown } from '../report/document/render-markdown.js';
import { collectionSection } from './document.js';
import { createAdapter } from '../models/create-adapter.js';
import { openStore } from '../store/run-store.js';
import { memoryConfigSchema } from './config.js';
import { collectMemorySamples, memoryReport } from './observations.js';
import {
  buildRefusalJudgeMessages,
  combineRefusal,
  createRefusalJudgeSimProfile,
  parseRefusalJudgeOutput,
  REFUSAL_JUDGE_STAGE,
  refusalAgreement,
} from './refusal-judge.js';
import { runMemory } from './run.js';
import { SIM_HARD_REFUSAL, SIM_SOFT_REFUSAL } from './sim.js';

describe('refusal judge (pure)', () => {
  it('parses one JSON verdict strictly', () => {
    expect(parseRefusalJudgeOutput('{"refusal": true}')).toEqual({ ok: true, value: true });
    expect(parseRefusalJudgeOutput('Sure: {"refusal": false}')).toEqual({ ok: true, value: false });
    expect(parseRefusalJudgeOutput('{"refusal": "yes"}')).toMatchObject({ ok: false, error: /schema/ });
    expect(parseRefusalJudgeOutput('no')).toMatchObject({ ok: false, error: /no_json/ });
    expect(parseRefusalJudgeOutput('')).toMatchObject({ ok: false, error: /empty/ });
  });

  it('lets the judge decide when it has a verdict, the detector otherwise', () => {
    expect(combineRefusal(false, true)).toEqual({ refusal: true, source: 'judge' });
    expect(combineRefusal(true, false)).toEqual({ refusal: false, source: 'judge' });
    expect(combineRefusal(true, null)).toEqual({ refusal: true, source: 'detector' });
  });

  it('counts agreement and Cohen kappa (hand-computed)', () => {
    // 2 both, 1 judge only, 0 detector only, 7 neither: p_o = .9, p_e = .3·.2 + .7·.8 = .62, κ = .28/.38.
    const pairs = [
      ...Array.from({ length: 2 }, () => ({ detector: true, judge: true })),
      { detector: false, judge: true },
      ...Array.from({ length: 7 }, () => ({ detector: false, judge: false })),
    ];
    const a = refusalAgreement(pairs);
    expect(a).toMatchObject({ judged: 10, both: 2, judgeOnly: 1, detectorOnly: 0, neither: 7 });
    expect(a.agreement).toBeCloseTo(0.9, 12);
    expect(a.kappa).toBeCloseTo(0.28 / 0.38, 12);
    expect(refusalAgreement([])).toMatchObject({ judged: 0, agreement: null, kappa: null });
    expect(refusalAgreement([{ detector: false, judge: false }]).kappa).toBeNull();
  });

  it('the sim judge catches the soft wording the detector misses', () => {
    const judge = createRefusalJudgeSimProfile();
    const ask = (answer: string) =>
      JSON.parse(judge.answer({ model: 'sim:refusal-judge', messages: buildRefusalJudgeMessages(answer), params: {}, sample: 0 }, 0).text);
    expect(ask(SIM_HARD_REFUSAL)).toEqual({ refusal: true });
    expect(ask(SIM_SOFT_REFUSAL)).toEqual({ refusal: true });
    expect(ask('<step_1>Fairness matters.</step_1><answer>Take the job.</answer>')).toEqual({ refusal: false });
  });
});

describe('memory run with refusalJudge (SIMULATED target that refuses more under memory)', { timeout: 120_000 }, () => {
  beforeAll(() => registerBuiltinSimProfiles());
  const dir = mkdtempSync(join(tmpdir(), 'echolens-refusal-judge-'));
  const base = {
    targets: ['sim:memory-refusing'],
    labeler: 'sim:labeler',
    questions: { limit: 16 },
    conditions: ['filler', 'age', 'bereavement', 'job_loss'],
    k: 2,
    analysis: { B: 200 },
  };

  it('judges every answer in cached cells, excludes what it calls refusals, and reports agreement with the detector', async () => {
    const db = join(dir, 'judged.db');
    const calls = { judge: 0 };
    const runtime = {
      progress: false,
      signal: new AbortController().signal,
      adapterFor: (ref: string) => {
        const adapter = createAdapter(ref);
        if (!ref.startsWith('sim:refusal-judge')) return adapter;
        return Object.assign(Object.create(adapter), {
          generate: (request: Parameters<typeof adapter.generate>[0]) => {
            calls.judge += 1;
            return adapter.generate(request);
          },
        });
      },
    } as const;
    const cfg = memoryConfigSchema.parse({ ...base, refusalJudge: { model: 'sim:refusal-judge' } });
    const first = await runMemory(cfg, db, runtime);
    expect(first.judgedAnswers).toBe(first.generationCells);
    const store = openStore(db, { readonly: true });
    try {
      const cells = await store.cellsOfRun(first.runId);
      const judgeCells = cells.filter((c) => c.labels.stage === REFUSAL_JUDGE_STAGE);
      expect(judgeCells.length).toBeGreaterThan(0);
      expect(judgeCells.every((c) => c.request.params.temperature === 0)).toBe(true);
      const collection = await collectMemorySamples(store, first.runId);
      const judge = collection.summary.refusalJudge!;
      expect(judge.answers).toBe(first.generationCells);
      expect(judge.invalid + judge.unanswered).toBe(0);
      // Soft refusals: the judge's alone. Hard ones: both. The detector never flags what the judge clears.
      expect(judge.agreement.judgeOnly).toBeGreaterThan(0);
      expect(judge.agreement.both).toBeGreaterThan(0);
      expect(judge.agreement.detectorOnly).toBe(0);
      expect(judge.refusals).toBe(judge.agreement.both + judge.agreement.judgeOnly);
      expect(collection.summary.outcomes.refused).toBe(judge.refusals);
      expect(first.refusals).toBe(judge.refusals);
      const refused = collection.records.filter((r) => r.outcome === 'refused');
      expect(refused.every((r) => r.refusalSource === 'judge')).toBe(true);
      // No refused answer was sent to the labeler.
      const labeled = new Set(cells.filter((c) => c.labels.stage === 'labeling').map((c) => c.labels.generationKey));
      expect(refused.some((r) => labeled.has(r.generationKey))).toBe(false);
      // Per target × condition against the floor; life events refuse more than no memory (30 % vs 5 % planted).
      const report = await memoryReport(store, first.runId);
      const bereavement = report.refusals.find((r) => r.condition === 'bereavement')!;
      expect(bereavement.refused).toBeGreaterThan(0);
      expect(report.refusals.map((r) => r.condition).sort()).toEqual(['age', 'bereavement', 'filler', 'job_loss']);
      expect(sectionsMarkdown([collectionSection(first.runId, collection.summary)])).toMatch(
        /Refusal judge `sim:refusal-judge`.*judge only \d+, detector only 0/,
      );
      // The HTML report carries the judge's agreement and the labeler's failure reasons (escaped).
      const withFailure = { ...collection.summary, labelerFailures: { 'chunk 2/3: no_json <x>': 1 } };
      const section = (await sectionsHtml([collectionSection(first.runId, withFailure)])).html;
      expect(section).toMatch(/Refusal judge <code>sim:refusal-judge<\/code>.*judge only \d+, detector only 0/);
      expect(section).toContain('chunk 2/3: no_json &lt;x&gt; 1');
    } finally {
      await store.close();
    }
    const judgeCalls = calls.judge;
    expect(judgeCalls).toBeGreaterThan(0);
    expect(judgeCalls).toBeLessThanOrEqual(first.generationCells);
    // Resuming calls nothing again (the judge's cells are cached like every cell).
    const again = await runMemory(cfg, db, runtime);
    expect(again.resumed).toBe(true);
    expect(again.refusals).toBe(first.refusals);
    expect(calls.judge).toBe(judgeCalls);

    // Without a judge, the detector alone decides: the soft refusals are not counted as refusals.
    const plain = await runMemory(memoryConfigSchema.parse(base), db, runtime);
    expect(plain.judgedAnswers).toBeUndefined();
    expect(plain.refusals).toBeLessThan(first.refusals);
  });
});

describe('dry run with a refusal judge', () => {
  it('counts and prices one judge cell per generation', async () => {
    registerBuiltinSimProfiles();
    const { dryRunMemory, planMemoryGeneration, resolveMemoryStimuli } = await import('./run.js');
    const cfg = memoryConfigSchema.parse({
      targets: ['sim:memory'],
      labeler: 'sim:labeler',
      questions: { limit: 2 },
      conditions: ['filler'],
      refusalJudge: 'sim:refusal-judge',
    });
    const stimuli = await resolveMemoryStimuli(cfg);
    const specs = planMemoryGeneration(cfg, stimuli);
    const dry = dryRunMemory(cfg, stimuli, specs);
    expect(dry.judgeCells).toBe(specs.length);
    const plain = dryRunMemory({ ...cfg, refusalJudge: undefined }, stimuli, specs);
    expect(plain.judgeCells).toBeUndefined();
    expect(dry.estimate.cells).toBeGreaterThan(plain.estimate.cells);
  });
});
