import { stringify as stringifyYaml } from 'yaml';
import { materialsMarkdown, runMaterialsOf } from '../materials/report.js';
import { ConfigError } from '../core/errors.js';
import { spendOrNull, spendText } from '../core/money.js';
import { AUDIT_CSV_COLUMNS, type AnalyzedRun, type AnyAudit } from '../experiment/audit.js';
import { findAudit, registeredAudits } from '../experiment/registry.js';
import { analyzeAuditRun } from '../experiment/analyze-run.js';
import { requireCompleteRun } from '../experiment/run-completeness.js';
import { measurementOf, runsOfDesign } from '../experiment/measurement.js';
import { type DesignHistory, storeHistory } from './history.js';
import { trendSection } from './trend.js';
import type { RunInfo, RunStore } from '../store/run-store.js';
import { answerSanity } from '../gate/sanity.js';
import { overallVerdict, reportVerdict, verdictMarkdown, type ReportVerdict } from '../gate/verdict.js';
import { html, page, type RawHtml, REPORT_PAGE_STYLE, REPORT_STYLE } from './html.js';
import { csvCell } from '../core/csv.js';
import { mapSequential } from '../core/map-sequential.js';
import { buildResultDocument, type RunAccounting, unfinishedCells } from './document/build.js';
import type { DocumentVerdict, ResultDocument } from './document/types.js';
import { auditSectionHtml } from './document/render-html.js';
import { auditMarkdown } from './document/render-markdown.js';

/**
 * `echolens report <run.db>`: every run in a store as one self-contained HTML
 * page, or Markdown, JSON or CSV carrying the same numbers.
 */

export type ReportFormat = 'html' | 'md' | 'json' | 'csv';

export type { RunAccounting };

export async function accountRun(store: RunStore, runId: string): Promise<RunAccounting> {
  const cells = await store.cellResultsOfRun(runId);
  const byStatus: Record<string, number> = {};
  const account: RunAccounting = {
    cells: cells.length,
    byStatus,
    distinctRequests: 0,
    spendUsd: 0,
    unpricedCells: 0,
    inputTokens: 0,
    outputTokens: 0,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    providerCacheHits: 0,
    sharedWithOtherRuns: 0,
    notComputable: answerSanity(cells),
  };
  const seen = new Set<string>();
  for (const cell of cells) {
    byStatus[cell.result.status] = (byStatus[cell.result.status] ?? 0) + 1;
    if (seen.has(cell.key)) continue;
    seen.add(cell.key);
    const r = cell.result;
    if (r.costUsd === null && r.usage.inputTokens + r.usage.outputTokens > 0) account.unpricedCells += 1;
    account.spendUsd += r.costUsd ?? 0;
    account.inputTokens += r.usage.inputTokens;
    account.outputTokens += r.usage.outputTokens;
    account.cachedInputTokens += r.usage.cachedInputTokens;
    account.cacheWriteTokens += r.usage.cacheWriteTokens;
    if (r.usage.cachedInputTokens > 0) account.providerCacheHits += 1;
  }
  account.distinctRequests = seen.size;
  return account;
}

export interface ExperimentRunReport {
  run: RunInfo;
  accounting: RunAccounting;
  /** The registered audit of the run's experiment (none: the run is listed without analysis). */
  audit?: AnyAudit;
  /** What the audit collected and its analysis. */
  analyzed?: AnalyzedRun<unknown, unknown>;
  /** The run's result document: every surface reads its headline fields from here (docs/result-document.md). */
  document: ResultDocument;
  /**
   * The analysis is also reachable under the experiment's name (`report.persona`,
   * `report.memory`), the fields this interface had before the audit registry.
   */
  [experiment: string]: unknown;
}

async function selectRuns(store: RunStore, runIds?: readonly string[]): Promise<RunInfo[]> {
  if (runIds && runIds.length > 0) return mapSequential(runIds, (id) => store.requireRun(id));
  const names = registeredAudits().map((a) => a.name);
  const runs = (await store.listRunHeads()).filter((r) => names.includes(r.experiment));
  if (runs.length === 0) throw new ConfigError(`the store holds no ${names.join(' or ')} run`, { field: 'run' });
  // Each run's counts from the store (a report's read-once view takes them from the cells it reads).
  return mapSequential(
    runs.sort((a, b) => a.startedAt.localeCompare(b.startedAt)),
    (r) => store.requireRun(r.id),
  );
}

export async function collectReports(store: RunStore, runIds?: readonly string[], options: { B?: number } = {}): Promise<ExperimentRunReport[]> {
  return mapSequential(await selectRuns(store, runIds), async (run) => {
    const audit = findAudit(run.experiment);
    const accounting = await accountRun(store, run.id);
    if (!audit) return reportEntry(run, accounting);
    await requireCompleteRun(store, run.id);
    return reportEntry(run, accounting, { audit, analyzed: await analyzeAuditRun(audit, store, run, options.B ? { B: options.B } : {}) });
  });
}

/** A run's report entry: its analysis (when its audit is registered) and its result document. */
export function reportEntry(
  run: RunInfo,
  accounting: RunAccounting,
  analysis?: { audit: AnyAudit; analyzed: AnalyzedRun<unknown, unknown> },
): ExperimentRunReport {
  if (!analysis) return { run, accounting, document: buildResultDocument({ run, accounting }) };
  const { audit, analyzed } = analysis;
  return { run, accounting, audit, analyzed, document: buildResultDocument({ run, accounting, audit, analyzed }), [audit.name]: analyzed.report };
}

/** A config value as text: lists joined, objects as `key value` pairs (never a JSON dump). */
export function readableValue(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (Array.isArray(value)) return value.length === 0 ? '—' : value.map(readableValue).join(', ');
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return entries.length === 0 ? '—' : entries.map(([k, v]) => `${k} ${readableValue(v)}`).join(', ');
  }
  return String(value);
}

/** The run's name from its config (`name:`), else its id. */
export function runName(run: RunInfo): string {
  const name = ((run.manifest.config ?? {}) as Record<string, unknown>).name;
  return typeof name === 'string' && name.length > 0 ? name : run.id;
}

function manifestEntries(run: RunInfo, accounting: RunAccounting, doc: ResultDocument): Array<[string, unknown]> {
  const m = run.manifest;
  const config = (m.config ?? {}) as Record<string, unknown>;
  return [
    ['run', run.id],
    ['name', runName(run)],
    ['experiment', m.experiment],
    ['status', run.status],
    ['started / ended', `${run.startedAt} / ${run.endedAt ?? '—'}`],
    ['targets', readableValue(config.targets)],
    ['judges / labelers', readableValue(config.judges ?? config.labelers ?? config.labeler)],
    ['decoding', readableValue(config.decoding)],
    ['system prompts', readableValue(config.systemPrompts ?? config.systemPrompt)],
    ['materials', doc.provenance.materials],
    ['procedure', doc.provenance.procedure],
    ['seed', m.seed],
    ['versions', readableValue(m.versions)],
    ['git commit', m.gitCommit ?? 'unknown'],
    ['cells', cellsText(doc)],
    ['spend', spendText(accounting.spendUsd, accounting.unpricedCells)],
    [
      'tokens',
      `${accounting.inputTokens.toLocaleString('en-US')} in (${accounting.cachedInputTokens.toLocaleString('en-US')} from provider cache, ${accounting.cacheWriteTokens.toLocaleString('en-US')} written), ${accounting.outputTokens.toLocaleString('en-US')} out`,
    ],
    ['provider cache hits', `${accounting.providerCacheHits} cells`],
  ];
}

/** One table for every run of the report: a row per field, a column per run; then each run's full configuration. */
function metadataHtml(reports: readonly ExperimentRunReport[]): RawHtml {
  const columns = reports.map((r) => manifestEntries(r.run, r.accounting, r.document));
  const fields = columns[0]?.map(([k]) => k) ?? [];
  const head = html`<thead><tr><th scope="col">field</th>${reports.map((r) => html`<th scope="col" id="meta-${r.run.id}">${r.audit?.title ?? r.run.experiment}</th>`)}</tr></thead>`;
  const rows = fields.map((field, i) => html`<tr><th scope="row">${field}</th>${columns.map((c) => html`<td>${String(c[i]?.[1] ?? '—')}</td>`)}</tr>`);
  const configs = reports.map(
    (r) => html`<details><summary>Full configuration of ${runName(r.run)} (YAML)</summary><pre>${stringifyYaml(r.run.manifest.config ?? {})}</pre></details>`,
  );
  return html`<table class="meta">${head}<tbody>${rows}</tbody></table>${configs}`;
}

/** The run's cells as every surface says them: the store's count by status, and the distinct requests among them. */
export function cellsText(doc: ResultDocument): string {
  const c = doc.counts;
  const status = [`done ${c.done}`, ...(c.failed > 0 ? [`failed ${c.failed}`] : []), ...(c.pending > 0 ? [`pending ${c.pending}`] : [])];
  return `${c.cells} (${status.join(', ')}; ${c.distinctRequests} distinct requests)`;
}

function glanceCards(r: ExperimentRunReport, anchor: string): RawHtml[] {
  const doc = r.document;
  return doc.verdicts.map(
    (t) =>
      html`<div class="card tone-${t.tone}" data-run="${r.run.id}" data-audit="${r.run.experiment}"><div class="audit"><a href="#${anchor}">${doc.run.title}</a>${doc.provenance.simulated ? html` <span class="tag">simulated</span>` : ''}</div><div class="target">${t.subject} · run ${doc.run.name}</div><div class="verdict">${t.verdict}</div><dl>${t.numbers.map(
        (n) =>
          html`<dt>${n.label}</dt><dd data-label="${n.label}"><span class="value">${n.value}</span>${n.detail ? html`<small>${n.detail}</small>` : ''}</dd>`,
      )}</dl></div>`,
  );
}

const SIMULATED_BANNER = html`<p class="banner"><strong>Simulated models.</strong> This run used <code>sim:</code> models: deterministic simulations with planted effects, for demos and tests. Its numbers measure no real model.</p>`;

export async function renderHtmlReport(store: RunStore, reports: readonly ExperimentRunReport[], title = 'echolens report'): Promise<string> {
  const anchors = reports.map((r) => `run-${r.run.id}`);
  const sections: RawHtml[] = [];
  for (const [i, r] of reports.entries()) {
    const heading = r.audit?.title ?? r.run.experiment;
    const body: RawHtml[] = [html`<h2 id="${anchors[i]}">${heading} — ${runName(r.run)}</h2>`];
    if (r.document.provenance.simulated) body.push(SIMULATED_BANNER);
    // The latest of several measurements of a design links its trend, shown below its section (docs/over-time.md).
    const trend = await latestMeasurementTrend(store, r.run);
    if (trend)
      body.push(
        html`<p class="banner">Measurement ${trend.runs.length} of this design: see <a href="#trend-${trend.design}">its trend over time</a> (every measurement's estimate and interval, model-version changes marked; in <code>echolens view</code>: <code>/trend?d=${trend.design}</code>).</p>`,
      );
    if (r.audit && r.analyzed) body.push(await auditSectionHtml(r.audit, r.analyzed));
    if (trend) body.push(trendSection(trend));
    body.push(html`<p class="muted">Models, parameters and manifest: <a href="#meta-${r.run.id}">run metadata</a>.</p>`);
    sections.push(html`<section class="run">${body}</section>`);
  }
  const simulatedRuns = reports.filter((r) => r.document.provenance.simulated);
  const simBanner =
    simulatedRuns.length > 0
      ? html`<p class="banner"><strong>Simulated models.</strong> ${simulatedRuns.length === reports.length ? 'Every run' : `${simulatedRuns.length} of ${reports.length} runs`} in this report used <code>sim:</code> models: deterministic simulations with planted effects, for demos and tests. Their numbers measure no real model.</p>`
      : '';
  const glance = html`<section class="glance" id="at-a-glance"><h2>At a glance</h2><div class="cards">${reports.flatMap((r, i) => glanceCards(r, anchors[i] as string))}</div></section>`;
  const metadata = html`<section class="metadata" id="metadata"><h2>Run metadata</h2>${metadataHtml(reports)}</section>`;
  const nav = html`<nav class="toc">${reports.map((r, i) => html`<a href="#${anchors[i]}">${r.run.experiment}: ${runName(r.run)}</a>`)}<a href="#metadata">metadata</a></nav>`;
  const body = html`<header class="top"><h1>${title}</h1>${simBanner}<p class="muted">Generated by echolens. Self-contained: no network is needed to read this file, and it runs no script. Hover a chart mark for its numbers.</p>${nav}</header><main>${glance}${sections}${metadata}</main>`;
  return page(title, body, REPORT_STYLE + REPORT_PAGE_STYLE);
}

/** The history of a run's design when the run is its latest of at least two measurements, else undefined. */
async function latestMeasurementTrend(store: RunStore, run: RunInfo): Promise<DesignHistory | undefined> {
  const design = measurementOf(run).designId;
  const runs = runsOfDesign(await store.listRunHeads(), design);
  if (runs.length < 2 || runs.at(-1)?.id !== run.id) return undefined;
  return (await storeHistory(store, { design }))[0];
}

/** The gate's verdict on a report already computed (the run's own `gate:` thresholds over the defaults). */
export function verdictOfReport(r: ExperimentRunReport): ReportVerdict {
  return reportVerdict(
    r.run,
    r.analyzed ? { [r.run.experiment]: r.analyzed.report } : {},
    { total: r.document.counts.cells, unfinished: unfinishedCells(r.document.counts) },
    r.document.notComputable,
  );
}

/** The first screen in Markdown: a line per target with its verdict and key numbers. */
function glanceMarkdown(r: ExperimentRunReport): string {
  if (!(r.audit?.render.headline || r.audit?.render.document) || !r.analyzed) return '';
  const lines = r.document.verdicts.map(
    (t: DocumentVerdict) => `- **${t.subject}: ${t.verdict}** — ${t.numbers.map((n) => `${n.label} ${n.value}`).join('; ')}`,
  );
  return lines.length > 0 ? `**At a glance**\n\n${lines.join('\n')}\n\n` : '';
}

export function renderMarkdownReport(reports: readonly ExperimentRunReport[]): string {
  return reports
    .map((r) => {
      const head = `<!-- run ${r.run.id} (${r.run.experiment}) -->\n`;
      // Verdict, simulated banner and manifest first, so a pasted report cannot pass for a real one.
      const sim = verdictMarkdown(r.run, verdictOfReport(r));
      const { cost } = r.document;
      const spend = `Spend ${spendText(cost.pricedUsd, cost.unpricedCells)}; cells ${cellsText(r.document)}; ${cost.providerCacheHits} provider cache hits.\n\n`;
      const glance = glanceMarkdown(r);
      const materials = `\n${materialsMarkdown(runMaterialsOf(r.run.manifest.options))}`;
      if (r.audit && r.analyzed)
        return head + auditMarkdown(r.audit, r.analyzed, `${r.audit.title} — ${r.run.id}`).replace('\n\n', `\n\n${sim}${spend}${glance}`) + materials;
      return `${head}# ${r.run.experiment} — ${r.run.id}\n\n${sim}${spend}`;
    })
    .join('\n\n');
}

export function renderJsonReport(reports: readonly ExperimentRunReport[]): string {
  const verdicts = reports.map(verdictOfReport);
  return JSON.stringify(
    {
      schema: 'echolens.report/1',
      verdict: overallVerdict(verdicts.map((v) => v.verdict)),
      simulated: verdicts.some((v) => v.simulated),
      runs: reports.map((r, i) => ({
        runId: r.run.id,
        experiment: r.run.experiment,
        status: r.run.status,
        simulated: verdicts[i]?.simulated ?? false,
        verdict: verdicts[i],
        manifest: r.run.manifest,
        // Unknown cost is null in JSON, never 0; the priced part travels beside it.
        accounting: { ...r.accounting, spendUsd: spendOrNull(r.accounting.spendUsd, r.accounting.unpricedCells), pricedSpendUsd: r.accounting.spendUsd },
        document: r.document,
        ...(r.audit && r.analyzed ? { [r.audit.name]: r.audit.render.json(r.analyzed) } : {}),
      })),
    },
    null,
    2,
  );
}

const CSV_HEADER = ['run', 'experiment', ...AUDIT_CSV_COLUMNS];

/** Numbers in the CSV report: see `csvNumber` in core/csv.ts. */
export { csvNumber } from '../core/csv.js';

/** Long-format CSV of the report's estimates (one row per number with its CI). */
export function renderCsvReport(reports: readonly ExperimentRunReport[]): string {
  const rows: unknown[][] = [CSV_HEADER];
  for (const r of reports) {
    if (!r.audit || !r.analyzed) continue;
    for (const row of r.audit.render.csvRows(r.analyzed)) rows.push([r.run.id, r.run.experiment, ...row]);
  }
  return `${rows.map((row) => row.map(csvCell).join(',')).join('\n')}\n`;
}

export async function renderReport(
  store: RunStore,
  format: ReportFormat,
  options: { runIds?: readonly string[]; B?: number; title?: string } = {},
): Promise<string> {
  const reports = await collectReports(store, options.runIds, options.B ? { B: options.B } : {});
  switch (format) {
    case 'html':
      return renderHtmlReport(store, reports, options.title);
    case 'md':
      return renderMarkdownReport(reports);
    case 'json':
      return renderJsonReport(reports);
    case 'csv':
      return renderCsvReport(reports);
  }
}
