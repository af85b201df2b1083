import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../core/canonical-json.js';
import { loadDriftLensMaterials, referenceOntologyText } from '../materials/driftlens.js';
import { hashBytes } from '../materials/files.js';
import { fillTemplate } from '../materials/python-literal.js';
import { DRIFTLENS_FIXTURE } from '../materials/testing/fixtures.js';
import { suiteFakeOpenAI } from '../experiment/testing/suite-server.js';
import { openStore } from '../store/run-store.js';
import { type MemoryConfig, memoryConfigSchema, memoryLabelerInput } from './config.js';
import { buildPassageLabelerMessages, parseLabelerOutput } from './labeler.js';
import { loadMemoryMaterials } from './materials.js';
import { collectMemorySamples, memoryReport } from './observations.js';
import { loadBuiltinOntology } from './ontology.js';
import { parseReferenceLabelerOutput } from './reference-labeler.js';
import { labelingItem, planMemoryGeneration, resolveMemoryStimuli, runMemory } from './run.js';

const quiet = { progress: false } as const;
const GENERATION_REPLY = '<think>\n<step_1>weigh it</step_1>\n<step_2>decide</step_2>\n</think>\n<answer>yes</answer>';
const LABELER_REPLY =
  'Here you go.\n<answer>[\n{"step_index": 1, "category": "Fixture root one", "symbol": "Leaf one a"},\n{"step_index": 2, "category": "Fixture root two", "symbol": "Leaf two a"}\n]</answer>';

function config(partial: Record<string, unknown>): MemoryConfig {
  return memoryConfigSchema.parse({ targets: ['sim:memory'], labeler: 'sim:labeler', questions: { limit: 2 }, k: 1, ...partial });
}

describe('memory materials and procedure', () => {
  const fixture = loadDriftLensMaterials(DRIFTLENS_FIXTURE);

  it('default config: the same cells as naming the echolens materials and procedure explicitly', async () => {
    const implicit = config({});
    const explicit = config({ materials: 'echolens', procedure: 'echolens', labelerInput: 'steps' });
    const a = planMemoryGeneration(implicit, await resolveMemoryStimuli(implicit));
    const b = planMemoryGeneration(explicit, await resolveMemoryStimuli(explicit));
    expect(canonicalJson(b.map((c) => c.request))).toBe(canonicalJson(a.map((c) => c.request)));
    const ontology = loadBuiltinOntology();
    const steps = ['one', 'two'];
    const item = labelingItem(steps, implicit, { labeler: 'sim:labeler', ontology, labels: {} });
    expect(item.spec.request.messages[1]?.content).toContain('<step number="2">');
    expect(memoryLabelerInput(implicit)).toBe('steps');
    expect(memoryLabelerInput(config({ procedure: 'reference' }))).toBe('whole-response');
    expect(memoryLabelerInput(config({ procedure: 'reference', labelerInput: 'steps' }))).toBe('steps');
  });

  it('a clone brings its own ontology and persona strings: naming others is a config error', async () => {
    await expect(resolveMemoryStimuli(config({ materials: DRIFTLENS_FIXTURE, ontology: 'alt' }))).rejects.toThrow(/bring their own ontology/u);
    await expect(resolveMemoryStimuli(config({ materials: DRIFTLENS_FIXTURE, injection: 'system' }))).rejects.toThrow(/injection: prepend/u);
  });

  it('maps the persona strings to categories as the reference flattens them', () => {
    const materials = loadMemoryMaterials(DRIFTLENS_FIXTURE);
    const set = materials.reference?.perturbations;
    expect(set?.categories.map((c) => [c.id, c.tier, c.stimuli.map((s) => s.text)])).toEqual([
      ['no_perturbation', 'none', ['']],
      ['persona_alpha', 'persona', ['PERSONA PLACEHOLDER ALPHA 1. ']],
      ['persona_beta', 'persona', ['PERSONA PLACEHOLDER SHARED. ', 'PERSONA PLACEHOLDER BETA 2, with a comma. ']],
    ]);
  });

  it('reads reference-format labeler answers into Category/Subcategory symbols', () => {
    const ontology = loadMemoryMaterials(DRIFTLENS_FIXTURE).reference?.ontology;
    if (!ontology) throw new Error('fixture ontology missing');
    expect(parseReferenceLabelerOutput(LABELER_REPLY, { ontology, stepCount: null })).toEqual({
      ok: true,
      symbols: ['Fixture root one/Leaf one a', 'Fixture root two/Leaf two a'],
      unmappedCount: 0,
      coercedUnknown: [],
    });
    expect(parseReferenceLabelerOutput(LABELER_REPLY, { ontology, stepCount: 3 })).toMatchObject({ ok: false, reason: 'wrong_count' });
    const bare = '[{"step_index": 1, "symbol": "unmapped"}, {"step_index": 2, "symbol": "leaf ONE b"}]';
    expect(parseReferenceLabelerOutput(bare, { ontology, stepCount: 2 })).toMatchObject({ ok: true, symbols: ['unmapped', 'Fixture root one/Leaf one b'] });
    const unknown = '<answer>[{"symbol": "Made up"}]</answer>';
    expect(parseReferenceLabelerOutput(unknown, { ontology, stepCount: null })).toMatchObject({ ok: false, reason: 'unknown_label' });
    expect(parseReferenceLabelerOutput(unknown, { ontology, stepCount: null, unknownLabel: 'unmapped' })).toMatchObject({
      ok: true,
      coercedUnknown: ['Made up'],
    });
    expect(parseReferenceLabelerOutput('no array', { ontology, stepCount: null })).toMatchObject({ ok: false, reason: 'no_json' });
  });

  it('the echolens labeler can read a whole response too (any number of steps)', () => {
    const ontology = loadBuiltinOntology();
    const messages = buildPassageLabelerMessages('first this, then that', ontology);
    expect(messages[1]?.content).toContain('<response>\nfirst this, then that\n</response>');
    const symbol = `${ontology.categories[0]?.name}/${ontology.categories[0]?.subcategories[0]?.name}`;
    const answer = JSON.stringify({ labels: [1, 2, 3].map((step) => ({ step, label: symbol })) });
    expect(parseLabelerOutput(answer, { stepCount: null, ontology })).toMatchObject({ ok: true, symbols: [symbol, symbol, symbol] });
    expect(parseLabelerOutput('{"labels": []}', { stepCount: null, ontology })).toMatchObject({ ok: false, reason: 'wrong_count' });
  });

  describe('a run with materials: <fixture clone> on the wire', () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-memory-materials-'));
    const fake = suiteFakeOpenAI({
      respond: (request) => {
        const messages = (request.body?.messages ?? []) as Array<{ role: string; content: string }>;
        return { text: messages[0]?.content.startsWith('# MAPPING PROMPT PLACEHOLDER') ? LABELER_REPLY : GENERATION_REPLY };
      },
    });

    it('sends exactly the fixture texts and labels the whole response in the reference format', async () => {
      const cfg = config({
        targets: [`openai-compatible:fake-target@${fake.server.baseURL}`],
        labeler: `openai-compatible:fake-labeler@${fake.server.baseURL}`,
        materials: DRIFTLENS_FIXTURE,
        procedure: 'reference',
        stimuliPerCategory: 'all',
        // The clone has persona strings only; one echolens noise category makes the d_rel floor.
        conditions: ['persona_alpha', 'persona_beta', 'whitespace'],
        analysis: { B: 200 },
      });
      const stimuli = await resolveMemoryStimuli(cfg);
      const questions = stimuli.questions.questions.map((q) => q.text.trim());
      const db = join(dir, 'wire.db');
      const result = await runMemory(cfg, db, { ...quiet, signal: new AbortController().signal }, stimuli);
      expect(result.interrupted).toBe(false);
      const whitespace = stimuli.perturbations.categories.find((c) => c.id === 'whitespace')?.stimuli.map((s) => s.text) ?? [];
      // 2 questions × (no memory: reference + 1 more sample; 3 persona strings × 1; the whitespace strings × 1).
      expect(result.generationCells).toBe(2 * (2 + 3 + whitespace.length));
      expect(result.invalidLabelings).toBe(0);

      const bodies = fake.server.requests.map((r) => (r.body?.messages ?? []) as Array<{ role: string; content: string }>);
      const labelings = bodies.filter((m) => m[0]?.content.startsWith('# MAPPING PROMPT PLACEHOLDER'));
      const generations = bodies.filter((m) => !m[0]?.content.startsWith('# MAPPING PROMPT PLACEHOLDER'));
      const personas = ['', 'PERSONA PLACEHOLDER ALPHA 1. ', 'PERSONA PLACEHOLDER SHARED. ', 'PERSONA PLACEHOLDER BETA 2, with a comma. ', ...whitespace];
      const expected = new Set(questions.flatMap((q) => personas.map((p) => fillTemplate(fixture.instruction, { question: `${p}${q}` }))));
      for (const messages of generations) {
        expect(messages).toHaveLength(2);
        expect(messages[0]).toEqual({ role: 'system', content: 'GENERATION SYSTEM PROMPT PLACEHOLDER. ' });
        expect(expected.has(messages[1]?.content ?? '')).toBe(true);
      }
      expect(new Set(generations.map((m) => m[1]?.content))).toEqual(expected);
      // The labeler reads the whole response inside the authors' prompt, with their ontology rendering.
      expect(labelings.length).toBeGreaterThan(0);
      const prompt = fillTemplate(fixture.mappingTemplate, { ontology: referenceOntologyText(fixture.ontologyJson), reasoning: GENERATION_REPLY });
      for (const messages of labelings) expect(messages).toEqual([{ role: 'user', content: prompt }]);

      const store = openStore(db, { readonly: true });
      const manifest = (await store.requireRun(result.runId)).manifest;
      const samples = await collectMemorySamples(store, result.runId);
      const report = await memoryReport(store, result.runId, { B: 200 });
      await store.close();
      expect(report.targets).toHaveLength(1);
      const options = manifest.options as { materials: { source: string; files: Array<{ path: string; sha256: string }> }; labelerInput: string };
      expect(options.labelerInput).toBe('whole-response');
      expect(options.materials.source).toBe('reference');
      expect(options.materials.files.map((f) => f.path)).toEqual([
        'data/ontology.json',
        'src/symbolic_drift/interventions.py',
        'src/symbolic_drift/prompts.py',
      ]);
      for (const file of options.materials.files) expect(file.sha256).toBe(hashBytes(readFileSync(join(DRIFTLENS_FIXTURE, file.path))));
      expect(samples.records.every((r) => r.outcome === 'labelled')).toBe(true);
      expect(samples.records[0]?.sample.symbols).toEqual(['Fixture root one/Leaf one a', 'Fixture root two/Leaf two a']);
    });
  });
});
