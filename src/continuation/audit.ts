import { spendText } from '../core/money.js';
import type { Audit, AuditCsvRow, AuditSummaryLine } from '../experiment/audit.js';
import { estimateCells, estimateLines } from '../models/estimate.js';
import { loadPriceTable } from '../models/prices.js';
import { calibrateContinuation } from './calibrate.js';
import type { ContinuationConfig } from './config.js';
import { continuationConfigSchema } from './config.js';
import { continuationCiText as ciText, continuationDocument } from './document.js';
import {
  analyzeContinuationRun,
  type ContinuationCollected,
  type ContinuationInput,
  type ContinuationReport,
  type ContinuationRunCounts,
  collectContinuation,
  continuationRunner,
  loadContinuationConfig,
} from './run.js';
import { CONTINUATION_NULL_SIM, CONTINUATION_SIM } from './sim.js';
import { continuationCompare, continuationOverTime } from './compare.js';
import { continuationGate } from './gate.js';
import { CONTINUATION_STARTER } from './init-template.js';
import { continuationViewer } from './viewer.js';
import { designPowerLine } from './power.js';

/** The design's minimum detectable effect, printed before spending (dry run and run start). */
export function continuationDesignPowerLine(config: ContinuationConfig, cutpoints: number): string {
  const { effectOfInterest, planningSd } = config.analysis;
  return designPowerLine(cutpoints, { ...(effectOfInterest === undefined ? {} : { effectOfInterest }), ...(planningSd === undefined ? {} : { planningSd }) });
}

function csvRows(report: ContinuationReport): AuditCsvRow[] {
  const rows: AuditCsvRow[] = [];
  for (const t of report.analysis.targets) {
    for (const c of t.contrasts) {
      for (const [stratum, pair] of [
        ['all', { completeCase: c.completeCase, itt: c.itt }],
        ['same-task', c.strata.sameTask],
        ['cross-task', c.strata.crossTask],
      ] as const) {
        for (const kind of ['completeCase', 'itt'] as const) {
          const e = pair[kind];
          // The label carries the row's role: only the primary rows test the pre-specified question.
          rows.push([
            `contrast/${kind}`,
            t.target,
            null,
            `${c.a}-${c.b}`,
            `${stratum} (${e.role})`,
            e.mean,
            e.ci?.[0] ?? null,
            e.ci?.[1] ?? null,
            e.n,
            e.p,
            null,
          ]);
        }
      }
    }
  }
  return rows;
}

/** The tool-using continuation audit (ContextEcho F5) on the shared protocol. */
export const continuationAudit: Audit<ContinuationConfig, ContinuationInput, ContinuationCollected, ContinuationReport, ContinuationRunCounts> = {
  ...continuationRunner,
  title: 'Tool-using continuation (ContextEcho F5)',
  description:
    "cut a session before recorded tool calls; score the argument fidelity of each target's next call under scratch, filler, recent and cross prefixes",
  command: 'continuation',
  configSchema: continuationConfigSchema,
  loadConfig: loadContinuationConfig,
  dryRun: (config, input, priceFile) => ({
    lines: [
      `plan: ${input.plan.specs.length} cells = ${config.targets.length} target(s) × ${input.plan.cutpoints.length} cutpoints × ${config.arms.length} arms`,
      `tools: ${input.plan.tools.map((t) => t.name).join(', ')} (${input.plan.toolSource})`,
      ...input.plan.cutpoints.map(
        (c) => `  ${c.id} line ${c.line} → ${c.groundTruth.name} (task ${c.task}, ${c.sameTask === null ? '?' : c.sameTask ? 'same-task' : 'cross-task'})`,
      ),
      ...input.plan.notes.map((n) => `note: ${n}`),
      continuationDesignPowerLine(config, input.plan.cutpoints.length),
      // Naive, expected-with-caching and batch cost, as the other audits print them.
      ...estimateLines(estimateCells(input.plan.specs, loadPriceTable(priceFile ? { file: priceFile } : {}))),
    ],
  }),
  describeResult: (run, db) =>
    `${run.resumed ? 'resumed' : 'started'} run ${run.runId} in ${db}: ${run.result.cells} cells at ${run.result.cutpoints} cutpoints, spend ${spendText(run.spendUsd, run.unpricedCells)}`,
  collect: collectContinuation,
  analyze: (collected, run, options) => analyzeContinuationRun(collected, run, options.B ? { resamples: Math.max(20_000, options.B) } : {}),
  async calibrate(options) {
    const tests = [];
    const notes: string[] = [];
    for (const profile of [CONTINUATION_NULL_SIM, CONTINUATION_SIM]) {
      const result = calibrateContinuation(profile, {
        cutpoints: 25,
        replicates: options.replicates,
        seed: options.seed,
        analysis: { resamples: options.B ?? 20_000, ...(options.alpha === undefined ? {} : { alpha: options.alpha }) },
      });
      tests.push(...result.tests.map((t) => ({ ...t, test: `${profile.name}/${t.test}` })));
      notes.push(
        `${profile.name}: planted recent − cross ${result.planted.completeCase.toFixed(3)} complete case, ${result.planted.itt.toFixed(3)} ITT (rejection rate = ${result.withinNominal ? 'false-positive rate' : 'power'})`,
      );
    }
    return { audit: 'continuation', replicates: options.replicates, tests, notes };
  },
  gate: continuationGate,
  initTemplate: { file: 'continuation.yaml', text: CONTINUATION_STARTER },
  compare: continuationCompare,
  overTime: continuationOverTime,
  viewer: continuationViewer,
  render: {
    document: ({ report }) => continuationDocument(report),
    csvRows: ({ report }) => csvRows(report),
    json: ({ report }) => report,
    viewerSummary: ({ report }) =>
      report.analysis.targets.map((t): AuditSummaryLine => {
        const p = t.contrasts.find((c) => c.primary);
        return {
          label: `recent − cross fidelity · ${t.target}`,
          value: p ? `complete case ${ciText(p.completeCase)} (n ${p.completeCase.n}); ITT ${ciText(p.itt)} (n ${p.itt.n})` : 'n/a',
        };
      }),
  },
};
