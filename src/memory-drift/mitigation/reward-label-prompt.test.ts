import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openExperimentRun } from '../../experiment/runtime.js';
import { countTokens } from '../../models/token-count.js';
import { messageDigest, requestKeys } from '../../store/request-hash.js';
import { buildLabelerMessages } from '../labeler.js';
import { loadBuiltinOntology } from '../ontology.js';
import { SIM_STEP_CUES } from '../sim.js';
import { extractSteps } from '../steps.js';
import './index.js';
import { labelerRequest, prepareLabel } from './reward-label-prompt.js';
import { CachedLabeler } from './reward-labeler.js';
import { RewardWorkerPool } from './reward-pool.js';
import { textAt, toWire } from './reward-request.js';
import { PAPER_REWARD_WEIGHTS } from './reward.js';

const A = 'Practical/Efficiency and resource optimization';
const C = 'Social/Social equity and justice';
const sentence = (symbol: string) => SIM_STEP_CUES[symbol]!.sentences[0]!;
const ontology = loadBuiltinOntology();
const setup = { model: 'sim:labeler', ontology };
const stepsOf = (response: string) => extractSteps(response).steps.filter((s) => s.trim() !== '');
// Long enough that the user message is cached and stored as a blob (request-hash.ts, blobs.ts).
const response = (i: number) => `<step_1>${sentence(A)} ${'filler '.repeat(2_000)}${i}</step_1><step_2>${sentence(C)}</step_2><step_3>Ünïcode “${i}”.</step_3>`;

describe('labeller requests prepared in a worker', () => {
  it('are the requests CachedLabeler builds, with the hashes the run store computes', () => {
    const steps = stepsOf(response(1));
    const prepared = prepareLabel(steps, setup);
    const messages = buildLabelerMessages(steps, ontology);
    expect(prepared.messages).toEqual(messages);
    expect(prepared.stepCount).toBe(3);
    // Hashed here on fresh objects (nothing primed): the same keys and digests.
    expect(prepared.keys).toEqual(requestKeys(labelerRequest('sim:labeler', buildLabelerMessages(steps, ontology))));
    expect(prepared.digests).toEqual(buildLabelerMessages(steps, ontology).map((m) => messageDigest(m)));
    // A sim labeller's prompt token count comes along; a real labeller's is not counted.
    expect(prepared.promptTokens).toBe(countTokens(messages.map((m) => m.content).join('\n')));
    expect(prepareLabel(steps, { ...setup, model: 'openai:gpt-4.1-mini' }).promptTokens).toBeUndefined();
  });

  it('label a batch exactly as steps do: same labels, same stored cells, same calls', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-label-prompt-'));
    const responses = Array.from({ length: 4 }, (_, i) => response(i));
    const fromSteps = await openExperimentRun(join(dir, 'steps.db'), 'memory-reward', { test: 'steps' }, 42);
    const viaSteps = new CachedLabeler({ store: fromSteps.store, runId: fromSteps.runId, labeler: 'sim:labeler', ontology });
    const expected = await viaSteps.labelAll(responses, responses.map(stepsOf));
    const fromPrepared = await openExperimentRun(join(dir, 'prepared.db'), 'memory-reward', { test: 'prepared' }, 42);
    const viaPrepared = new CachedLabeler({ store: fromPrepared.store, runId: fromPrepared.runId, labeler: 'sim:labeler', ontology });
    // As they arrive from a worker: copies, not the objects prepareLabel made.
    const prepared = responses.map((r) => structuredClone(prepareLabel(stepsOf(r), viaPrepared.promptSetup)));
    const got = await viaPrepared.labelAll(responses, prepared);
    expect(got).toEqual(expected);
    expect(got.every((o) => o.ok && o.symbols.length === 3)).toBe(true);
    expect(viaPrepared.stats).toEqual(viaSteps.stats);
    const cells = async (run: typeof fromSteps) => [...(await run.store.resultsOfRun(run.runId)).keys()].sort();
    expect(await cells(fromPrepared)).toEqual(await cells(fromSteps));
    // The same stored answers and usage (the prompt tokens counted in the worker or here).
    const stored = async (run: typeof fromSteps) =>
      [...(await run.store.resultsOfRun(run.runId)).values()].map(({ key, text, usage }) => ({ key, text, usage })).sort((a, b) => a.key.localeCompare(b.key));
    const storedPrepared = await stored(fromPrepared);
    expect(storedPrepared).toEqual(await stored(fromSteps));
    expect(storedPrepared.every((cell) => (cell.usage?.inputTokens ?? 0) > 2_000)).toBe(true);
    // A restarted labeller given the steps finds every cell the prepared requests stored.
    const restarted = new CachedLabeler({ store: fromPrepared.store, runId: fromPrepared.runId, labeler: 'sim:labeler', ontology });
    expect(await restarted.labelAll(responses, responses.map(stepsOf))).toEqual(expected);
    expect(restarted.stats).toMatchObject({ calls: 0, storeHits: 4 });
    // The count stored is the worker's, not counted again on this thread (altered here to tell them apart).
    const fromAltered = await openExperimentRun(join(dir, 'altered.db'), 'memory-reward', { test: 'altered' }, 42);
    const viaAltered = new CachedLabeler({ store: fromAltered.store, runId: fromAltered.runId, labeler: 'sim:labeler', ontology });
    await viaAltered.labelAll(
      responses,
      prepared.map((p) => ({ ...p, promptTokens: 7 })),
    );
    expect((await stored(fromAltered)).map((cell) => cell.usage?.inputTokens)).toEqual([7, 7, 7, 7]);
    await fromSteps.store.close();
    await fromPrepared.store.close();
    await fromAltered.store.close();
  });

  it('travel as latin1 or UTF-16 texts that decode to the very strings built', () => {
    // Odd and even lengths (alignment), latin1-only and wider texts, a lone surrogate (kept unit for unit).
    const stepSets = [['café au lait'], ['naïve', 'x'], ['emoji 😀 and a lone \ud800 surrogate'], ['plain ascii step', 'and one more!']];
    const wire = toWire(
      { route: '/score', single: false, items: stepSets.map((steps, i) => ({ questionId: `q${i}`, response: `r${i}`, steps, text: null })) },
      setup,
    );
    const encodings = new Set<string>();
    wire.items.forEach((item, i) => {
      const built = prepareLabel(stepSets[i]!, setup).messages;
      expect(item.label!.messages.map((m) => ({ role: m.role, content: textAt(wire.steps, m.content) }))).toEqual(built);
      for (const [start, , encoding] of item.label!.messages.flatMap((m) => m.content)) {
        encodings.add(encoding);
        if (encoding === 'utf16le') expect(start % 2).toBe(0);
      }
    });
    expect([...encodings].sort()).toEqual(['latin1', 'utf16le']);
    // Only the wide runs take two bytes a unit: the buffer is about the UTF-8 size.
    const utf8 = wire.items.reduce(
      (n, item) => n + item.label!.messages.reduce((m, message) => m + Buffer.byteLength(textAt(wire.steps, message.content)), 0),
      0,
    );
    expect(wire.steps.length).toBeLessThan(utf8 * 1.1);
  });

  describe('by the reward worker pool given the labeller setup', () => {
    const pool = new RewardWorkerPool(1, undefined, setup);
    afterAll(() => pool.close());
    const limits = { maxItems: 10, maxResponseChars: 100_000, maxSteps: 3, weights: PAPER_REWARD_WEIGHTS };

    it('send each labelled item its request instead of its steps; other items as before', async () => {
      const items = [
        { question_id: 'q1', response: response(7) },
        { question_id: 'q2', response: 'One. Two. Three. Four. Five.' },
        { question_id: 'q3', response: 'x'.repeat(100_001) },
        { question_id: 'q4', response: '' },
      ];
      const { items: got } = await pool.prepare('/score', new TextEncoder().encode(JSON.stringify({ items })), limits);
      expect(got[0]!.steps).toEqual(prepareLabel(stepsOf(response(7)), setup));
      expect(got[1]!.steps).toBe(5);
      expect(got[2]).toMatchObject({ steps: null, text: null });
      expect(got[3]!.steps).toEqual([]);
    });
  });
});
