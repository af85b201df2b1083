import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { runCliInProcess } from '../cli/testing/run-cli.js';
import { ConfigError } from '../core/errors.js';
import { loadDriftLensMaterials, referenceOntologyText } from '../materials/driftlens.js';
import { fillTemplate } from '../materials/python-literal.js';
import { materialsMarkdown, runMaterials } from '../materials/report.js';
import { createAdapter } from '../models/create-adapter.js';
import { openStore } from '../store/run-store.js';
import { isRefusal } from '../core/maybe.js';
import { type MemoryConfig, memoryConfigSchema } from './config.js';
import { buildGenerationMessages } from './messages.js';
import { collectMemorySamples, memoryReport } from './observations.js';
import { loadBuiltinPerturbations } from './perturbations.js';
import { loadMemoryConfig, planMemoryGeneration, resolveMemoryStimuli, runMemory } from './run.js';
import { packageRoot } from '../core/version.js';
import { createMemorySimProfile } from './sim.js';

/**
 * A memory run whose materials are a clone of the DriftLens repository (a synthetic copy of its
 * layout: data/ontology.json, src/symbolic_drift/{interventions,prompts}.py) computes every
 * number of the report: the clone brings persona strings only, the noise floor and the life
 * events come from echolens's set (or the user's file), and each condition says where it came from.
 */

const LAYOUT = join(import.meta.dirname, '__fixtures__', 'driftlens-layout');
const PERSONA = ['persona_fixture_age', 'persona_fixture_job', 'persona_fixture_place'];
const quiet = { progress: false, signal: new AbortController().signal } as const;

function config(partial: Record<string, unknown> = {}): MemoryConfig {
  return memoryConfigSchema.parse({
    targets: ['sim:memory'],
    labeler: 'sim:labeler',
    materials: LAYOUT,
    procedure: 'reference',
    questions: { limit: 14 },
    stimuliPerCategory: 'all',
    k: 2,
    analysis: { B: 400 },
    ...partial,
  });
}

beforeAll(() => registerBuiltinSimProfiles());

describe('DriftLens materials: the missing tiers', () => {
  it('keeps the authors’ persona strings and adds echolens’s noise and life events, each labelled with its source', async () => {
    const stimuli = await resolveMemoryStimuli(config());
    const builtin = loadBuiltinPerturbations();
    const builtinOf = (tier: string) => builtin.categories.filter((c) => c.tier === tier).map((c) => c.id);
    expect(stimuli.conditions).toEqual(['no_perturbation', ...PERSONA, ...builtinOf('noise'), ...builtinOf('life_event')]);
    const sources = stimuli.conditionSources ?? [];
    expect(sources.map((s) => [s.condition, s.source])).toEqual(
      stimuli.conditions.map((id) => [id, PERSONA.includes(id) || id === 'no_perturbation' ? 'materials' : 'builtin']),
    );
    expect(sources.find((s) => s.condition === 'filler')).toEqual({
      condition: 'filler',
      tier: 'noise',
      source: 'builtin',
      file: 'data/memory-drift/perturbations.json',
    });
    expect(sources.find((s) => s.condition === PERSONA[0])?.file).toBe('src/symbolic_drift/interventions.py');
    // The borrowed strings are echolens's exactly; the persona strings are the clone's exactly.
    const filler = stimuli.perturbations.categories.find((c) => c.id === 'filler');
    expect(filler?.stimuli).toEqual(builtin.categories.find((c) => c.id === 'filler')?.stimuli);
    expect(stimuli.perturbations.categories.find((c) => c.id === 'persona_fixture_job')?.stimuli.map((s) => s.text)).toEqual([
      'FIXTURE PERSONA: I work as a nurse. ',
      'FIXTURE PERSONA: I am a carpenter. ',
    ]);
  });

  it('a borrowed string is joined to the question with one space inside the authors’ template; theirs keep their own', () => {
    const loaded = loadDriftLensMaterials(LAYOUT);
    const reference = { systemPrompt: loaded.systemPrompt, instruction: loaded.instruction };
    const borrowed = buildGenerationMessages('Should I move?', 'Um, okay, so.', 'prepend', { reference });
    expect(borrowed[1]?.content).toBe(fillTemplate(loaded.instruction, { question: 'Um, okay, so. Should I move?' }));
    const theirs = buildGenerationMessages('Should I move?', 'FIXTURE PERSONA: I am retired. ', 'prepend', { reference });
    expect(theirs[1]?.content).toBe(fillTemplate(loaded.instruction, { question: 'FIXTURE PERSONA: I am retired. Should I move?' }));
    expect(borrowed[0]).toEqual({ role: 'system', content: 'FIXTURE SYSTEM PROMPT: reply in the format below. ' });
  });

  it('a user perturbations file supplies the noise and life events instead (source: user file)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-materials-file-'));
    const file = join(dir, 'mine.json');
    writeFileSync(
      file,
      JSON.stringify({
        categories: [
          { id: 'no_perturbation', tier: 'none', stimuli: [{ id: 'none', text: '' }] },
          { id: 'my_noise', tier: 'noise', stimuli: [{ id: 'n1', text: 'Hm.' }] },
          { id: 'my_event', tier: 'life_event', stimuli: [{ id: 'e1', text: 'Last year I lost my job and my home.' }] },
        ],
      }),
    );
    const stimuli = await resolveMemoryStimuli(config({ perturbations: file }));
    expect(stimuli.conditionSources?.map((s) => [s.condition, s.source, s.file])).toEqual([
      ['no_perturbation', 'materials', 'src/symbolic_drift/interventions.py'],
      ...PERSONA.map((id) => [id, 'materials', 'src/symbolic_drift/interventions.py']),
      ['my_noise', 'file', file],
      ['my_event', 'file', file],
    ]);

    // No floor can exist: refused before any call (exit 2), saying why.
    const noNoise = join(dir, 'no-noise.json');
    writeFileSync(noNoise, JSON.stringify({ categories: [{ id: 'my_event', tier: 'life_event', stimuli: [{ id: 'e1', text: 'My father died.' }] }] }));
    const err = await resolveMemoryStimuli(config({ perturbations: noNoise })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toMatch(/needs a pragmatic-noise floor.*no noise category either/u);
    expect((err as ConfigError).field).toBe('perturbations');

    const persona = join(dir, 'persona.json');
    writeFileSync(persona, JSON.stringify({ categories: [{ id: 'mine', tier: 'persona', stimuli: [{ id: 'p1', text: 'I am tall.' }] }] }));
    await expect(resolveMemoryStimuli(config({ perturbations: persona }))).rejects.toThrow(/may add only noise and life_event categories.*\(mine\)/u);
  });

  it('the offline demo config (examples/memory-materials-sim.yaml) points at this layout and plans every tier', async () => {
    const cfg = loadMemoryConfig(join(packageRoot(), 'examples', 'memory-materials-sim.yaml'));
    expect(cfg.materials).toBe(LAYOUT);
    expect(cfg.targets).toEqual(['sim:memory-seeded']);
    const stimuli = await resolveMemoryStimuli(cfg);
    expect(stimuli.questions.questions).toHaveLength(30);
    const tiers = new Set(stimuli.conditionSources?.map((s) => `${s.tier}:${s.source}`));
    expect(tiers).toEqual(new Set(['none:materials', 'persona:materials', 'noise:builtin', 'life_event:builtin']));
  });

  it('a conditions list without any noise category is refused (exit 2) naming the categories to add', async () => {
    const err = await resolveMemoryStimuli(config({ conditions: [PERSONA[0], 'bereavement'] })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).field).toBe('conditions');
    expect((err as ConfigError).message).toMatch(/add at least one of filler, whitespace, punctuation to conditions/u);
    // On the command line: exit 2, one line saying why, nothing recorded.
    const dir = mkdtempSync(join(tmpdir(), 'echolens-materials-cli-'));
    const file = join(dir, 'memory.yaml');
    writeFileSync(file, ['targets: [sim:memory]', 'labeler: sim:labeler', `materials: ${JSON.stringify(LAYOUT)}`, `conditions: [${PERSONA[0]}]`].join('\n'));
    const cli = await runCliInProcess(['memory', 'run', file, '--db', join(dir, 'run.db')]);
    expect(cli.code).toBe(2);
    expect(cli.stderr).toMatch(/conditions: d_rel = \(μ_treat − μ_noise\)\/σ_noise needs a pragmatic-noise floor/u);
    expect(cli.stderr).not.toMatch(/\n\s+at /u);
    expect(existsSync(join(dir, 'run.db'))).toBe(false);
    // Noise only, or noise with persona, plans.
    await expect(resolveMemoryStimuli(config({ conditions: ['filler', PERSONA[0]] }))).resolves.toMatchObject({
      conditions: ['no_perturbation', PERSONA[0], 'filler'],
    });
  });

  it('sim:memory reads memory and question out of the authors’ completeness prompt; sim:labeler answers the mapping prompt', async () => {
    const stimuli = await resolveMemoryStimuli(config());
    const specs = planMemoryGeneration(config(), stimuli);
    const memory = createAdapter('sim:memory');
    const labeler = createAdapter('sim:labeler');
    const question = stimuli.questions.questions[0]?.text.trim() as string;
    const of = (condition: string) => specs.find((s) => s.labels.condition === condition && s.labels.question_id === stimuli.questions.questions[0]?.id);
    const request = (condition: string) => {
      const spec = of(condition);
      if (spec === undefined) throw new Error(`no cell of ${condition}`);
      // Same seed and sample for both: only the memory differs.
      return { ...spec.request, params: { ...spec.request.params, seed: 7 }, sample: 0 };
    };
    const none = await memory.generate(request('no_perturbation'));
    const noise = await memory.generate(request('whitespace'));
    // What the simulation read from each prompt: the same question, and the memory string with its category.
    const profile = createMemorySimProfile({ name: 'memory-materials-probe' });
    for (const condition of ['no_perturbation', 'whitespace', 'bereavement', ...PERSONA]) {
      const read = profile.trajectory(request(condition), 0);
      expect(read.question).toBe(question);
      expect(read.stimulus?.category ?? 'no_perturbation').toBe(condition);
    }
    // Pragmatic noise has no planted effect: the question was found behind the memory string.
    expect(noise.text).toBe(none.text);
    const loaded = loadDriftLensMaterials(LAYOUT);
    expect(of('no_perturbation')?.request.messages[1]?.content).toBe(fillTemplate(loaded.instruction, { question }));
    const prompt = fillTemplate(loaded.mappingTemplate, { ontology: referenceOntologyText(loaded.ontologyJson), reasoning: none.text ?? '' });
    const answer = await labeler.generate({ model: 'sim:labeler', messages: [{ role: 'user', content: prompt }], params: {}, sample: 0 });
    expect(answer.text).toMatch(/^<answer>\[/u);
    const items = JSON.parse(/<answer>([\s\S]*)<\/answer>/u.exec(answer.text ?? '')?.[1] ?? '[]') as Array<{ step_index: number; symbol: string }>;
    const steps = [...(none.text ?? '').matchAll(/<step_\d+>/gu)].length;
    expect(items.map((i) => i.step_index)).toEqual(Array.from({ length: steps }, (_, i) => i + 1));
    expect(items.every((i) => i.symbol !== 'unmapped')).toBe(true);
  });
});

describe('a memory run with the authors’ repository as materials (sim:memory, sim:labeler, offline)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'echolens-materials-complete-'));
  const db = join(dir, 'run.db');

  it('reports a d_rel p-value for every persona category, the noise floor it used, elevations and validity', async () => {
    // 30 questions: the smallest design whose tests the report calls (MIN_QUESTIONS).
    const result = await runMemory(config({ questions: { limit: 30 }, stimuliPerCategory: 1 }), db, quiet);
    expect(result.interrupted).toBe(false);
    expect(result.invalidLabelings).toBe(0);
    const store = openStore(db, { readonly: true });
    const report = await memoryReport(store, result.runId, { B: 400 });
    const samples = await collectMemorySamples(store, result.runId);
    const materials = await runMaterials(store, result.runId);
    await store.close();
    expect(samples.records.every((r) => r.outcome === 'labelled')).toBe(true);
    const target = report.targets[0];
    if (target === undefined) throw new Error('no target analysed');
    for (const metric of ['dtw', 'sri'] as const) {
      const analysis = target.metrics[metric];
      // The floor d_rel used: echolens's three noise categories.
      expect(isRefusal(analysis.noise) ? analysis.noise.error : [...analysis.noise.conditions].sort()).toEqual(['filler', 'punctuation', 'whitespace']);
      for (const persona of PERSONA) {
        const entry = analysis.dRel.find((d) => d.condition === persona);
        if (entry === undefined || isRefusal(entry.result)) throw new Error(`${metric} ${persona}: ${entry ? JSON.stringify(entry.result) : 'missing'}`);
        expect(entry.result.p).toBeGreaterThanOrEqual(0);
        expect(entry.result.p).toBeLessThanOrEqual(1);
        expect(Number.isFinite(entry.result.pAdjusted)).toBe(true);
      }
      // The planted persona effect (sim:memory flips persona steps, never noise) is found.
      expect(analysis.dRel.filter((d) => d.tier === 'persona').every((d) => !isRefusal(d.result) && d.result.dRel > 0)).toBe(true);
    }
    expect(target.validity.specificity.verdict).not.toBe('undetermined');
    expect(target.validity.sensitivity.verdict).not.toBe('undetermined');

    // Manifest, JSON and Markdown say where each condition came from.
    expect(materials.conditionSources?.find((s) => s.condition === 'filler')?.source).toBe('builtin');
    expect(materials.conditionSources?.find((s) => s.condition === PERSONA[1])?.source).toBe('materials');
    const markdown = materialsMarkdown(materials);
    expect(markdown).toContain("| persona_fixture_job | persona | authors' materials | `src/symbolic_drift/interventions.py` |");
    expect(markdown).toContain('| bereavement | life_event | echolens built-in | `data/memory-drift/perturbations.json` |');
    expect(markdown).toContain('Noise floor of d_rel (μ_noise, σ_noise): filler, whitespace, punctuation (echolens built-in).');
  });
});
