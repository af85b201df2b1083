import { spendOrNull } from '../../core/money.js';
import type { AnalyzedRun, AnyAudit, AuditCsvRow, AuditHeadlineTarget } from '../../experiment/audit.js';
import { isSimulatedRun, modelsOfRun } from '../../gate/run-info.js';
import { materialsSummary, procedureSummary, runMaterialsOf } from '../../materials/report.js';
import type { RunInfo } from '../../store/run-store.js';
import { int, intervalCell, pCell, table, text } from './cells.js';
import {
  type DocumentCounts,
  type DocumentSection,
  type DocumentVerdict,
  type EstimateRow,
  RESULT_DOCUMENT_SCHEMA,
  type ResultDocument,
  type TokenUse,
} from './types.js';

/**
 * Builds a run's result document (pure): the shared fields from the run and its accounting, the
 * audit's verdicts from its `document` renderer (else its headline), its estimate rows from its
 * CSV rows. docs/result-document.md.
 */

/** Cost, tokens and cache use of a run's cells (`accountRun` in report.ts). */
export interface RunAccounting extends TokenUse {
  /** The run's cells (as the store links them: a request asked twice within the run is two cells). */
  cells: number;
  /** The run's cells by status. */
  byStatus: Record<string, number>;
  /** Distinct requests among the cells: what was asked and paid (tokens and spend are summed over these). */
  distinctRequests: number;
  /** Dollars over the priced cells (the JSON report's `spendUsd` is null when `unpricedCells` > 0). */
  spendUsd: number;
  /** Cells with tokens but no known price: the run's cost is unknown, never $0. */
  unpricedCells: number;
  /** Cells whose answer was reused from another run in the same store. */
  sharedWithOtherRuns: number;
  /** Why the targets' answers cannot be analysed (one answer to everything, context ignored), or null (gate/sanity.ts). */
  notComputable: string | null;
}

/**
 * The same counts from a run's accounting (its cells as the report read them, one pass), so a
 * report never asks the store to count the run's cells again (issue #44).
 */
export function accountedCounts(accounting: Pick<RunAccounting, 'cells' | 'byStatus' | 'distinctRequests'>): DocumentCounts {
  const s = accounting.byStatus;
  return { cells: accounting.cells, done: s.done ?? 0, failed: s.failed ?? 0, pending: s.pending ?? 0, distinctRequests: accounting.distinctRequests };
}

/** The cells the gate counts as unfinished: failed or still pending. */
export function unfinishedCells(counts: DocumentCounts): number {
  return counts.failed + counts.pending;
}

const num = (x: unknown): number | null => (typeof x === 'number' && Number.isFinite(x) ? x : null);
const str = (x: unknown): string | null => (x === null || x === undefined || x === '' ? null : String(x));

/** A CSV row of an audit (AUDIT_CSV_COLUMNS order) as an estimate row. */
export function estimateRowOf(row: AuditCsvRow): EstimateRow {
  const [table, target, judge, group, label, estimate, lo, hi, n, p, pAdjusted] = row;
  const l = num(lo);
  const h = num(hi);
  return {
    table: String(table ?? ''),
    subject: str(target),
    judge: str(judge),
    group: str(group),
    label: str(label),
    estimate: num(estimate),
    interval: l === null || h === null ? null : [l, h],
    n: num(n),
    p: num(p),
    pAdjusted: num(pAdjusted),
    family: null,
    unit: null,
    notes: [],
    fragile: false,
    underpowered: false,
  };
}

/** A verdict: the shared fields an audit does not give are null (numbers) or false (flags). */
export function documentVerdict(v: Pick<DocumentVerdict, 'subject' | 'verdict' | 'tone' | 'numbers'> & Partial<DocumentVerdict>): DocumentVerdict {
  const { subject, verdict, tone, numbers, ...given } = v;
  return {
    subject,
    verdict,
    tone,
    estimate: null,
    interval: null,
    p: null,
    pAdjusted: null,
    mde: null,
    effectOfInterest: null,
    underpowered: false,
    fragile: false,
    drivenBy: null,
    numbers,
    ...given,
  };
}

/** A headline card as a verdict without structured numbers (audits that give no `document`). */
export function verdictOfHeadline(h: AuditHeadlineTarget): DocumentVerdict {
  return documentVerdict({ subject: h.target, verdict: h.verdict, tone: h.tone, numbers: h.numbers });
}

/** An audit's verdicts on a run: its `document` member, else its headline cards, else its viewer summary as one card. */
export function auditVerdicts(audit: AnyAudit, analyzed: AnalyzedRun<unknown, unknown>): DocumentVerdict[] {
  const part = audit.render.document?.(analyzed);
  if (part) return part.verdicts;
  if (audit.render.headline) return audit.render.headline(analyzed).map(verdictOfHeadline);
  return [
    verdictOfHeadline({
      target: audit.title,
      verdict: 'summary',
      tone: 'neutral',
      numbers: audit.render.viewerSummary(analyzed).map((l) => ({ label: l.label, value: l.value })),
    }),
  ];
}

/** The sections of an audit that gives none: its estimate rows as one table. */
export function estimatesSection(title: string, estimates: readonly EstimateRow[]): DocumentSection {
  return {
    title,
    blocks: [
      table(
        ['table', 'subject', 'judge', 'group', 'label', 'estimate [CI]', 'n', 'p', 'p adjusted'],
        estimates.map((e) => [
          text(e.table),
          text(e.subject ?? ''),
          text(e.judge ?? ''),
          text(e.group ?? ''),
          text(e.label ?? ''),
          intervalCell(e.estimate, e.interval, 'fixed', 3),
          int(e.n),
          pCell(e.p),
          pCell(e.pAdjusted),
        ]),
        [5, 6, 7, 8],
      ),
    ],
  };
}

/** An audit's report sections: its document's, else its estimate rows as one table. */
export function auditSections(audit: AnyAudit, analyzed: AnalyzedRun<unknown, unknown>): DocumentSection[] {
  return audit.render.document?.(analyzed)?.sections ?? [estimatesSection(audit.title, audit.render.csvRows(analyzed).map(estimateRowOf))];
}

export interface DocumentInput {
  run: RunInfo;
  accounting: RunAccounting;
  audit?: AnyAudit;
  analyzed?: AnalyzedRun<unknown, unknown>;
}

export function buildResultDocument({ run, accounting, audit, analyzed }: DocumentInput): ResultDocument {
  const m = run.manifest;
  const { inputTokens, outputTokens, cachedInputTokens, cacheWriteTokens, providerCacheHits } = accounting;
  const materials = runMaterialsOf(m.options);
  const config = (m.config ?? {}) as Record<string, unknown>;
  const part = audit && analyzed ? audit.render.document?.(analyzed) : undefined;
  let verdicts: DocumentVerdict[];
  if (accounting.notComputable !== null)
    verdicts = [verdictOfHeadline({ target: run.experiment, verdict: `not computable: ${accounting.notComputable}`, tone: 'neutral', numbers: [] })];
  else if (!audit || !analyzed) verdicts = [verdictOfHeadline({ target: run.experiment, verdict: 'no registered audit', tone: 'neutral', numbers: [] })];
  else verdicts = part ? part.verdicts : auditVerdicts(audit, analyzed);
  const estimates = audit && analyzed ? audit.render.csvRows(analyzed).map(estimateRowOf) : [];
  if (part?.estimateNotes) for (const row of estimates) Object.assign(row, part.estimateNotes(row) ?? {});
  return {
    schema: RESULT_DOCUMENT_SCHEMA,
    run: {
      id: run.id,
      audit: run.experiment,
      title: audit?.title ?? run.experiment,
      name: typeof config.name === 'string' && config.name.length > 0 ? config.name : run.id,
      status: run.status,
      startedAt: run.startedAt,
      endedAt: run.endedAt,
    },
    provenance: {
      simulated: isSimulatedRun(run),
      models: modelsOfRun(m.config),
      materials: materialsSummary(materials),
      procedure: procedureSummary(materials),
      echolensVersion: m.versions.echolens ?? null,
      gitCommit: m.gitCommit ?? null,
      seed: typeof m.seed === 'number' ? m.seed : null,
    },
    counts: accountedCounts(accounting),
    cost: {
      usd: spendOrNull(accounting.spendUsd, accounting.unpricedCells),
      pricedUsd: accounting.spendUsd,
      unpricedCells: accounting.unpricedCells,
      inputTokens,
      outputTokens,
      cachedInputTokens,
      cacheWriteTokens,
      providerCacheHits,
    },
    notComputable: accounting.notComputable,
    verdicts,
    estimates,
    sections: audit && analyzed ? (part?.sections ?? [estimatesSection(audit.title, estimates)]) : [],
  };
}
