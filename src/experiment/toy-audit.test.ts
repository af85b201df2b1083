import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toyAudit } from '../__fixtures__/toy-audit/audit.js';
import { registerBuiltinAudits } from '../audits.js';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { runCliInProcess } from '../cli/testing/run-cli.js';
import '../models/sim-echo.js';
import { resultDocumentSchema } from '../report/document/schema.js';
import { registerAudit, unregisterAudit } from './registry.js';
import { useStoreViewer } from '../report/viewer/testing/store-viewer.js';

// A new audit is one folder (src/__fixtures__/toy-audit/) and one registry line (below): the
// report, the viewer, the gate, compare, init, schema and the CLI find it with no other change.
registerBuiltinAudits();
registerBuiltinSimProfiles();
registerAudit(toyAudit);

const dir = mkdtempSync(join(tmpdir(), 'echolens-toy-'));
const db = join(dir, 'toy.db');
const config = join(dir, 'toy.yaml');

beforeAll(async () => {
  const init = await runCliInProcess(['init', 'toy', '-o', config]);
  expect(init.code, init.stderr).toBe(0);
  const run = await runCliInProcess(['toy', 'run', config, '--db', db]);
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toMatch(/toy run toy-[0-9a-f]+: 3 cells/);
}, 60_000);
afterAll(() => unregisterAudit('toy'));

describe('a toy audit registered with one line', () => {
  it('init writes its starter with the schema line, and schema prints its JSON Schema', async () => {
    expect(readFileSync(config, 'utf8').split('\n')[0]).toBe('# yaml-language-server: $schema=./toy.schema.json');
    const schema = JSON.parse((await runCliInProcess(['schema', 'toy'])).stdout) as { properties: Record<string, unknown> };
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['targets', 'n', 'gate']));
  });

  it('the CLI lists it and generates its run and report commands', async () => {
    expect((await runCliInProcess(['audits'])).stdout).toMatch(/toy/);
    expect((await runCliInProcess(['--help'])).stdout).toMatch(/toy\s+Toy audit/);
    const report = await runCliInProcess(['toy', 'report', db, '--format', 'json']);
    expect(report.code, report.stderr).toBe(0);
    const json = JSON.parse(report.stdout) as { toy: { targets: Array<{ target: string; meanLength: number; n: number }> }; simulated: boolean };
    // sim:echo repeats "toy item " + 0, 1, 2 x's: lengths 9, 10, 11.
    expect(json.toy.targets).toEqual([{ target: 'sim:echo', meanLength: 10, n: 3 }]);
    expect(json.simulated).toBe(true);
  });

  it('echolens report renders the section of its document in every format (it has no rendering code)', async () => {
    // It has no rendering code: the shared renderers draw its document's sections.
    expect(Object.keys(toyAudit.render).sort()).toEqual(['csvRows', 'document', 'json', 'viewerSummary']);
    const json = JSON.parse((await runCliInProcess(['report', db, '--format', 'json'])).stdout) as { runs: Array<Record<string, unknown>> };
    expect(JSON.stringify(json)).toContain('"meanLength":10');
    const md = (await runCliInProcess(['report', db, '--format', 'md'])).stdout;
    expect(md).toContain(
      '## Answer lengths\n\nCharacters in each answer, averaged over the items.\n\n| target | mean toy length | items |\n| --- | --- | --- |\n| sim:echo | 10.0 | 3 |\n',
    );
    expect((await runCliInProcess(['report', db, '--format', 'html', '-o', join(dir, 'r.html')])).code).toBe(0);
    const page = readFileSync(join(dir, 'r.html'), 'utf8');
    expect(page).toContain('<h3 id="toy-lengths">Answer lengths</h3>');
    expect(page).toContain('<tr><td>sim:echo</td><td class="num">10.0</td><td class="num">3</td></tr>');
    // The first screen's card is the document's verdict.
    expect(page).toMatch(/<div class="verdict">measured<\/div><dl><dt>mean toy length<\/dt><dd data-label="mean toy length"><span class="value">10\.0<\/span>/);
    const toyMd = (await runCliInProcess(['toy', 'report', db])).stdout;
    expect(toyMd).toContain('| sim:echo | 10.0 | 3 |');
    const csv = (await runCliInProcess(['report', db, '--format', 'csv'])).stdout;
    expect(csv).toMatch(/,toy,toy,sim:echo,,,mean length,10,,,3,,\n/);
  });

  it('gets a valid result document from its document member and CSV rows', async () => {
    const json = JSON.parse((await runCliInProcess(['report', db, '--format', 'json'])).stdout) as { runs: Array<{ experiment: string; document: unknown }> };
    const entry = json.runs.find((r) => r.experiment === 'toy');
    const doc = resultDocumentSchema.parse(entry?.document);
    expect(doc.run.audit).toBe('toy');
    expect(doc.provenance.simulated).toBe(true);
    expect(doc.counts).toEqual({ cells: 3, done: 3, failed: 0, pending: 0, distinctRequests: 3 });
    // sim:echo is priced at zero: a known $0, not unknown.
    expect(doc.cost.usd).toBe(0);
    expect(doc.estimates).toEqual([expect.objectContaining({ table: 'toy', subject: 'sim:echo', label: 'mean length', estimate: 10, n: 3, interval: null })]);
    expect(doc.verdicts).toEqual([
      expect.objectContaining({ subject: 'sim:echo', verdict: 'measured', estimate: 10, numbers: [{ label: 'mean toy length', value: '10.0' }] }),
    ]);
    expect(doc.sections).toEqual([expect.objectContaining({ id: 'toy-lengths', title: 'Answer lengths' })]);
  });

  it('the gate reads its thresholds from its flags and makes its checks', async () => {
    expect((await runCliInProcess(['gate', '--help'])).stdout).toMatch(/--max-toy-length <chars>/);
    const strict = await runCliInProcess(['gate', db, '--max-toy-length', '5', '--format', 'json']);
    expect(strict.code).toBe(1);
    const result = JSON.parse(strict.stdout) as { thresholds: Record<string, unknown>; checks: Array<{ audit: string; name: string; status: string }> };
    expect(result.thresholds.maxToyLength).toBe(5);
    expect(result.checks).toContainEqual(expect.objectContaining({ audit: 'toy', name: 'max-toy-length', status: 'fail' }));
    expect((await runCliInProcess(['gate', db, '--max-toy-length', '50'])).code).toBe(0);
  });

  it('compare bootstraps its statistic over the shared items', async () => {
    const run = await runCliInProcess(['compare', db, db, '--format', 'json']);
    expect(run.code, run.stderr).toBe(0);
    const comparisons = JSON.parse(run.stdout) as {
      comparisons?: Array<{ audit: string; rows: Array<{ statistic: string; unit: string; result: { difference: number } }> }>;
    };
    const toy = JSON.stringify(comparisons);
    expect(toy).toContain('"statistic":"mean answer length"');
    expect(toy).toContain('"unit":"item"');
    expect(toy).toContain('"difference":0');
  });

  describe('the viewer', () => {
    const served = useStoreViewer({ target: 'sim:echo', judge: 'sim:echo' });
    beforeAll(async () => {
      await served.open(db);
    });

    it('lists the run and shows its summary, section and per-cell numbers', async () => {
      const runs = (await (await fetch(new URL('/api/runs', served.viewer.url))).json()) as { runs: Array<{ id: string; experiment: string }> };
      const run = runs.runs.find((r) => r.experiment === 'toy');
      expect(run).toBeDefined();
      const page = await (await fetch(new URL(`/run?s=0&r=${run?.id}`, served.viewer.url))).text();
      expect(page).toContain('toy length sim:echo');
      expect(page).toContain('characters in the answer');
      // The analysis page: the document's section, drawn by the shared renderer.
      const analysis = await (await fetch(new URL(`/analysis?s=0&r=${run?.id}`, served.viewer.url))).text();
      expect(analysis).toContain('<h3 id="toy-lengths">Answer lengths</h3>');
      expect(analysis).toContain('<td class="num">10.0</td>');
    });
  });
});
