import { ConfigError } from '../core/errors.js';
import type { GapEstimate, Maybe, PersonaReport } from '../persona-drift/analysis.js';
import type { MemoryReport } from '../memory-drift/analysis.js';
import { collectMemoryObservations, memoryReport } from '../memory-drift/observations.js';
import { renderMemoryMarkdown } from '../memory-drift/report-markdown.js';
import { MEMORY_EXPERIMENT } from '../memory-drift/run.js';
import { renderPersonaMarkdown } from '../persona-drift/report-markdown.js';
import { collectPersonaObservations, PERSONA_EXPERIMENT, personaReport } from '../persona-drift/run.js';
import type { RunInfo, RunStore } from '../store/run-store.js';
import { html, page, type RawHtml } from './html.js';
import { memorySection } from './memory-section.js';
import { type PersonaSessionInfo, personaSection } from './persona-section.js';

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
  persona?: PersonaReport;
  memory?: MemoryReport;
}

function selectRuns(store: RunStore, runIds?: readonly string[]): RunInfo[] {
  if (runIds && runIds.length > 0) return runIds.map((id) => store.requireRun(id));
  const runs = store.listRuns().filter((r) => r.experiment === PERSONA_EXPERIMENT || r.experiment === MEMORY_EXPERIMENT);
  if (runs.length === 0) throw new ConfigError('the store holds no persona or memory run', { field: 'run' });
  return runs.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
}

export function collectReports(store: RunStore, runIds?: readonly string[], options: { B?: number } = {}): ExperimentRunReport[] {
  return selectRuns(store, runIds).map((run) => ({
    run,
    accounting: accountRun(store, run.id),
    ...(run.experiment === PERSONA_EXPERIMENT ? { persona: personaReport(store, run.id, options.B ? { B: options.B } : {}) } : {}),
    ...(run.experiment === MEMORY_EXPERIMENT ? { memory: memoryReport(store, run.id, options.B ? { B: options.B } : {}) } : {}),
  }));
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

export async function renderHtmlReport(store: RunStore, reports: readonly ExperimentRunReport[], title = 'echolens report'): Promise<string> {
  const sections: RawHtml[] = [];
  for (const r of reports) {
    const anchor = `run-${r.run.id}`;
    const heading = r.run.experiment === PERSONA_EXPERIMENT ? 'Persona drift (ContextEcho)' : 'Memory drift (DriftLens)';
    const body: RawHtml[] = [html`<h2 id="${anchor}">${heading} — ${r.run.id}</h2>`];
    if (isSimulated(r.run)) {
      body.push(html`<p class="banner"><strong>Simulated models.</strong> This run used <code>sim:</code> models: deterministic simulations with planted effects, for demos and tests. Its numbers measure no real model.</p>`);
    }
    body.push(manifestHtml(r.run, r.accounting));
    if (r.persona) {
      const sessions = ((r.run.manifest.options as { sessions?: PersonaSessionInfo[] } | undefined)?.sessions ?? []) as PersonaSessionInfo[];
      body.push(await personaSection(r.persona, collectPersonaObservations(store, r.run.id), sessions));
    }
    if (r.memory) body.push(await memorySection(r.memory, collectMemoryObservations(store, r.run.id)));
    sections.push(html`<section>${body}</section>`);
  }
  const nav = html`<nav class="toc">${reports.map((r) => html`<a href="#run-${r.run.id}">${r.run.experiment}: ${r.run.id}</a>`)}</nav>`;
  const body = html`<header class="top"><h1>${title}</h1><p class="muted">Generated by echolens. Self-contained: no network is needed to read this file, and it runs no script.</p>${nav}</header><main>${sections}</main>`;
  return page(title, body);
}

export function renderMarkdownReport(reports: readonly ExperimentRunReport[]): string {
  return reports
    .map((r) => {
      const head = `<!-- run ${r.run.id} (${r.run.experiment}) -->\n`;
      const sim = isSimulated(r.run) ? '> **Simulated models** (`sim:`): deterministic simulations with planted effects; these numbers measure no real model.\n\n' : '';
      const spend = `Spend $${r.accounting.spendUsd.toFixed(4)}; ${r.accounting.cells} cells; ${r.accounting.providerCacheHits} provider cache hits.\n\n`;
      if (r.persona) return head + renderPersonaMarkdown(r.persona, `Persona drift (ContextEcho) — ${r.run.id}`).replace('\n\n', `\n\n${sim}${spend}`);
      if (r.memory) return head + renderMemoryMarkdown(r.memory, `Memory drift (DriftLens) — ${r.run.id}`).replace('\n\n', `\n\n${sim}${spend}`);
      return `${head}# ${r.run.experiment} — ${r.run.id}\n\n${sim}${spend}`;
    })
    .join('\n\n');
}

export function renderJsonReport(reports: readonly ExperimentRunReport[]): string {
  return JSON.stringify(
    {
      schema: 'echolens.report/1',
      runs: reports.map((r) => ({
        runId: r.run.id,
        experiment: r.run.experiment,
        status: r.run.status,
        manifest: r.run.manifest,
        accounting: r.accounting,
        ...(r.persona ? { persona: r.persona } : {}),
        ...(r.memory ? { memory: r.memory } : {}),
      })),
    },
    null,
    2,
  );
}

const CSV_HEADER = ['run', 'experiment', 'table', 'target', 'judge', 'group', 'label', 'estimate', 'ci_low', 'ci_high', 'n', 'p', 'p_adjusted'];

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : String(value);
  // Defuse spreadsheet formula injection from untrusted labels.
  const safe = /^[=+\-@\t\r]/u.test(text) && typeof value !== 'number' ? `'${text}` : text;
  return /[",\n\r]/u.test(safe) ? `"${safe.replace(/"/gu, '""')}"` : safe;
}

function gapCells(gap: Maybe<GapEstimate>): unknown[] {
  return 'error' in gap ? [null, null, null, null] : [gap.estimate, gap.ci[0], gap.ci[1], gap.nReal + gap.nFiller];
}

/** Long-format CSV of the report's estimates (one row per number with its CI). */
export function renderCsvReport(reports: readonly ExperimentRunReport[]): string {
  const rows: unknown[][] = [CSV_HEADER];
  for (const r of reports) {
    const base = [r.run.id, r.run.experiment];
    if (r.memory) rows.push(...memoryCsvRows(base, r.memory));
    const p = r.persona;
    if (!p) continue;
    for (const d of p.drift) {
      const flip = 'error' in d.signFlip ? [null, null] : [d.signFlip.p, d.signFlip.pHolm];
      rows.push([...base, 'drift', d.target, d.judge, '', 'position-averaged', ...gapCells(d.gap), ...flip]);
      for (const pos of d.byPosition) rows.push([...base, 'drift_by_position', d.target, d.judge, pos.session, pos.position, ...gapCells(pos.gap), null, null]);
      for (const c of d.byCategory) rows.push([...base, 'drift_by_category', d.target, d.judge, '', c.category, ...gapCells(c.gap), null, null]);
      for (const a of d.referenceArms) rows.push([...base, 'reference_arm', d.target, d.judge, '', a.arm, ...gapCells(a.gap), null, null]);
    }
    for (const m of p.mitigations) {
      rows.push([...base, 'mitigation_vs_control', m.target, m.judge, m.distance, m.mitigation, ...gapCells(m.vsControl), null, null]);
      if (m.vsPlacebo) rows.push([...base, 'mitigation_vs_placebo', m.target, m.judge, m.distance, m.mitigation, ...gapCells(m.vsPlacebo), null, null]);
      rows.push([...base, 'mitigation_recovery', m.target, m.judge, m.distance, m.mitigation, m.recovery, null, null, m.n, null, null]);
    }
    for (const s of p.stressors) rows.push([...base, 'stressor_compliance', s.target, '', `${s.arm}/${s.mitigation}`, s.item, s.complianceRate, null, null, s.n, null, null]);
    for (const v of p.verbosity) {
      rows.push([...base, 'verbosity_median_ratio', v.target, '', '', v.item, v.medianRatio, null, null, v.pairs, null, null]);
      rows.push([...base, 'verbosity_conditional_ratio', v.target, '', '', v.item, v.conditionalRatio, null, null, v.conditionalPairs, null, null]);
      rows.push([...base, 'compliance_gap_pp', v.target, '', '', v.item, v.complianceGapPp, null, null, v.pairs, null, null]);
    }
    for (const c of p.contracts) rows.push([...base, 'contract_pass_rate', c.target, '', `${c.arm}/${c.mitigation}/${c.distance}`, c.item, c.passRate, null, null, c.n, null, null]);
    for (const c of p.contractContrasts) {
      const d = 'error' in c.difference ? [null, null, null] : [c.difference.estimate, c.difference.ci[0], c.difference.ci[1]];
      rows.push([...base, 'contract_contrast', c.target, '', c.distance, c.contrast, ...d, c.sessions, 'error' in c.signFlip ? null : c.signFlip.p, c.pHolm]);
    }
    for (const c of p.compaction) {
      const t = c.tost && !('error' in c.tost) ? c.tost : null;
      rows.push([...base, 'compaction_change', c.target, c.judge, '', 'post-pre', c.meanChange, t?.ci[0] ?? null, t?.ci[1] ?? null, c.events.length, t?.p ?? null, null]);
    }
    for (const a of p.counts.byArm) rows.push([...base, 'dropout_rate', a.target, '', `${a.arm}/${a.mitigation}`, a.surface, a.dropoutRate, null, null, a.done + a.empty + a.failed, null, null]);
  }
  return `${rows.map((row) => row.map(csvCell).join(',')).join('\n')}\n`;
}

function memoryCsvRows(base: unknown[], m: MemoryReport): unknown[][] {
  const rows: unknown[][] = [];
  const ok = <T,>(v: T | { error: string } | null): v is T => v !== null && !(typeof v === 'object' && v !== null && 'error' in v);
  for (const t of m.targets) {
    for (const metric of ['dtw', 'sri'] as const) {
      const a = t.metrics[metric];
      for (const c of a.conditions) {
        rows.push([...base, `condition_mean_${metric}`, t.target, '', c.tier, c.condition, c.mean, null, null, c.n, null, null]);
        if (ok(c.elevation)) rows.push([...base, `elevation_${metric}`, t.target, '', c.tier, c.condition, c.elevation.estimate, c.elevation.ci[0], c.elevation.ci[1], c.n, c.elevation.p, null]);
        if (ok(c.cohensD)) rows.push([...base, `cohens_d_${metric}`, t.target, '', c.tier, c.condition, c.cohensD, null, null, c.n, null, null]);
      }
      for (const d of a.dRel) {
        if (ok(d.result)) rows.push([...base, `d_rel_${metric}`, t.target, '', d.tier, d.condition, d.result.dRel, d.result.ci[0], d.result.ci[1], d.result.nTreat, d.result.p, d.result.pAdjusted]);
      }
    }
    if (ok(t.convergence) && ok(t.convergence.spearman)) {
      rows.push([...base, 'convergence_spearman', t.target, '', '', 'dtw~sri', t.convergence.spearman.rho, null, null, t.convergence.conditions.length, t.convergence.spearman.p, null]);
    }
  }
  return rows;
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

