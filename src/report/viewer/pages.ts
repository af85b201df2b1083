import { designsOf, measurementOf, runsOfDesign } from '../../experiment/measurement.js';
import { runIncompleteness } from '../../experiment/run-completeness.js';
import type { ChatMessage, ModelRequest } from '../../models/types.js';
import type { RunInfo } from '../../store/run-store.js';
import type { CellResult } from '../../store/types.js';
import { escapeHtml, html, type RawHtml, REPORT_STYLE, raw, table } from '../html.js';
import type { AuditSummaryLine } from '../../experiment/audit.js';
import { COMPARE_CAPTION } from '../compare.js';
import { differenceText, type RunComparison } from '../compare-runs.js';
import { runName } from '../run-name.js';
import {
  type CellFilter,
  type IndexedCell,
  judgeCellsOf,
  type PairedCell,
  type RunAnalysis,
  type RunIndex,
  scoreOf,
  type ViewerData,
  type ViewerStore,
} from './data.js';
import { type CellMeasure, type CellPair, type CellReferences, type Factor, labelText } from './design.js';
import { runListStatus, runListVerdict } from './run-list.js';
import { mapSequential } from '../../core/map-sequential.js';
import { isSimulatedRun } from '../../gate/run-info.js';

/**
 * Server-rendered viewer pages. Every value goes through the escaping `html`
 * template; the only script is /app.js (the live probe and small conveniences),
 * which writes data with textContent.
 */

export const VIEWER_STYLE = `${REPORT_STYLE}
header.top nav a { margin-right: 16px; color: var(--accent); text-decoration: none; font-weight: 600; }
form.filters { display: flex; flex-wrap: wrap; gap: 8px 14px; align-items: flex-end; margin: 12px 0; padding: 10px 12px; background: #f6f8fa; border: 1px solid var(--line); border-radius: 6px; }
form.filters label, .controls label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); gap: 2px; }
form.filters select, form.filters input, .controls select, .controls textarea, .controls input { font: inherit; font-size: 13.5px; padding: 3px 6px; }
form.filters input.score-input { width: 5em; }
button { font: inherit; font-size: 14px; padding: 4px 14px; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button:disabled { opacity: .5; cursor: default; }
main { max-width: none; }
div.snippet { min-width: 260px; max-width: 560px; white-space: pre-wrap; word-break: break-word; font-size: 12.5px; }
.msg { border: 1px solid var(--line); border-radius: 6px; margin: 6px 0; }
.msg .role { font-size: 12px; color: var(--muted); background: #f6f8fa; padding: 2px 8px; border-bottom: 1px solid var(--line); }
.msg.role-system .role { background: #fff8c5; }
.msg.role-assistant .role { background: #eef6ff; }
.msg pre, pre.text { white-space: pre-wrap; word-break: break-word; margin: 0; padding: 6px 8px; font: 12.5px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; max-height: 420px; overflow: auto; }
.score { display: inline-block; min-width: 1.6em; text-align: center; border-radius: 4px; padding: 0 4px; font-weight: 600; background: #eef2f7; }
.score.s0 { background: #ffd7d5; } .score.s1 { background: #ffe7c2; } .score.s2 { background: #e6f4d7; } .score.s3 { background: #d2f0dc; }
.controls { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap: 10px 16px; margin: 12px 0; }
.controls .wide { grid-column: 1 / -1; }
.controls textarea { width: 100%; min-height: 4.5em; }
.controls .row { display: flex; gap: 16px; align-items: center; }
.controls .row label { flex-direction: row; align-items: center; gap: 6px; font-size: 13.5px; color: var(--fg); }
.arms { display: grid; grid-template-columns: repeat(auto-fit, minmax(280px, 1fr)); gap: 12px; margin-top: 12px; }
.arm { border: 1px solid var(--line); border-radius: 6px; display: flex; flex-direction: column; }
.arm[hidden] { display: none; }
.arm h3 { margin: 0; padding: 6px 10px; font-size: 15px; background: #f6f8fa; border-bottom: 1px solid var(--line); }
.arm .context { font-size: 12px; color: var(--muted); padding: 4px 10px; }
.arm pre.stream { min-height: 8em; flex: 1; }
.arm .verdict { border-top: 1px solid var(--line); padding: 6px 10px; font-size: 13.5px; min-height: 2.4em; }
.arm .verdict .reason { color: var(--muted); }
.status-line { color: var(--muted); font-size: 13px; min-height: 1.4em; }
.error { color: var(--bad); }
.pager a { margin-right: 10px; }
code.run-id { font-size: 11.5px; }
section.headline table { max-width: 100%; }
.headline-value { font-variant-numeric: tabular-nums; font-weight: 600; }
section.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 520px), 1fr)); gap: 12px; margin: 12px 0; }
section.charts figure { margin: 0; min-width: 0; }
section.charts svg { max-width: 100%; height: auto; }
.links a { font-weight: 600; }
nav.cell-nav { margin: 8px 0 12px; font-size: 14px; }
nav.cell-nav a { font-weight: 600; }
.pair { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 340px), 1fr)); gap: 12px; }
.pair .side { border: 1px solid var(--line); border-radius: 6px; min-width: 0; }
.pair .side h3 { margin: 0; padding: 6px 10px; font-size: 14px; background: #f6f8fa; border-bottom: 1px solid var(--line); }
.pair .side p { padding: 0 10px; }
.pair .this-side h3 { background: #eef6ff; }
.run-verdict { font-size: 13px; }
.run-verdict.tone-alert { color: var(--bad); font-weight: 600; }
.run-verdict.tone-ok { color: #1a7f37; }
.run-status { font-weight: 600; }
.run-status.status-incomplete, .run-status.status-failed { color: var(--bad); }
section.exchange h2 { margin-top: 12px; }
section.exchange pre.prompt { background: #f6f8fa; border: 1px solid var(--line); border-radius: 6px; max-height: 240px; }
section.exchange pre.response { border: 1px solid var(--accent); border-radius: 6px; max-height: 520px; }
p.cell-facts { font-size: 13.5px; }
details.labels summary { cursor: pointer; color: var(--muted); }
`;

export interface PageContext {
  token: string;
  simulated: boolean;
}

export function viewerPage(title: string, body: RawHtml, context: PageContext, scripted = true): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="echolens-token" content="${escapeHtml(context.token)}">
<title>${escapeHtml(title)} — echolens viewer</title>
<style>${VIEWER_STYLE}</style>
${scripted ? '<script src="/app.js" defer></script>' : ''}
</head>
<body>
<header class="top"><h1>${escapeHtml(title)}</h1><nav><a href="/">Runs</a><a href="/probe">Live probe</a></nav></header>
<main>
${body.html}
</main>
</body>
</html>
`;
}

const qs = (params: Record<string, string | number | undefined>) =>
  Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');

const runHref = (store: number, runId: string, extra: Record<string, string | number | undefined> = {}) => `/run?${qs({ s: store, r: runId, ...extra })}`;
const cellHref = (store: number, runId: string, key: string, filter: Record<string, string | number | undefined> = {}) =>
  `/cell?${qs({ s: store, r: runId, k: key, ...filter })}`;
const runRef = (store: number, runId: string) => `${store}:${runId}`;

function scoreBadge(score: number | null | undefined): RawHtml {
  if (score === null || score === undefined) return html`<span class="score muted">—</span>`;
  return html`<span class="score s${score}">${score}</span>`;
}

export function snippet(text: string | null, max = 160): string {
  if (text === null) return '';
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function modelsOf(run: { manifest: { config: unknown } }, field: string): string[] {
  const value = ((run.manifest.config ?? {}) as Record<string, unknown>)[field];
  return (Array.isArray(value) ? value : [value]).filter((x): x is string => typeof x === 'string');
}

// ---- runs ----

/** Cell counts of a run as every page states them: all cells = answers + judge/labeler calls. */
export interface RunCounts {
  total: number;
  answers: number;
  auxiliary: number;
}

export function runCounts(index: RunIndex): RunCounts {
  return { total: index.run.counts.total, answers: index.cells.length, auxiliary: index.auxiliaryEntries };
}

function countsText(c: RunCounts): string {
  const plural = (n: number, word: string) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;
  return `${plural(c.total, 'cell')}: ${plural(c.answers, 'model answer')}${c.auxiliary > 0 ? ` + ${plural(c.auxiliary, 'judge/labeler call')}` : ''}`;
}

export async function runsPage(data: ViewerData, context: PageContext): Promise<string> {
  const runs = await data.runs();
  const rows = await mapSequential(runs, async ({ store, run }) => {
    const stages = await store.store.stages(run.id);
    return { store, run, index: await data.run(store.index, run.id), stages, verdict: await runListVerdict(data, store.index, run, stages) };
  });
  const list = table(
    rows,
    [
      {
        header: 'run',
        value: (r) =>
          html`<a class="run-link" href="${runHref(r.store.index, r.run.id)}">${runName(r.run)}</a>${isSimulatedRun(r.run) ? html` <span class="tag simulated-mark" title="sim: models: planted effects, nothing real was measured">SIMULATED</span>` : ''}<br><code class="muted run-id">${r.run.id}</code>`,
      },
      { header: 'audit', value: (r) => r.run.experiment },
      { header: 'store', value: (r) => html`<span title="${r.store.file}">${r.store.name}</span>` },
      {
        header: 'verdict',
        value: (r) => {
          const verdict = r.verdict;
          return html`<span class="run-verdict tone-${verdict.tone}">${verdict.lines.map((l, i) => html`${i > 0 ? html`<br>` : ''}${l}`)}</span>`;
        },
      },
      {
        header: 'status',
        value: (r) => {
          const status = runListStatus(r.run, r.stages);
          return html`<span class="run-status status-${status.word}" title="${status.detail}">${status.word}</span>${status.word === 'complete' ? '' : html`<br><span class="muted">${status.detail}</span>`}`;
        },
      },
      { header: 'started', value: (r) => r.run.startedAt.replace('T', ' ').slice(0, 16) },
      { header: 'targets', value: (r) => modelsOf(r.run, 'targets').join(', ') },
      {
        header: 'cells',
        value: (r) =>
          html`<span class="run-counts">${r.index ? countsText(runCounts(r.index)) : `${r.run.counts.total} cells`}</span>${r.run.counts.failed + r.run.counts.pending > 0 ? html`<br><span class="muted">${r.run.counts.failed} failed, ${r.run.counts.pending} pending</span>` : ''}`,
        numeric: true,
      },
    ],
    'No runs: make a store with echolens demo (or a run command), then run echolens view where ./runs or ./echolens-demo is, or name the stores (echolens view runs/persona.db).',
  );
  const options = runs.map(({ store, run }) => html`<option value="${runRef(store.index, run.id)}">${runName(run)} (${run.experiment}, ${run.id})</option>`);
  const compare =
    runs.length >= 2
      ? html`<h2>Compare two runs</h2><p class="note">Runs of the same audit only: each headline number and B − A with a paired bootstrap interval over the design units both runs share.</p><form class="filters" method="get" action="/compare"><label>run A<select name="a">${options}</select></label><label>run B<select name="b">${options}</select></label><button type="submit">Compare</button></form>`
      : html``;
  // Designs measured more than once: their trend pages.
  const runsByStore = await mapSequential(data.stores, async (s) => ({ s, runs: await s.store.listRuns() }));
  const trends = runsByStore.flatMap(({ s, runs: storeRuns }) =>
    [...designsOf(storeRuns)].flatMap(([design, list]) =>
      list.length >= 2
        ? [
            html`<li><a class="trend-link" href="/trend?${qs({ s: s.index, d: design })}">${list[0]?.experiment} design ${design}</a> <span class="muted">(${list.length} measurements, ${s.name})</span></li>`,
          ]
        : [],
    ),
  );
  const overTime = trends.length > 0 ? html`<h2>Over time</h2><ul>${trends}</ul>` : html``;
  const stores = html`<p class="muted">Stores: ${data.stores.map((s, i) => html`${i > 0 ? ', ' : ''}<span title="${s.file}">${s.name}</span>`)}${data.stores.length === 0 ? 'none' : ''}.</p>`;
  return viewerPage('Runs', html`${stores}${list}${overTime}${compare}`, context);
}

// ---- one run: headline, charts, filters and cells ----

/**
 * The banner of a run's pages while the run is incomplete: the refusal the report and the gate
 * print (run-completeness.ts). The pages still show what the store holds; the banner says it is partial.
 */
export async function incompleteRunBanner(store: ViewerStore, run: RunInfo): Promise<RawHtml> {
  const message = await runIncompleteness(store.store, run);
  if (message === null) return html``;
  return html`<p class="banner incomplete-run" id="incomplete-run"><strong>${message}.</strong> What this page shows is partial: the counts and numbers change when the run finishes, and the report and the gate refuse the run until then.</p>`;
}

export const PAGE_SIZE = 100;

export interface RunPageQuery {
  filter: CellFilter;
  page: number;
  /** Title of the run's audit when it has one: the page links to its analysis. */
  analysis?: string;
}

/** What the run page shows besides its cells. */
export interface RunView {
  factors: readonly Factor[];
  measures: readonly CellMeasure[];
  /** The audit's headline lines (viewer summary). */
  headline: readonly AuditSummaryLine[];
  /** The audit's charts, as its report section renders them. */
  charts: readonly RawHtml[];
  /** Why there is no analysis (no registered audit, or it failed). */
  analysisError?: string;
}

/** The query string of a filter (the run page's and the cell page's links carry it). */
export function filterParams(f: CellFilter): Record<string, string | number | undefined> {
  const ranges: Record<string, number | undefined> = {};
  for (const [name, r] of Object.entries(f.ranges ?? {})) {
    ranges[`min_${name}`] = r.min;
    ranges[`max_${name}`] = r.max;
  }
  return { ...f.labels, ...ranges, status: f.status, judge: f.judge, min: f.minScore, max: f.maxScore, q: f.text };
}

/** The `<figure>`s with an SVG chart of a rendered report section (bare SVGs when it has none). */
export function chartsOf(section: RawHtml, max = 3): RawHtml[] {
  const text = section.html;
  const figures = [...text.matchAll(/<figure\b[\s\S]*?<\/figure>/gu)].map((m) => m[0]).filter((f) => f.includes('<svg'));
  const found = figures.length > 0 ? figures : [...text.matchAll(/<svg\b[\s\S]*?<\/svg>/gu)].map((m) => m[0]);
  return found.slice(0, max).map((f) => raw(f));
}

/** Labels determined by another factor: offered as filters, not shown as columns. */
const DERIVED_LABELS = new Set(['tier', 'role', 'domain', 'subdomain', 'stimulus_id', 'category', 'task', 'sameTask', 'mode', 'systemPrompt']);

const measureText = (v: number | null | undefined) => (v === null || v === undefined ? '—' : v.toFixed(3));

export async function runPage(
  store: ViewerStore,
  index: RunIndex,
  cells: readonly IndexedCell[],
  query: RunPageQuery,
  view: RunView,
  context: PageContext,
): Promise<string> {
  const run = index.run;
  const f = query.filter;
  const counts = runCounts(index);
  const options = (values: readonly string[], selected: string | undefined) =>
    values.map((v) => html`<option value="${v}"${v === selected ? raw(' selected') : ''}>${v}</option>`);
  const selects = view.factors.map(
    (factor) =>
      html`<label>${factor.label}<select name="${factor.name}"><option value="">any</option>${options(factor.values, f.labels[factor.name] ?? '')}</select></label>`,
  );
  const judgeSelect =
    index.judges.length > 0
      ? html`<label>judge<select name="judge">${options(index.judges, f.judge ?? index.judges[0])}</select></label>
<label>score ≥<input class="score-input" type="number" name="min" min="0" max="3" step="1" value="${f.minScore ?? ''}"></label>
<label>score ≤<input class="score-input" type="number" name="max" min="0" max="3" step="1" value="${f.maxScore ?? ''}"></label>`
      : html``;
  const rangeInputs = view.measures.map(
    (m) =>
      html`<label>${m.label} ≥<input class="score-input" type="number" name="min_${m.name}" step="any" value="${f.ranges?.[m.name]?.min ?? ''}"></label><label>${m.label} ≤<input class="score-input" type="number" name="max_${m.name}" step="any" value="${f.ranges?.[m.name]?.max ?? ''}"></label>`,
  );
  const statusSelect = html`<label>status<select name="status"><option value="">any</option>${options(['done', 'empty', 'failed', 'pending'], f.status)}</select></label>`;
  const form = html`<form class="filters" id="filters" method="get" action="/run"><input type="hidden" name="s" value="${store.index}"><input type="hidden" name="r" value="${run.id}">${selects}${statusSelect}${judgeSelect}${rangeInputs}<label>response contains<input type="search" name="q" value="${f.text ?? ''}"></label><button type="submit">Filter</button> <a href="${runHref(store.index, run.id)}">clear</a></form>`;

  // Columns: the factors with more than one value (the target always), then the numbers; labels
  // that follow from a shown one (a condition's tier, a question's domain) are filters only.
  const columns = view.factors.filter((factor) => (factor.values.length > 1 || factor.name === 'target') && !DERIVED_LABELS.has(factor.name));
  const params = filterParams(f);
  const start = query.page * PAGE_SIZE;
  const shown = cells.slice(start, start + PAGE_SIZE);
  const cellTable = table(
    shown,
    [
      { header: '#', value: (c) => html`<a class="cell-link" href="${cellHref(store.index, run.id, c.key, params)}">${c.ordinal}</a>`, numeric: true },
      ...columns.map((factor) => ({ header: factor.label, value: (c: IndexedCell) => labelText(c.labels, factor.name) })),
      { header: 'status', value: (c) => c.status },
      ...(index.judges.length > 0 ? [{ header: 'score', value: (c: IndexedCell) => scoreBadge(scoreOf(index, c.key, f.judge)?.score) }] : []),
      ...view.measures.map((m) => ({ header: m.label, value: (c: IndexedCell) => measureText(m.values.get(c.key)), numeric: true })),
      {
        header: 'response',
        value: (c) =>
          html`<div class="snippet">${snippet(c.text)}${c.toolCalls?.length ? html`${c.text ? ' ' : ''}<span class="muted">[tool call: ${c.toolCalls.join(', ')}]</span>` : ''}</div>`,
      },
    ],
    'No cell matches these filters.',
  );
  const pages = Math.max(1, Math.ceil(cells.length / PAGE_SIZE));
  const pager =
    pages > 1
      ? html`<p class="pager">Page ${query.page + 1} of ${pages}: ${query.page > 0 ? html`<a href="${runHref(store.index, run.id, { ...params, page: query.page - 1 })}">previous</a>` : ''}${query.page + 1 < pages ? html`<a href="${runHref(store.index, run.id, { ...params, page: query.page + 1 })}">next</a>` : ''}</p>`
      : html``;
  const simulated = isSimulatedRun(run);
  const headline =
    view.headline.length > 0
      ? html`<section class="headline" id="headline"><h2>Headline</h2>${table(view.headline, [
          { header: 'number', value: (l) => l.label },
          { header: 'value', value: (l) => html`<span class="headline-value">${l.value}</span>` },
        ])}</section>`
      : html`<p class="muted" id="headline-missing">${view.analysisError ?? 'No headline number.'}</p>`;
  const charts = view.charts.length > 0 ? html`<section class="charts" id="charts">${view.charts}</section>` : html``;
  // A design measured more than once: its trend page (docs/over-time.md).
  const design = measurementOf(run).designId;
  const measurements = runsOfDesign(await store.store.listRunHeads(), design).length;
  const trendLink =
    measurements >= 2 ? html` · <a id="trend-link" href="/trend?${qs({ s: store.index, d: design })}">over time (${measurements} measurements)</a>` : '';
  const links = query.analysis
    ? html`<p class="links"><a id="report-link" href="${reportHref(store.index, run.id)}">Full HTML report</a> · <a id="analysis-link" href="${analysisHref(store.index, run.id)}">every table and chart (${query.analysis})</a>${trendLink}</p>`
    : html``;
  const measureNotes =
    view.measures.length > 0
      ? html`<p class="note">${view.measures.map((m, i) => html`${i > 0 ? '; ' : ''}<strong>${m.label}</strong>: ${m.description}`)}.</p>`
      : html``;
  const body = html`<p class="muted">run <code id="run-id">${run.id}</code> · ${store.name} · ${run.experiment} · ${run.status} · started ${run.startedAt}</p>
${await incompleteRunBanner(store, run)}
<p id="run-counts">${countsText(counts)}.</p>
${simulated ? html`<p class="banner"><strong>Simulated models.</strong> This run used <code>sim:</code> models: deterministic simulations with planted effects. Its numbers measure no real model.</p>` : ''}
${headline}${links}${charts}
<h2>Cells</h2>
${form}${measureNotes}
<p class="muted" id="match-count">${cells.length} of ${counts.answers} model answers match.</p>
${pager}${cellTable}${pager}`;
  return viewerPage(runName(run), body, context);
}

// ---- one cell ----

function messagesHtml(messages: readonly ChatMessage[]): RawHtml {
  return html`${messages.map(
    (m, i) =>
      html`<div class="msg role-${m.role}"><div class="role">${i + 1}. ${m.role} · ${m.content.length.toLocaleString('en-US')} chars</div><pre>${m.content}</pre></div>`,
  )}`;
}

/** Where a cell is in the filtered list, and its neighbours. */
export interface CellNeighbours {
  position: number;
  total: number;
  previous?: IndexedCell;
  next?: IndexedCell;
  filter: CellFilter;
}

export interface CellView {
  neighbours?: CellNeighbours;
  /** The paired cell, with its stored result (for tool calls). */
  pair?: CellPair & { result?: CellResult | undefined };
  /** The cells scored against this one (e.g. a memory reference answer): from the audit's viewer member. */
  referencedBy?: CellReferences;
  measures: readonly CellMeasure[];
}

/** What a model answered: its text, then any tool calls (JSON), escaped by the template. */
function answerOf(text: string | null, result: CellResult | undefined): string {
  const calls = result?.toolCalls ?? [];
  const parts = [text ?? '', ...calls.map((c) => `tool call: ${JSON.stringify(c, null, 2)}`)].filter((p) => p !== '');
  return parts.length > 0 ? parts.join('\n\n') : '(no text)';
}

/** The message the model answered: the last user turn (a probe, a question), else the last message. */
function lastUserMessage(messages: readonly ChatMessage[]): string | undefined {
  const users = messages.filter((m) => m.role === 'user');
  return (users.at(-1) ?? messages.at(-1))?.content;
}

function labelsLine(cell: IndexedCell, names: readonly string[]): string {
  return names
    .map((n) => labelText(cell.labels, n))
    .filter((v) => v !== '')
    .join(' · ');
}

export async function cellPage(
  store: ViewerStore,
  index: RunIndex,
  cell: IndexedCell,
  request: ModelRequest | undefined,
  result: CellResult | undefined,
  view: CellView,
  context: PageContext,
): Promise<string> {
  const run = index.run;
  const labelRows = Object.entries(cell.labels).map(([name, value]) => ({ name, value }));
  const verdicts = [...(index.verdicts.get(cell.key)?.values() ?? [])];
  const attempts = judgeCellsOf(index, cell.key);
  const judgeHtml =
    verdicts.length > 0
      ? html`<h2>Judge</h2>${verdicts.map(
          (
            v,
          ) => html`<div class="verdict-block"><p>${scoreBadge(v.score)} <strong>${v.judge}</strong>${v.label ? html` · ${v.label}` : ''}${v.attempt > 0 ? html` · re-ask ${v.attempt}` : ''}</p>
<p class="judge-reason">${v.error ? html`<span class="error">unparseable verdict: ${v.error}</span>` : v.reason}</p>
<details><summary>Raw judge output</summary><pre class="text">${v.raw}</pre></details></div>`,
        )}${attempts.length > verdicts.length ? html`<p class="muted">${attempts.length} judge calls in all (re-asks after unparseable output).</p>` : ''}`
      : html``;
  const usage = result
    ? html`<p class="muted">status ${result.status} · ${result.attempts} attempt(s) · ${result.usage.inputTokens.toLocaleString('en-US')} tokens in (${result.usage.cachedInputTokens.toLocaleString('en-US')} cached), ${result.usage.outputTokens.toLocaleString('en-US')} out · ${result.latencyMs === null ? 'latency —' : `${result.latencyMs} ms`} · ${result.costUsd === null ? 'cost unknown (no price)' : `$${result.costUsd.toFixed(5)}`}${result.finishReason ? ` · finish ${result.finishReason}` : ''}${result.errorMessage ? html` · <span class="error">${result.errorClass}: ${result.errorMessage}</span>` : ''}</p>`
    : html``;
  const nb = view.neighbours;
  const params = nb ? filterParams(nb.filter) : {};
  const filtered = nb && Object.values(params).some((v) => v !== undefined && v !== '');
  const nav = nb
    ? html`<nav class="cell-nav" id="cell-nav">${nb.previous ? html`<a id="prev-cell" href="${cellHref(store.index, run.id, nb.previous.key, params)}">← previous</a>` : html`<span class="muted">← previous</span>`} · <span id="cell-position">${nb.position} of ${nb.total}</span> ${filtered ? 'matching cells' : 'model answers'} · ${nb.next ? html`<a id="next-cell" href="${cellHref(store.index, run.id, nb.next.key, params)}">next →</a>` : html`<span class="muted">next →</span>`} · <a href="${runHref(store.index, run.id, params)}">back to the list</a></nav>`
    : html``;
  const numbers = (c: IndexedCell) => {
    const score = scoreOf(index, c.key);
    const parts = [
      ...(score ? [html`judge ${scoreBadge(score.score)}`] : []),
      ...view.measures.map((m) => html`${m.label} ${measureText(m.values.get(c.key))}`),
    ];
    return html`${parts.map((p, i) => html`${i > 0 ? ' · ' : ''}${p}`)}`;
  };
  const factorNames = Object.keys(cell.labels).filter((n) => !['experiment', 'stage', 'bareProbe', 'targetKey', 'generationKey'].includes(n));
  const differing = view.pair ? factorNames.filter((n) => labelText(cell.labels, n) !== labelText(view.pair!.cell.labels, n)) : [];
  const pairHtml = view.pair
    ? html`<h2>Paired cell</h2><p class="note">Side by side with ${view.pair.relation} (differs in ${differing.join(', ') || 'nothing'}).</p>
<div class="pair" id="pair">
<section class="side this-side"><h3>This cell · ${labelsLine(cell, differing)}</h3><p class="muted">${numbers(cell)}</p><pre class="text">${answerOf(cell.text, result)}</pre></section>
<section class="side pair-side"><h3><a id="pair-link" href="${cellHref(store.index, run.id, view.pair.cell.key)}">Cell ${view.pair.cell.ordinal}</a> · ${labelsLine(view.pair.cell, differing)}</h3><p class="muted">${numbers(view.pair.cell)}</p><pre class="text pair-response">${answerOf(view.pair.cell.text, view.pair.result)}</pre></section>
</div>`
    : view.referencedBy
      ? html`<h2>Paired cells</h2><p class="note" id="referenced-by">${view.referencedBy.before} <a href="${runHref(store.index, run.id, view.referencedBy.filter)}">${view.referencedBy.link}</a> ${view.referencedBy.after}</p>`
      : html``;
  const measureLine =
    view.measures.length > 0
      ? html`<p class="muted">${view.measures.map((m, i) => html`${i > 0 ? ' · ' : ''}${m.label} ${measureText(m.values.get(cell.key))}`)}</p>`
      : html``;
  // The exchange first (what was asked, what came back), as Inspect and promptfoo open a sample;
  // the labels are folded below it, without the empty ones.
  const prompt = request ? lastUserMessage(request.messages) : undefined;
  const shown = labelRows.filter((r) => r.value !== null && r.value !== undefined && r.value !== '');
  const facts = factorNames
    .map((n) => ({ n, v: labelText(cell.labels, n) }))
    .filter((f) => f.v !== '')
    .slice(0, 8)
    .map((f) => `${f.n} ${f.v}`)
    .join(' · ');
  const body = html`<p><a href="${runHref(store.index, run.id)}">← ${runName(run)}</a> <code class="muted">${run.id}</code></p>
${await incompleteRunBanner(store, run)}
${nav}
${facts ? html`<p class="cell-facts muted" id="cell-facts">${facts}</p>` : ''}
<section class="exchange">
<h2>Prompt</h2>${prompt ? html`<p class="muted">the last user message of ${request?.messages.length ?? 0} sent to ${request?.model ?? cell.model}; the whole context is below</p><pre class="text prompt" id="prompt">${prompt}</pre>` : html`<p class="muted">The request is not in the store.</p>`}
<h2>Response</h2>${measureLine}<pre class="text response" id="response">${answerOf(cell.text, result)}</pre>${usage}
</section>
${result?.reasoning ? html`<details><summary>Reasoning trace</summary><pre class="text">${result.reasoning}</pre></details>` : ''}
${judgeHtml}
${pairHtml}
<details class="labels" id="labels"><summary>Labels (${shown.length}${shown.length < labelRows.length ? `; ${labelRows.length - shown.length} empty hidden` : ''})</summary>
${table(shown, [
  { header: 'label', value: (r) => r.name },
  { header: 'value', value: (r) => String(r.value) },
])}
</details>
<h2>Context sent to ${request?.model ?? cell.model}</h2>
${request ? html`<p class="muted">${request.messages.length} messages, ${request.messages.reduce((n, m) => n + m.content.length, 0).toLocaleString('en-US')} characters · decoding ${JSON.stringify(request.params)} · sample ${request.sample}</p>${messagesHtml(request.messages)}` : html`<p class="muted">The request is not in the store.</p>`}`;
  return viewerPage(`Cell #${cell.ordinal} of ${runName(run)}`, body, context);
}

// ---- analysis ----

const analysisHref = (store: number, runId: string) => `/analysis?${qs({ s: store, r: runId })}`;
const reportHref = (store: number, runId: string) => `/runs/${encodeURIComponent(runId)}/report?${qs({ s: store })}`;

function summaryTable(analysis: RunAnalysis): RawHtml {
  return table(
    analysis.audit.render.viewerSummary(analysis.analyzed),
    [
      { header: 'headline', value: (l) => l.label },
      { header: 'value', value: (l) => l.value },
    ],
    'No headline number.',
  );
}

/** A run's analysis: the audit's headline lines, then the same section the HTML report shows. */
export async function analysisPage(store: ViewerStore, analysis: RunAnalysis, section: RawHtml, context: PageContext): Promise<string> {
  const run = analysis.analyzed.run;
  const body = html`<p><a href="${runHref(store.index, run.id)}">← ${runName(run)}</a> <code class="muted">${run.id}</code> · ${store.name} · ${analysis.audit.title} · <a href="${reportHref(store.index, run.id)}">full HTML report</a></p>
${await incompleteRunBanner(store, run)}
${summaryTable(analysis)}
${section}`;
  return viewerPage(`Analysis of ${runName(run)}`, body, context);
}

// ---- compare ----

export interface CompareSide {
  store: ViewerStore;
  index: RunIndex;
  analysis: RunAnalysis | undefined;
}

export function comparePage(
  a: CompareSide,
  b: CompareSide,
  comparison: RunComparison | undefined,
  pairs: readonly PairedCell[],
  byTarget: boolean,
  context: PageContext,
): string {
  // Headline lines of each run's audit, side by side (rows in first-seen order).
  const linesA = new Map((a.analysis?.audit.render.viewerSummary(a.analysis.analyzed) ?? []).map((l) => [l.label, l.value]));
  const linesB = new Map((b.analysis?.audit.render.viewerSummary(b.analysis.analyzed) ?? []).map((l) => [l.label, l.value]));
  const labels = [...new Set([...linesA.keys(), ...linesB.keys()])];
  const headlineTable = table(
    labels,
    [
      { header: 'headline', value: (label) => label },
      { header: 'run A', value: (label) => linesA.get(label) ?? '—', numeric: true },
      { header: 'run B', value: (label) => linesB.get(label) ?? '—', numeric: true },
    ],
    'Neither run has an analysis (no registered audit for its experiment).',
  );
  const differences = comparison
    ? html`<h2 id="compare-differences">B − A</h2><p class="note">${COMPARE_CAPTION} (B = ${comparison.B}, seed ${comparison.seed}).</p>${table(
        comparison.rows,
        [
          { header: 'statistic', value: (r) => r.statistic },
          { header: 'subject', value: (r) => r.subject },
          { header: 'A, shared units', value: (r) => differenceText(r).a, numeric: true },
          { header: 'B, shared units', value: (r) => differenceText(r).b, numeric: true },
          { header: 'B − A [95% CI]', value: (r) => html`<span class="difference">${differenceText(r).difference}</span>`, numeric: true },
          { header: 'shared units', value: (r) => ('error' in r.result ? '—' : `${r.result.clusters} ${r.unit}s`), numeric: true },
          { header: 'A, own estimate', value: (r) => differenceText(r).ownA, numeric: true },
          { header: 'B, own estimate', value: (r) => differenceText(r).ownB, numeric: true },
        ],
        'The runs have no headline statistic in common.',
      )}`
    : html``;
  const scored = pairs.filter((p) => p.scoreA !== null && p.scoreB !== null);
  const meanA = scored.reduce((s, p) => s + (p.scoreA as number), 0) / (scored.length || 1);
  const meanB = scored.reduce((s, p) => s + (p.scoreB as number), 0) / (scored.length || 1);
  const differing = [...pairs].sort(
    (x, y) => Math.abs((y.scoreB ?? 0) - (y.scoreA ?? 0)) - Math.abs((x.scoreB ?? 0) - (x.scoreA ?? 0)) || x.a.ordinal - y.a.ordinal,
  );
  const shown = differing.slice(0, PAGE_SIZE);
  const labelOf = (p: PairedCell) =>
    ['session', 'position', 'arm', 'mitigation', 'item', 'condition', 'question_id', 'cutpoint', 'sample']
      .map((n) => p.a.labels[n])
      .filter((v) => v !== undefined && v !== null)
      .join(' · ');
  const pairTable = table(
    shown,
    [
      { header: 'cell', value: (p) => labelOf(p) },
      { header: 'A', value: (p) => html`${scoreBadge(p.scoreA)} <a href="${cellHref(a.store.index, a.index.run.id, p.a.key)}">open</a>` },
      { header: 'response A', value: (p) => html`<div class="snippet">${snippet(p.a.text)}</div>` },
      { header: 'B', value: (p) => html`${scoreBadge(p.scoreB)} <a href="${cellHref(b.store.index, b.index.run.id, p.b.key)}">open</a>` },
      { header: 'response B', value: (p) => html`<div class="snippet">${snippet(p.b.text)}</div>` },
    ],
    'The runs share no cell (different sessions, positions, arms or probes).',
  );
  const side = (s: CompareSide) =>
    html`<a href="${runHref(s.store.index, s.index.run.id)}">${runName(s.index.run)}</a> <code class="muted">${s.index.run.id}</code> (${s.store.name}; ${modelsOf(s.index.run, 'targets').join(', ')})`;
  const body = html`<p>Run A: ${side(a)} — Run B: ${side(b)}</p>
${differences}
<section id="compare-headlines"><h2>Headline numbers</h2><p class="note">Each run's own analysis (its audit's summary, with each run's own CIs, as in its report).${a.analysis ? html` <a href="${analysisHref(a.store.index, a.index.run.id)}">Analysis A</a>` : ''}${b.analysis ? html` <a href="${analysisHref(b.store.index, b.index.run.id)}">Analysis B</a>` : ''}</p>${headlineTable}</section>
<h2>Same cells side by side</h2><p class="muted">${pairs.length} cells asked the same thing in both runs (matched on every label${byTarget ? '' : ' except the target'}); ${scored.length} are judged in both: mean score A ${scored.length ? meanA.toFixed(3) : '—'}, B ${scored.length ? meanB.toFixed(3) : '—'}. Largest score differences first${pairs.length > PAGE_SIZE ? `, first ${PAGE_SIZE}` : ''}.</p>${pairTable}`;
  return viewerPage('Compare runs', body, context);
}

export function errorPage(status: number, message: string, context: PageContext): string {
  return viewerPage(
    status === 404 ? 'Not found' : 'Request refused',
    html`<p class="error">${message}</p><p><a href="/">Back to the runs</a></p>`,
    context,
    false,
  );
}
