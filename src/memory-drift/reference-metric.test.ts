import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { registerSimProfile } from '../models/sim-registry.js';
import { InputError } from '../core/errors.js';
import { referenceDtw } from '../metrics/fastdtw.js';
import { fakeEmbedding, startFakeEmbeddings } from '../models/testing/fake-embeddings.js';
import type { FakeServer } from '../models/testing/index.js';
import { openStore } from '../store/run-store.js';
import type { MemoryObservation } from './analysis.js';
import { memoryConfigSchema } from './config.js';
import { memoryReport } from './observations.js';
import { loadBuiltinOntology, ontologySymbols, UNMAPPED } from './ontology.js';
import {
  embeddingText,
  loadSymbolEmbeddings,
  memoryReferenceMetric,
  readEmbeddingsFile,
  referenceMetricReport,
  renderReferenceMetricMarkdown,
} from './reference-metric.js';
import { loadMemoryConfig, runMemory } from './run.js';
import { createMemorySimProfile } from './sim.js';

const dir = mkdtempSync(join(tmpdir(), 'echolens-reference-metric-'));

const TABLE = new Map<string, number[]>([
  ['Social/Fairness', [1, 0, 0]],
  ['Social/Respect', [0.8, 0.6, 0]],
  ['Task/Efficiency', [0, 0, 1]],
  ['unmapped', [0, 1, 0]],
]);

function observation(partial: Partial<MemoryObservation>): MemoryObservation {
  return {
    target: 'm',
    question: 'q1',
    domain: '',
    condition: 'gender',
    tier: 'persona',
    stimulus: 's',
    sample: 0,
    status: 'scored',
    baselineSymbols: ['Social/Fairness', 'Task/Efficiency'],
    symbols: ['Social/Fairness', 'Task/Efficiency'],
    dtw: 0,
    sri: 0,
    baselines: 1,
    ...partial,
  };
}

describe('referenceMetricReport (pure)', () => {
  const settings = { radius: 1, flavor: 'compiled', embedText: 'subcategory' } as const;
  const embeddings = { source: 'file:test.json', vectors: TABLE };

  it('scores each scored observation against its reference with referenceDtw and summarizes per target and condition', () => {
    const a = ['Social/Fairness', 'Task/Efficiency', 'Social/Respect'];
    const b = ['Social/Respect', 'unmapped', 'Task/Efficiency', 'Task/Efficiency'];
    const observations = [
      observation({ condition: 'no_perturbation', tier: 'none' }),
      observation({ baselineSymbols: a, symbols: b }),
      observation({ question: 'q2', baselineSymbols: b, symbols: a }),
      observation({ status: 'invalid', symbols: null }),
      observation({ status: 'no_reference', baselineSymbols: null }),
      observation({ target: 'k', condition: 'filler', tier: 'noise', symbols: ['unmapped'] }),
    ];
    const report = referenceMetricReport(observations, embeddings, settings);
    expect(report.metric).toBe('dtw-reference');
    expect(report.scored).toBe(4);
    const embed = (s: string) => TABLE.get(s) as number[];
    const d1 = referenceDtw(a, b, embed).normalized;
    const d2 = referenceDtw(b, a, embed).normalized;
    const m = report.targets.find((t) => t.target === 'm');
    expect(m?.conditions.map((c) => c.condition)).toEqual(['no_perturbation', 'gender']);
    const gender = m?.conditions[1];
    expect(gender?.n).toBe(2);
    expect(gender?.drift).toBeCloseTo((d1 + d2) / 2, 15);
    expect(gender?.dtwScore).toBeCloseTo(1 - (d1 + d2) / 2, 15);
    expect(gender?.driftSd).toBeCloseTo(Math.abs(d1 - d2) / Math.SQRT2, 15);
    // Identical trajectories have zero drift, score 1.
    expect(m?.conditions[0]).toEqual({ condition: 'no_perturbation', tier: 'none', n: 1, drift: 0, dtwScore: 1, driftSd: null });
    expect(m?.n).toBe(3);
    expect(m?.drift).toBeCloseTo((d1 + d2) / 3, 15);
    // Targets sorted; k's one observation: [Fairness, Efficiency] vs [unmapped] → cosine 1 at both cells, path length 2.
    expect(report.targets.map((t) => t.target)).toEqual(['k', 'm']);
    expect(report.targets[0]?.drift).toBe(1);
    expect(report.embeddings).toMatchObject({ source: 'file:test.json', dimension: 3, symbols: 4, embedText: 'subcategory' });
    expect(report.embeddings.sha256).toMatch(/^[0-9a-f]{64}$/);
    const md = renderReferenceMetricMarkdown(report);
    expect(md).toMatch(/## Comparison metric: dtw-reference/);
    expect(md).toMatch(/\| m \| gender \| persona \| 2 \|/);
    expect(md).toMatch(/\| k \| \*\*all\*\* \| +\| 1 \| 1\.0000 \| +\| 0\.0000 \|/);
  });

  it('refuses a symbol without an embedding', () => {
    expect(() => referenceMetricReport([observation({ symbols: ['Social/Other'] })], embeddings, settings)).toThrow(/no embedding for symbol "Social\/Other"/);
  });
});

describe('embeddings sources', () => {
  let server: FakeServer;
  beforeAll(async () => {
    server = await startFakeEmbeddings();
  });
  afterAll(() => server.close());

  it('reads a JSON file and names file, line and key of a bad entry', () => {
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify(Object.fromEntries(TABLE), null, 1));
    expect(readEmbeddingsFile(good).get('Social/Respect')).toEqual([0.8, 0.6, 0]);
    const cases: Array<[string, RegExp]> = [
      ['{"a": [1, 0],\n "b": [1]}', /bad\.json:2: b: has dimension 1, expected 2/],
      ['{"a": [1, 0],\n "b": "x"}', /bad\.json:2: b: must be a non-empty array of finite numbers/],
      ['{"a": [0, 0]}', /bad\.json:1: a: is a zero vector/],
      ['[1, 2]', /bad\.json: expected an object/],
      ['{"a": ', /bad\.json: not valid JSON/],
    ];
    const bad = join(dir, 'bad.json');
    for (const [text, message] of cases) {
      writeFileSync(bad, text);
      expect(() => readEmbeddingsFile(bad)).toThrow(message);
      expect(() => readEmbeddingsFile(bad)).toThrow(InputError);
    }
    expect(() => readEmbeddingsFile(join(dir, 'missing.json'))).toThrow(/cannot read the embeddings file/);
  });

  it('loads the symbols a run needs from a file, and names the missing ones', async () => {
    const file = join(dir, 'table.json');
    writeFileSync(file, JSON.stringify(Object.fromEntries(TABLE)));
    const table = await loadSymbolEmbeddings({ embeddings: file, embedText: 'subcategory' }, ['unmapped', 'Social/Fairness', 'unmapped']);
    expect(table.source).toBe(`file:${file}`);
    expect([...table.vectors.keys()]).toEqual(['Social/Fairness', 'unmapped']);
    await expect(loadSymbolEmbeddings({ embeddings: file, embedText: 'subcategory' }, ['Social/Fairness', 'Self/Growth'])).rejects.toThrow(
      /table\.json: no embedding for 1 symbol\(s\) of the run: "Self\/Growth"/,
    );
  });

  it('embeds through a model reference: the subcategory text by default, each text once per process', async () => {
    const ref = `openai-compatible:all-minilm@${server.baseURL}`;
    const before = server.requests.length;
    const table = await loadSymbolEmbeddings({ embeddings: ref, embedText: 'subcategory' }, ['Social/Fairness', 'Work/Fairness', 'unmapped'], {
      env: {},
      maxRetries: 0,
    });
    expect(table.source).toBe(`model:${ref}`);
    // Same subcategory under two categories: one text, one vector (as the authors' symbol strings).
    expect(table.vectors.get('Social/Fairness')).toEqual(fakeEmbedding('Fairness'));
    expect(table.vectors.get('Work/Fairness')).toEqual(fakeEmbedding('Fairness'));
    expect(table.vectors.get('unmapped')).toEqual(fakeEmbedding('unmapped'));
    expect(server.requests.length).toBe(before + 1);
    expect(server.requests[before]?.body?.input).toEqual(['Fairness', 'unmapped']);
    await loadSymbolEmbeddings({ embeddings: ref, embedText: 'subcategory' }, ['Social/Fairness', 'unmapped'], { env: {}, maxRetries: 0 });
    expect(server.requests.length).toBe(before + 1);
    const whole = await loadSymbolEmbeddings({ embeddings: ref, embedText: 'symbol' }, ['Social/Fairness'], { env: {}, maxRetries: 0 });
    expect(whole.vectors.get('Social/Fairness')).toEqual(fakeEmbedding('Social/Fairness'));
    expect(embeddingText('Social/Fairness', 'subcategory')).toBe('Fairness');
    expect(embeddingText(UNMAPPED, 'subcategory')).toBe('unmapped');
  });
});

describe('config key referenceMetric', () => {
  const base = { targets: ['sim:memory'], labeler: 'sim:labeler' };

  it('is absent unless given (the validated config, hence the run id, is unchanged)', () => {
    expect('referenceMetric' in memoryConfigSchema.parse(base)).toBe(false);
  });

  it('takes a .json file or an embeddings model reference, with defaults radius 1, compiled, subcategory', () => {
    expect(memoryConfigSchema.parse({ ...base, referenceMetric: { embeddings: 'emb.json' } }).referenceMetric).toEqual({
      embeddings: 'emb.json',
      radius: 1,
      flavor: 'compiled',
      embedText: 'subcategory',
    });
    expect(memoryConfigSchema.parse({ ...base, referenceMetric: { embeddings: 'ollama:all-minilm', flavor: 'pure-python' } }).referenceMetric?.flavor).toBe(
      'pure-python',
    );
    const bad = memoryConfigSchema.safeParse({ ...base, referenceMetric: { embeddings: 'sim:echo' } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['referenceMetric', 'embeddings']);
    expect(memoryConfigSchema.safeParse({ ...base, referenceMetric: { embeddings: 'x.json', radius: 0 } }).success).toBe(false);
  });

  it('resolves a relative embeddings file against the config folder', () => {
    const folder = join(dir, 'cfg');
    mkdirSync(folder, { recursive: true });
    const file = join(folder, 'memory.yaml');
    writeFileSync(file, 'targets: [sim:memory]\nlabeler: sim:labeler\nreferenceMetric:\n  embeddings: vectors/minilm.json\n');
    expect(loadMemoryConfig(file).referenceMetric?.embeddings).toBe(join(folder, 'vectors', 'minilm.json'));
  });
});

describe('memoryReferenceMetric on a stored run (SIMULATED models)', { timeout: 120_000 }, () => {
  beforeAll(() => registerBuiltinSimProfiles());

  const grid = {
    targets: ['sim:memory'],
    labeler: 'sim:labeler',
    questions: { limit: 4 },
    conditions: ['filler', 'gender', 'bereavement'],
    k: 1,
    analysis: { B: 200 },
  };
  const quiet = { progress: false, signal: new AbortController().signal } as const;

  it('is null without the key and leaves the main report as it was', async () => {
    const db = join(dir, 'plain.db');
    const result = await runMemory(memoryConfigSchema.parse(grid), db, quiet);
    const store = openStore(db, { readonly: true });
    try {
      expect(await memoryReferenceMetric(store, result.runId)).toBeNull();
      expect(await memoryReport(store, result.runId)).not.toHaveProperty('referenceMetric');
    } finally {
      await store.close();
    }
  });

  it('adding the key to a finished run makes a new run id whose cells all come from the store (nothing called again)', async () => {
    // SIMULATION: a planted-drift profile wrapped to count its calls.
    const inner = createMemorySimProfile({ name: 'memory-counted', samplingNoise: 0.1 });
    let calls = 0;
    registerSimProfile({
      ...inner,
      answer: (request, seed) => {
        calls++;
        return inner.answer(request, seed);
      },
    });
    const file = join(dir, 'counted-vectors.json');
    const symbols = [...ontologySymbols(loadBuiltinOntology()), UNMAPPED];
    writeFileSync(file, JSON.stringify(Object.fromEntries(symbols.map((s) => [s, fakeEmbedding(s)]))));
    const db = join(dir, 'counted.db');
    const plain = { ...grid, targets: ['sim:memory-counted'] };
    const first = await runMemory(memoryConfigSchema.parse(plain), db, quiet);
    const callsAfterFirst = calls;
    expect(callsAfterFirst).toBe(first.generationCells);
    const second = await runMemory(memoryConfigSchema.parse({ ...plain, referenceMetric: { embeddings: file } }), db, quiet);
    expect(second.runId).not.toBe(first.runId);
    expect(second.resumed).toBe(false);
    expect(calls).toBe(callsAfterFirst);
  });

  it('scores every scored observation with the configured file, recorded in the run manifest', async () => {
    const file = join(dir, 'ontology-vectors.json');
    const symbols = [...ontologySymbols(loadBuiltinOntology()), UNMAPPED];
    writeFileSync(file, JSON.stringify(Object.fromEntries(symbols.map((s) => [s, fakeEmbedding(s)]))));
    const db = join(dir, 'reference.db');
    const config = memoryConfigSchema.parse({ ...grid, referenceMetric: { embeddings: file } });
    const result = await runMemory(config, db, quiet);
    const store = openStore(db, { readonly: true });
    try {
      expect(((await store.requireRun(result.runId)).manifest.config as { referenceMetric?: unknown }).referenceMetric).toEqual({
        embeddings: file,
        radius: 1,
        flavor: 'compiled',
        embedText: 'subcategory',
      });
      const main = await memoryReport(store, result.runId);
      const reference = await memoryReferenceMetric(store, result.runId);
      expect(reference).not.toBeNull();
      expect(reference?.scored).toBe(main.counts.scored);
      expect(reference?.scored).toBe(4 * (1 + 3));
      const target = reference?.targets[0];
      expect(target?.conditions.map((c) => c.condition)).toEqual(['no_perturbation', 'filler', 'gender', 'bereavement']);
      for (const c of target?.conditions ?? []) {
        expect(c.n).toBe(4);
        expect(c.drift).toBeGreaterThanOrEqual(0);
        expect(c.drift).toBeLessThanOrEqual(2);
        expect((c.dtwScore as number) + (c.drift as number)).toBeCloseTo(1, 12);
      }
      // SIMULATION: sim:memory plants no drift under noise (sampling noise only) and the most under life events.
      const drift = (condition: string) => target?.conditions.find((c) => c.condition === condition)?.drift as number;
      expect(drift('gender')).toBeGreaterThan(drift('filler'));
      expect(drift('bereavement')).toBeGreaterThan(drift('filler'));
    } finally {
      await store.close();
    }
  });
});
