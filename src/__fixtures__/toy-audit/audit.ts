import { z } from 'zod';
import { loadConfigFile } from '../../core/config-file.js';
import type { Audit, AuditGate } from '../../experiment/audit.js';
import { labelDecoder } from '../../experiment/labels.js';
import { auditLimitsSchema } from '../../experiment/limits-schema.js';
import { auditGateSectionSchema } from '../../gate/config.js';
import { documentVerdict } from '../../report/document/build.js';
import { int, num, text } from '../../report/document/cells.js';
import { attempt, sharedUnits } from '../../report/compare-units.js';
import { meanOfClusterMeans, pairedBootstrapDifference } from '../../stats/paired-bootstrap.js';
import type { CellSpec } from '../../store/types.js';

/**
 * A toy audit in one folder, for the test that registers it with one line (toy-audit.test.ts):
 * it asks each target to repeat `n` short items and measures the length of the answers. It
 * plugs into the shared code only through its Audit members: config and its JSON Schema,
 * plan and stages, collect/analyze, renderers, gate, compare, viewer and init.
 */

const toyGateShape = {
  /** Fail when a target's mean answer length is above this many characters. */
  maxToyLength: z.number().positive().optional(),
};

const toyConfigSchema = z
  .object({
    name: z.string().default('toy-audit'),
    targets: z.array(z.string().min(1)).min(1),
    n: z.number().int().positive().default(4),
    seed: z.number().int().default(1),
    limits: auditLimitsSchema,
    gate: auditGateSectionSchema(toyGateShape).optional(),
  })
  .strict();

type ToyConfig = z.infer<typeof toyConfigSchema>;
type ToyCollected = Array<{ target: string; item: number; length: number }>;
interface ToyReport {
  targets: Array<{ target: string; meanLength: number; n: number }>;
}

const toyLabels = labelDecoder(z.object({ target: z.string(), item: z.number().int() }), 'toy cell');

const toyGate: AuditGate<ToyReport> = {
  shape: toyGateShape,
  defaults: { maxToyLength: null },
  flags: [{ key: 'maxToyLength', flags: '--max-toy-length <chars>', description: 'toy: fail when a mean answer length is above this' }],
  describe: (t) => [`max toy length ${t.maxToyLength ?? 'none'}`],
  check(report, thresholds, runId) {
    const limit = thresholds.maxToyLength as number | null;
    if (limit === null) return [];
    return report.targets.map((t) => ({
      run: runId,
      audit: 'toy',
      subject: t.target,
      name: 'max-toy-length',
      status: t.meanLength > limit ? 'fail' : 'pass',
      message: `mean length ${t.meanLength.toFixed(1)} against the limit ${limit}`,
    }));
  },
};

const lengthsByItem = (collected: ToyCollected, target: string) => new Map(collected.filter((c) => c.target === target).map((c) => [String(c.item), c.length]));

export const toyAudit: Audit<ToyConfig, number[], ToyCollected, ToyReport, { cells: number }> = {
  name: 'toy',
  title: 'Toy audit',
  description: 'repeat short items and measure the answers’ length (a test fixture)',
  command: 'toy',
  configSchema: toyConfigSchema,
  loadConfig: (file, overrides) => loadConfigFile(file, toyConfigSchema, overrides).config,
  limits: (config) => config.limits,
  prepare: async (config) => Array.from({ length: config.n }, (_, i) => i),
  plan: (config, items): CellSpec[] =>
    config.targets.flatMap((target) =>
      items.map((item) => ({
        request: { model: target, messages: [{ role: 'user' as const, content: `toy item ${'x'.repeat(item)}` }], params: {}, sample: 0 },
        labels: { experiment: 'toy', stage: 'target', target, item },
      })),
    ),
  manifestOptions: (config) => ({ items: config.n }),
  // One stage: the run is done once its cells are all registered and settled.
  stages: (_config, _input, specs) => [{ name: 'toy cells', expected: specs.length }],
  async execute({ specs, stage }) {
    const result = await stage(specs, 'toy cells');
    return { cells: result.results.length };
  },
  dryRun: (_config, items) => ({ lines: [`plan: ${items.length} toy items`] }),
  describeResult: (run) => `toy run ${run.runId}: ${run.result.cells} cells`,
  collect: async (store, run) =>
    (await store.cellsOfRun(run.id)).map((cell) => {
      const labels = toyLabels(cell.labels, cell.key);
      return { target: labels.target, item: labels.item, length: cell.result.status === 'done' ? (cell.result.text ?? '').length : 0 };
    }),
  analyze: (collected) => ({
    targets: [...new Set(collected.map((c) => c.target))].map((target) => {
      const lengths = collected.filter((c) => c.target === target).map((c) => c.length);
      return { target, meanLength: lengths.reduce((s, x) => s + x, 0) / lengths.length, n: lengths.length };
    }),
  }),
  gate: toyGate,
  compare: (a, b, options) =>
    a.report.targets.map((t) => ({
      statistic: 'mean answer length',
      subject: t.target,
      unit: 'item',
      scale: 'number' as const,
      result: attempt(() =>
        pairedBootstrapDifference(
          sharedUnits(lengthsByItem(a.collected, t.target), lengthsByItem(b.collected, t.target), (item) => item),
          (clusters) => meanOfClusterMeans(clusters.map((c) => [...c])),
          options,
        ),
      ),
      // Each run's own mean over all its items (its report's figure).
      own: { a: t.meanLength, b: b.report.targets.find((u) => u.target === t.target)?.meanLength ?? null },
    })),
  viewer: {
    cellMeasures: (cells, collected) => [
      {
        name: 'length',
        label: 'length',
        description: 'characters in the answer',
        values: new Map(cells.map((cell) => [cell.key, collected.find((c) => String(c.item) === String(cell.labels.item))?.length ?? null])),
      },
    ],
  },
  initTemplate: { file: 'toy.yaml', text: 'name: toy-audit\ntargets:\n  - sim:echo\nn: 3\n' },
  render: {
    // Its report sections as data: the shared renderers draw them in HTML and Markdown.
    document: ({ report }) => ({
      verdicts: report.targets.map((t) =>
        documentVerdict({ subject: t.target, verdict: 'measured', tone: 'neutral', estimate: t.meanLength, numbers: [{ label: 'mean toy length', value: t.meanLength.toFixed(1) }] }),
      ),
      sections: [
        {
          id: 'toy-lengths',
          title: 'Answer lengths',
          blocks: [
            { kind: 'text', text: 'Characters in each answer, averaged over the items.' },
            {
              kind: 'table',
              columns: [{ header: 'target' }, { header: 'mean toy length', numeric: true }, { header: 'items', numeric: true }],
              rows: report.targets.map((t) => [text(t.target), num(t.meanLength, 'fixed', 1), int(t.n)]),
            },
          ],
        },
      ],
    }),
    csvRows: ({ report }) => report.targets.map((t) => ['toy', t.target, '', '', 'mean length', t.meanLength, null, null, t.n, null, null]),
    json: ({ report }) => report,
    viewerSummary: ({ report }) => report.targets.map((t) => ({ label: `toy length ${t.target}`, value: t.meanLength.toFixed(1) })),
  },
};
