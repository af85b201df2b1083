import type { PersonaReport } from '../persona-drift/analysis.js';
import type { MemoryReport } from '../memory-drift/analysis.js';
import { registerBuiltinAudits } from '../audits.js';
import { materialsMarkdown, materialsSummary, procedureSummary, runMaterialsOf } from '../materials/report.js';
import { ConfigError } from '../core/errors.js';
import { AUDIT_CSV_COLUMNS, type AnalyzedRun, type AnyAudit } from '../experiment/audit.js';
import { findAudit, listAudits } from '../experiment/registry.js';
import { analyzeAuditRun } from '../experiment/run-audit.js';
import type { RunInfo, RunStore } from '../store/run-store.js';
import { reportVerdict, verdictMarkdown, type ReportVerdict } from '../gate/verdict.js';
import { html, page, type RawHtml } from './html.js';

/**
 * `echolens report <run.db>`: every run in a store as one self-contained HTML
 * page, or Markdown, JSON or CSV carrying the same numbers.
 */

export type ReportFormat = 'html' | 'md' | 'json' | 'csv';

/** Cost, tokens and cache use of a run's cells. */
export interface RunAccounting {
  cells: number;
  byStatus: Record<string, number>;
  spendUsd: number;
  unpricedCells: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  /** Cells whose provider reported a prompt-cache read. */
  providerCacheHits: number;
  /** Cells whose answer was reused from another run in the same store. */
  sharedWithOtherRuns: number;
}

export function accountRun(store: RunStore, runId: string): RunAccounting {
  const cells = store.cellsOfRun(runId);
  const byStatus: Record<string, number> = {};
  const account: RunAccounting = {
    cells: cells.length,
    byStatus,
    spendUsd: 0,
    unpricedCells: 0,
    inputTokens: 0,
    outputTokens: 0,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    providerCacheHits: 0,
    sharedWithOtherRuns: 0,
  };
  const seen = new Set<string>();
  for (const cell of cells) {
    if (seen.has(cell.key)) continue;
    seen.add(cell.key);
    const r = cell.result;
    byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
    if (r.costUsd === null && r.usage.inputTokens + r.usage.outputTokens > 0) account.unpricedCells += 1;
    account.spendUsd += r.costUsd ?? 0;
    account.inputTokens += r.usage.inputTokens;
    account.outputTokens += r.usage.outputTokens;
    account.cachedInputTokens += r.usage.cachedInputTokens;
    account.cacheWriteTokens += r.usage.cacheWriteTokens;
    if (r.usage.cachedInputTokens > 0) account.providerCacheHits += 1;
  }
  account.cells = seen.size;
  return account;
}

export interface ExperimentRunReport {
  run: RunInfo;
  accounting: RunAccounting;
  /** The registered audit of the run's experiment (none: the run is listed without analysis). */
  audit?: AnyAudit;
  /** What the audit collected and its analysis. */
  analyzed?: AnalyzedRun<unknown, unknown>;
  /**
   * The analysis is also reachable under the experiment's name (`report.persona`,
   * `report.memory`), the fields this interface had before the audit registry.
   */
  [experiment: string]: unknown;
}

function selectRuns(store: RunStore, runIds?: readonly string[]): RunInfo[] {
  if (runIds && runIds.length > 0) return runIds.map((id) => store.requireRun(id));
  const names = listAudits().map((a) => a.name);
  const runs = store.listRuns().filter((r) => names.includes(r.experiment));
  if (runs.length === 0) throw new ConfigError(`the store holds no ${names.join(' or ')} run`, { field: 'run' });
  return runs.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
}

export function collectReports(store: RunStore, runIds?: readonly string[], options: { B?: number } = {}): ExperimentRunReport[] {
  registerBuiltinAudits();
  return selectRuns(store, runIds).map((run) => {
    const audit = findAudit(run.experiment);
    const entry: ExperimentRunReport = { run, accounting: accountRun(store, run.id) };
    if (audit) {
      const analyzed = analyzeAuditRun(audit, store, run, options.B ? { B: options.B } : {});
      entry.audit = audit;
      entry.analyzed = analyzed;
      entry[audit.name] = analyzed.report;
    }
    return entry;
  });
}

function manifestHtml(run: RunInfo, accounting: RunAccounting): RawHtml {
  const m = run.manifest;
  const config = (m.config ?? {}) as Record<string, unknown>;
  const entries: Array<[string, unknown]> = [
    ['run', run.id],
    ['experiment', m.experiment],
    ['status', run.status],
    ['started / ended', `${run.startedAt} / ${run.endedAt ?? '—'}`],
    ['targets', JSON.stringify(config.targets ?? [])],
    ['judges / labelers', JSON.stringify(config.judges ?? config.labelers ?? config.labeler ?? [])],
    ['decoding', JSON.stringify(config.decoding ?? {})],
    ['system prompts', JSON.stringify(config.systemPrompts ?? config.systemPrompt ?? [])],
    ['materials', materialsSummary(runMaterialsOf(m.options))],
    ['procedure', procedureSummary(runMaterialsOf(m.options))],
    ['seed', m.seed],
    ['versions', JSON.stringify(m.versions)],
    ['git commit', m.gitCommit ?? 'unknown'],
    ['cells', `${accounting.cells} (${Object.entries(accounting.byStatus).map(([k, v]) => `${k} ${v}`).join(', ')})`],
    ['spend', `$${accounting.spendUsd.toFixed(4)}${accounting.unpricedCells > 0 ? ` + ${accounting.unpricedCells} cells without a known price` : ''}`],
    ['tokens', `${accounting.inputTokens.toLocaleString('en-US')} in (${accounting.cachedInputTokens.toLocaleString('en-US')} from provider cache, ${accounting.cacheWriteTokens.toLocaleString('en-US')} written), ${accounting.outputTokens.toLocaleString('en-US')} out`],
    ['provider cache hits', `${accounting.providerCacheHits} cells`],
  ];
  return html`<dl class="manifest">${entries.map(([k, v]) => html`<dt>${k}</dt><dd>${String(v)}</dd>`)}</dl>
<details><summary>Full configuration</summary><pre>${JSON.stringify(m.config, null, 2)}</pre></details>`;
}

function isSimulated(run: RunInfo): boolean {
  const config = (run.manifest.config ?? {}) as Record<string, unknown>;
  const models = [config.targets, config.judges, config.labeler, config.labelers].flat().filter((x): x is string => typeof x === 'string');
  return models.some((m) => m.startsWith('sim:'));
}

export async function renderHtmlReport(_store: RunStore, reports: readonly ExperimentRunReport[], title = 'echolens report'): Promise<string> {
  const sections: RawHtml[] = [];
  for (const r of reports) {
    const anchor = `run-${r.run.id}`;
    const heading = r.audit?.title ?? r.run.experiment;
    const body: RawHtml[] = [html`<h2 id="${anchor}">${heading} — ${r.run.id}</h2>`];
    if (isSimulated(r.run)) {
      body.push(html`<p class="banner"><strong>Simulated models.</strong> This run used <code>sim:</code> models: deterministic simulations with planted effects, for demos and tests. Its numbers measure no real model.</p>`);
    }
    body.push(manifestHtml(r.run, r.accounting));
    if (r.audit && r.analyzed) body.push(await r.audit.render.htmlSection(r.analyzed));
    sections.push(html`<section>${body}</section>`);
  }
  const nav = html`<nav class="toc">${reports.map((r) => html`<a href="#run-${r.run.id}">${r.run.experiment}: ${r.run.id}</a>`)}</nav>`;
  const body = html`<header class="top"><h1>${title}</h1><p class="muted">Generated by echolens. Self-contained: no network is needed to read this file, and it runs no script.</p>${nav}</header><main>${sections}</main>`;
  return page(title, body);
}

/** The gate's verdict on a report already computed (the run's own `gate:` thresholds over the defaults). */
export function verdictOfReport(r: ExperimentRunReport): ReportVerdict {
  const unfinished = (r.accounting.byStatus.failed ?? 0) + (r.accounting.byStatus.pending ?? 0);
  return reportVerdict(
    r.run,
    { ...(r.persona ? { persona: r.persona as PersonaReport } : {}), ...(r.memory ? { memory: r.memory as MemoryReport } : {}) },
    { total: r.accounting.cells, unfinished },
  );
}

export function renderMarkdownReport(reports: readonly ExperimentRunReport[]): string {
  return reports
    .map((r) => {
      const head = `<!-- run ${r.run.id} (${r.run.experiment}) -->\n`;
      // Verdict, simulated banner and manifest first, so a pasted report cannot pass for a real one.
      const sim = verdictMarkdown(r.run, verdictOfReport(r));
      const spend = `Spend $${r.accounting.spendUsd.toFixed(4)}; ${r.accounting.cells} cells; ${r.accounting.providerCacheHits} provider cache hits.\n\n`;
      const materials = `\n${materialsMarkdown(runMaterialsOf(r.run.manifest.options))}`;
      if (r.audit && r.analyzed) return head + r.audit.render.markdown(r.analyzed, `${r.audit.title} — ${r.run.id}`).replace('\n\n', `\n\n${sim}${spend}`) + materials;
      return `${head}# ${r.run.experiment} — ${r.run.id}\n\n${sim}${spend}`;
    })
    .join('\n\n');
}

export function renderJsonReport(reports: readonly ExperimentRunReport[]): string {
  const verdicts = reports.map(verdictOfReport);
  return JSON.stringify(
    {
      schema: 'echolens.report/1',
      verdict: verdicts.some((v) => v.verdict === 'fail') ? 'fail' : 'pass',
      simulated: verdicts.some((v) => v.simulated),
      runs: reports.map((r, i) => ({
        runId: r.run.id,
        experiment: r.run.experiment,
        status: r.run.status,
        simulated: verdicts[i]?.simulated ?? false,
        verdict: verdicts[i],
        manifest: r.run.manifest,
        accounting: r.accounting,
        ...(r.audit && r.analyzed ? { [r.audit.name]: r.audit.render.json(r.analyzed) } : {}),
      })),
    },
    null,
    2,
  );
}

const CSV_HEADER = ['run', 'experiment', ...AUDIT_CSV_COLUMNS];

/**
 * A number for the CSV report: integers (counts) exactly, other values to 6 significant
 * digits — far below any estimate's standard error, and free of float noise like
 * 0.30000000000000004. Non-finite values are empty cells.
 */
export function csvNumber(value: number): string {
  if (!Number.isFinite(value)) return '';
  if (Number.isInteger(value)) return String(value);
  return String(Number(value.toPrecision(6)));
}

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'number' ? csvNumber(value) : String(value);
  // Defuse spreadsheet formula injection from untrusted labels.
  const safe = /^[=+\-@\t\r]/u.test(text) && typeof value !== 'number' ? `'${text}` : text;
  return /[",\n\r]/u.test(safe) ? `"${safe.replace(/"/gu, '""')}"` : safe;
}

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
  const reports = collectReports(store, options.runIds, options.B ? { B: options.B } : {});
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

