import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { createAdapter } from '../models/create-adapter.js';
import { type FakeServer, startFakeOpenAI } from '../models/testing/index.js';
import type { ChatMessage } from '../models/types.js';
import { openStore } from '../store/run-store.js';
import { chunkChainKey, clipStep, labelingChunks, reassembleChunks } from './chunks.js';
import { memoryConfigSchema } from './config.js';
import { collectMemorySamples } from './observations.js';
import { loadBuiltinOntology, ontologySymbols, UNMAPPED } from './ontology.js';
import { labelingItems, loadMemoryConfig, runMemory } from './run.js';
import { readLabelerPrompt, SIM_STEP_CUES, SIM_SYMBOLS, simLabelForStep } from './sim.js';
import { writeWireMemoryConfig } from './testing/wire.js';

describe('labeling chunks (pure)', () => {
  it('covers every step once, in order, within the step and character budget', () => {
    const steps = Array.from({ length: 150 }, (_, i) => 'x'.repeat(10 + (i % 7) * 30));
    for (const budget of [
      { maxSteps: 64, maxChars: 48_000 },
      { maxSteps: 10, maxChars: 1_000 },
      { maxSteps: 1, maxChars: 5 },
      { maxSteps: 200, maxChars: 100 },
    ]) {
      const chunks = labelingChunks(steps, budget);
      expect(chunks[0]?.from).toBe(0);
      expect(chunks.at(-1)?.to).toBe(steps.length);
      chunks.forEach((chunk, i) => {
        expect(chunk).toMatchObject({ index: i + 1, count: chunks.length });
        if (i > 0) expect(chunk.from).toBe(chunks[i - 1]?.to);
        expect(chunk.to - chunk.from).toBeGreaterThanOrEqual(1);
        expect(chunk.to - chunk.from).toBeLessThanOrEqual(budget.maxSteps);
        const chars = steps.slice(chunk.from, chunk.to).reduce((sum, step) => sum + Math.min(step.length, budget.maxChars), 0);
        // Over the character budget only when one step alone fills it.
        if (chunk.to - chunk.from > 1) expect(chars).toBeLessThanOrEqual(budget.maxChars);
      });
    }
    expect(labelingChunks(steps.slice(0, 64), { maxSteps: 64, maxChars: 48_000 })).toHaveLength(1);
    expect(labelingChunks([], { maxSteps: 64, maxChars: 48_000 })).toEqual([]);
    expect(clipStep('abcdef', 3)).toBe('abc …[clipped]');
    expect(chunkChainKey('k', { index: 1, count: 1 })).toBe('k');
    expect(chunkChainKey('k', { index: 2, count: 3 })).toBe('k#2/3');
  });

  it('joins labelled chunks in order; one invalid chunk makes the labeling invalid with its position', () => {
    const ok = (symbols: string[], attempts = 1) => ({ symbols, outcome: 'labelled' as const, attempts, coercedUnknown: [] });
    expect(reassembleChunks([ok(['a', 'b']), ok(['c'], 2), ok(['d'])])).toMatchObject({ outcome: 'labelled', symbols: ['a', 'b', 'c', 'd'], attempts: 2 });
    const bad = { symbols: null, outcome: 'invalid' as const, attempts: 3, coercedUnknown: [], failure: 'no_json' };
    expect(reassembleChunks([ok(['a']), bad, ok(['c'])])).toMatchObject({ outcome: 'invalid', failure: 'chunk 2/3: no_json' });
    const pending = { symbols: null, outcome: 'unlabelled' as const, attempts: null, coercedUnknown: [] };
    expect(reassembleChunks([ok(['a']), pending])).toMatchObject({ outcome: 'unlabelled' });
  });

  it('plans one cell (the same as before chunks existed) when the steps fit, one per chunk otherwise', () => {
    const cfg = memoryConfigSchema.parse({ targets: ['sim:memory'], labeler: 'sim:labeler', steps: { maxSteps: 500, chunkSteps: 40 } });
    const ontology = loadBuiltinOntology();
    const steps = Array.from({ length: 100 }, (_, i) => `Step ${i + 1}.`);
    const one = labelingItems(steps.slice(0, 40), cfg, { labeler: 'sim:labeler', ontology, labels: {} });
    expect(one).toHaveLength(1);
    expect(one[0]?.chunk).toBeNull();
    expect(one[0]?.item.spec.labels.chunk).toBeUndefined();
    const many = labelingItems(steps, cfg, { labeler: 'sim:labeler', ontology, labels: {} });
    expect(many.map((m) => m.item.spec.labels.chunk_steps)).toEqual(['1-40', '41-80', '81-100']);
    expect(readLabelerPrompt(many[2]!.item.spec.request.messages)?.steps).toEqual(steps.slice(80));
  });
});

describe('a 5,000-step answer through a local OpenAI-compatible server', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'echolens-chunks-'));
  const allowed = [...ontologySymbols(loadBuiltinOntology()), UNMAPPED];
  // Step i argues the value of symbol i mod |symbols| (the sim labeler reads its cue word).
  const steps = Array.from({ length: 5000 }, (_, i) => {
    const symbol = SIM_SYMBOLS[i % SIM_SYMBOLS.length]!;
    return `${SIM_STEP_CUES[symbol]!.sentences[i % 3]}${i === 1999 ? ' POISON' : ''} (${i + 1})`;
  });
  const answer = `${steps.map((step, i) => `<step_${i + 1}>${step}</step_${i + 1}>`).join('\n')}\n<answer>Yes.</answer>`;
  let server: FakeServer;
  let poison = false;
  beforeAll(async () => {
    registerBuiltinSimProfiles();
    const labeler = createAdapter('sim:labeler');
    server = await startFakeOpenAI({
      respond: async (request) => {
        const messages = (request.body?.messages ?? []) as ChatMessage[];
        if (readLabelerPrompt(messages) === null) return { text: answer };
        if (poison && JSON.stringify(messages).includes('POISON')) return { text: 'I cannot label this.' };
        return { text: (await labeler.generate({ model: 'sim:labeler', messages, params: {}, sample: 0 })).text };
      },
    });
  });
  afterAll(() => server.close());

  const runWith = async (name: string) => {
    const file = writeWireMemoryConfig(
      dir,
      name,
      server.baseURL,
      ['questions: { limit: 1 }', 'conditions: [filler]', 'steps: { maxSteps: 5000 }', 'labelerReasks: 1', 'analysis: { B: 100 }'],
      { target: 'long', labeler: 'labeler' },
    );
    const db = join(dir, `${name}.db`);
    const result = await runMemory(loadMemoryConfig(file), db, { progress: false, signal: new AbortController().signal });
    const store = openStore(db, { readonly: true });
    try {
      return { result, collection: await collectMemorySamples(store, result.runId) };
    } finally {
      await store.close();
    }
  };

  it('labels it in chunks of at most 64 steps (no prompt near 300 KB) and reassembles the symbol sequence', async () => {
    const { result, collection } = await runWith('long');
    expect(result.chunkedLabelings).toBe(result.labelerItems);
    expect(result.invalidLabelings).toBe(0);
    const labelerBodies = server.requests.filter((r) => readLabelerPrompt((r.body?.messages ?? []) as ChatMessage[]) !== null);
    const largest = Math.max(...labelerBodies.map((r) => JSON.stringify(r.body).length));
    // The steps alone are ~300 KB; one chunk's prompt is the ontology plus 64 steps.
    expect(steps.join('\n').length).toBeGreaterThan(250_000);
    expect(largest).toBeLessThan(40_000);
    const expected = steps.map((step) => simLabelForStep(step, allowed));
    expect(new Set(expected).size).toBeGreaterThan(5);
    for (const record of collection.records) {
      expect(record.outcome).toBe('labelled');
      expect(record.sample.symbols).toEqual(expected);
    }
    const chunkCells = collection.records.length > 0 ? Math.ceil(5000 / 64) : 0;
    expect(labelerBodies.length).toBe(chunkCells);
  });

  it('marks the whole labeling invalid, naming the chunk, when one chunk never parses', async () => {
    poison = true;
    const { result, collection } = await runWith('poisoned');
    expect(result.invalidLabelings).toBe(result.labelerItems);
    const failures = Object.keys(collection.summary.labelerFailures);
    // Step 2,000 sits in chunk 32 (steps 1,985–2,048) of 79.
    expect(failures).toEqual(['chunk 32/79: no_json']);
    expect(collection.records.every((r) => r.outcome === 'invalid')).toBe(true);
  });
});
