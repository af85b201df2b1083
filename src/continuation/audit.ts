import type { Audit, AuditCsvRow, AuditSummaryLine } from '../experiment/audit.js';
import { estimateCells, estimateLines } from '../models/estimate.js';
import { loadPriceTable } from '../models/prices.js';
import { forestSpec, type IntervalRow } from '../report/charts.js';
import { figure, html, type RawHtml, table } from '../report/html.js';
import { vegaLiteToSvg } from '../report/svg.js';
import type { PairedEstimate } from './analysis.js';
import { calibrateContinuation } from './calibrate.js';
import type { ContinuationConfig } from './config.js';
import { continuationConfigSchema } from './config.js';
import { renderContinuationMarkdown } from './report-markdown.js';
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

const signed = (x: number | null) => (x === null ? 'n/a' : x >= 0 ? `+${x.toFixed(3)}` : x.toFixed(3));
const pv = (p: number | null) => (p === null ? 'n/a' : p < 0.001 ? '<0.001' : p.toFixed(3));
const ciText = (e: PairedEstimate) => (e.ci ? `${signed(e.mean)} [${signed(e.ci[0])}, ${signed(e.ci[1])}]` : signed(e.mean));

function csvRows(report: ContinuationReport): AuditCsvRow[] {
  const rows: AuditCsvRow[] = [];
  for (const t of report.analysis.targets) {
    for (const c of t.contrasts) {
      for (const [stratum, pair] of [['all', { completeCase: c.completeCase, itt: c.itt }], ['same-task', c.strata.sameTask], ['cross-task', c.strata.crossTask]] as const) {
        for (const kind of ['completeCase', 'itt'] as const) {
          const e = pair[kind];
          rows.push([`contrast/${kind}`, t.target, null, `${c.a}-${c.b}`, stratum, e.mean, e.ci?.[0] ?? null, e.ci?.[1] ?? null, e.n, e.p, null]);
        }
      }
    }
  }
  return rows;
}

async function htmlSection(report: ContinuationReport): Promise<RawHtml> {
  const parts: RawHtml[] = [];
  if (report.simulated) parts.push(html`<p class="note"><strong>Simulated targets: nothing was measured.</strong></p>`);
  parts.push(
    html`<p class="note">Argument fidelity (0–1) of the next tool call against the call recorded in the transcript, at ${report.cutpoints.length} cutpoints of <code>${report.session ?? '?'}</code>; cross arm from <code>${report.crossSession ?? 'the same session, half a session away'}</code>. Complete case = both arms returned a parseable call; ITT = every generated pair, unparseable / prose / missing scored 0. Paired sign-flip test, 95% t interval. Tools: ${report.tools.join(', ')} (${report.toolSource ?? '?'}).</p>`,
  );
  const rows: IntervalRow[] = [];
  for (const t of report.analysis.targets) {
    for (const c of t.contrasts) {
      for (const kind of ['completeCase', 'itt'] as const) {
        const e = c[kind];
        if (e.mean !== null && e.ci) rows.push({ label: `${t.target} · ${c.a} − ${c.b}`, estimate: e.mean, lo: e.ci[0], hi: e.ci[1], group: kind === 'completeCase' ? 'complete case' : 'ITT' });
      }
    }
  }
  if (rows.length > 0) {
    parts.push(figure(await vegaLiteToSvg(forestSpec(rows, { xTitle: 'Δ argument fidelity (a − b)' })), 'Point = mean paired difference, bar = 95% t interval over cutpoints.'));
  }
  for (const t of report.analysis.targets) {
    parts.push(html`<h3>${t.target}: attrition per arm</h3>`);
    parts.push(
      table(t.attrition, [
        { header: 'arm', value: (a) => a.arm },
        { header: 'generated', value: (a) => `${a.generated}/${a.attempted}`, numeric: true },
        { header: 'parseable calls', value: (a) => a.calls, numeric: true },
        { header: 'unparseable', value: (a) => a.unparseable, numeric: true },
        { header: 'prose', value: (a) => a.prose, numeric: true },
        { header: 'missing', value: (a) => a.missing, numeric: true },
        { header: 'mean fidelity (calls / ITT)', value: (a) => `${a.meanFidelity?.toFixed(3) ?? 'n/a'} / ${a.meanFidelityItt?.toFixed(3) ?? 'n/a'}`, numeric: true },
      ]),
    );
    parts.push(html`<h3>${t.target}: contrasts (${t.sameTaskCutpoints} same-task, ${t.crossTaskCutpoints} cross-task cutpoints)</h3>`);
    parts.push(
      table(t.contrasts, [
        { header: 'contrast', value: (c) => `${c.a} − ${c.b}${c.primary ? ' (primary)' : ''}` },
        { header: 'complete case Δ [CI]', value: (c) => ciText(c.completeCase), numeric: true },
        { header: 'n / p', value: (c) => `${c.completeCase.n} / ${pv(c.completeCase.p)}`, numeric: true },
        { header: 'ITT Δ [CI]', value: (c) => ciText(c.itt), numeric: true },
        { header: 'n / p', value: (c) => `${c.itt.n} / ${pv(c.itt.p)}`, numeric: true },
        { header: 'same-task Δ (CC / ITT)', value: (c) => `${signed(c.strata.sameTask.completeCase.mean)} / ${signed(c.strata.sameTask.itt.mean)}`, numeric: true },
        { header: 'cross-task Δ (CC / ITT)', value: (c) => `${signed(c.strata.crossTask.completeCase.mean)} / ${signed(c.strata.crossTask.itt.mean)}`, numeric: true },
      ]),
    );
  }
  return html`${parts}`;
}

/** The tool-using continuation audit (ContextEcho F5) on the shared protocol. */
export const continuationAudit: Audit<ContinuationConfig, ContinuationInput, ContinuationCollected, ContinuationReport, ContinuationRunCounts> = {
  ...continuationRunner,
  title: 'Tool-using continuation (ContextEcho F5)',
  description: 'cut a session before recorded tool calls; score the argument fidelity of each target\'s next call under scratch, filler, recent and cross prefixes',
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
      // Naive, expected-with-caching and batch cost, as the other audits print them.
      ...estimateLines(estimateCells(input.plan.specs, loadPriceTable(priceFile ? { file: priceFile } : {}))),
    ],
  }),
  describeResult: (run, db) =>
    `${run.resumed ? 'resumed' : 'started'} run ${run.runId} in ${db}: ${run.result.cells} cells at ${run.result.cutpoints} cutpoints, spend $${run.spendUsd.toFixed(4)}`,
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
      notes.push(`${profile.name}: planted recent − cross ${result.planted.completeCase.toFixed(3)} complete case, ${result.planted.itt.toFixed(3)} ITT (rejection rate = ${result.withinNominal ? 'false-positive rate' : 'power'})`);
    }
    return { audit: 'continuation', replicates: options.replicates, tests, notes };
  },
  render: {
    markdown: ({ report }, title) => renderContinuationMarkdown(report).replace(/^# .*\n/, `# ${title}\n`),
    htmlSection: ({ report }) => htmlSection(report),
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
