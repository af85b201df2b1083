import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../core/version.js';
import { runCliInProcess } from '../testing/run-cli.js';
import { loadBuiltinOntology, ontologySymbols, UNMAPPED } from '../../memory-drift/ontology.js';
import { fakeEmbedding, startFakeEmbeddings } from '../../models/testing/fake-embeddings.js';
import type { FakeServer } from '../../models/testing/index.js';

/** Runs the CLI in this process (runCli); the fake servers in this process keep answering. */
function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runCliInProcess(args);
}

const dir = mkdtempSync(join(tmpdir(), 'echolens-memory-reference-cli-'));
const example = join(packageRoot(), 'examples', 'memory-sim.yaml');
const small = ['--questions-limit', '3', '--set', 'k=1', '--set', 'conditions=[filler, gender, bereavement]', '--set', 'analysis.B=200'];

describe('echolens memory report with referenceMetric (SIMULATED models)', { timeout: 600_000 }, () => {
  let server: FakeServer;
  beforeAll(async () => {
    server = await startFakeEmbeddings();
  });
  afterAll(() => server.close());

  it('adds dtw-reference to the JSON and Markdown reports from an embeddings file', async () => {
    const vectors = join(dir, 'vectors.json');
    const symbols = [...ontologySymbols(loadBuiltinOntology()), UNMAPPED];
    writeFileSync(vectors, JSON.stringify(Object.fromEntries(symbols.map((s) => [s, fakeEmbedding(s)]))));
    const db = join(dir, 'file.db');
    const runReport = join(dir, 'run-report.md');
    const run = await cli([
      'memory',
      'run',
      example,
      '--db',
      db,
      ...small,
      '--set',
      `referenceMetric.embeddings=${JSON.stringify(vectors)}`,
      '--report',
      runReport,
    ]);
    expect(run.stderr).not.toMatch(/internal error/);
    expect(run.code).toBe(0);
    expect(readFileSync(runReport, 'utf8')).toMatch(/## Comparison metric: dtw-reference/);

    const out = join(dir, 'report.json');
    const json = await cli(['memory', 'report', db, '--format', 'json', '-o', out]);
    expect(json.code).toBe(0);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    expect(report.referenceMetric.metric).toBe('dtw-reference');
    expect(report.referenceMetric.embeddings.source).toBe(`file:${vectors}`);
    expect(report.referenceMetric.radius).toBe(1);
    expect(report.referenceMetric.flavor).toBe('compiled');
    expect(report.referenceMetric.scored).toBe(report.counts.scored);
    // The main metrics are untouched: the comparison metric is not one of them.
    expect(Object.keys(report.targets[0].metrics).sort()).toEqual(['dtw', 'sri']);

    const md = await cli(['memory', 'report', db]);
    expect(md.code).toBe(0);
    expect(md.stdout).toMatch(/## Comparison metric: dtw-reference/);
    expect(md.stdout).toMatch(/\| sim:memory \| bereavement \| life_event \| 3 \|/);
  });

  it('embeds through a model reference, and reports nothing extra without the key', async () => {
    const db = join(dir, 'model.db');
    const ref = `openai-compatible:all-minilm@${server.baseURL}`;
    const run = await cli(['memory', 'run', example, '--db', db, ...small, '--set', `referenceMetric.embeddings=${JSON.stringify(ref)}`]);
    expect(run.code).toBe(0);
    const before = server.requests.length;
    const json = await cli(['memory', 'report', db, '--format', 'json']);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report.referenceMetric.embeddings.source).toBe(`model:${ref}`);
    expect(report.referenceMetric.embeddings.dimension).toBe(8);
    expect(server.requests.length).toBe(before + 1);
    expect(server.requests[before]?.path).toBe('/v1/embeddings');

    const plainDb = join(dir, 'plain.db');
    expect((await cli(['memory', 'run', example, '--db', plainDb, ...small])).code).toBe(0);
    const plain = await cli(['memory', 'report', plainDb, '--format', 'json']);
    expect(plain.code).toBe(0);
    expect(JSON.parse(plain.stdout)).not.toHaveProperty('referenceMetric');
    expect((await cli(['memory', 'report', plainDb])).stdout).not.toMatch(/dtw-reference/);
  });

  it('names the config key of a bad embeddings source, without a stack trace', async () => {
    const bad = await cli(['memory', 'run', example, '--db', join(dir, 'bad.db'), '--dry-run', ...small, '--set', 'referenceMetric.embeddings=sim:echo']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/referenceMetric\.embeddings/);
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });
});
