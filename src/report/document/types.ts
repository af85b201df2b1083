/**
 * The result document (docs/result-document.md): what one run found, as data. Every surface —
 * the HTML, Markdown, JSON and CSV reports, the viewer, the gate, compare and `runs list` — reads
 * its headline numbers (counts, cost, verdicts, intervals, p-values, MDEs, flags) from here, so
 * they cannot disagree, and the reports' sections are rendered from its `sections`. Pure types.
 */

import type { TokenCounts } from '../../core/token-counts.js';
import type { ChartSpec } from '../chart-spec.js';

/** The version of the document's shape; a change that removes or renames a field bumps it. */
export const RESULT_DOCUMENT_SCHEMA = 'echolens.result/2';

/** How a verdict reads: `alert` = drift / failed check, `ok` = none found, `neutral` = inconclusive or not computable. */
export type DocumentTone = 'alert' | 'ok' | 'neutral';

/** One number of a verdict's first screen: a short label, the value as shown and a line of context. */
export interface DocumentNumber {
  label: string;
  value: string;
  detail?: string;
}

/** A verdict on one subject (a target, with its judge or labeler where the audit has one). */
export interface DocumentVerdict {
  subject: string;
  /** The verdict in words, as every surface shows it. */
  verdict: string;
  tone: DocumentTone;
  /** The estimate the verdict rests on (null when it rests on several, or none). */
  estimate: number | null;
  interval: [number, number] | null;
  p: number | null;
  pAdjusted: number | null;
  /** Minimum detectable |effect| at 80% power for this run (null: not computed, or the test cannot reject). */
  mde: number | null;
  /** The effect the design is meant to detect, where the audit declares one. */
  effectOfInterest: number | null;
  /** No effect found, and the run could not have detected the effect of interest. */
  underpowered: boolean;
  /** A significant verdict that removing one unit (session) undoes. */
  fragile: boolean;
  /** The unit a fragile verdict rests on. */
  drivenBy: string | null;
  /** The headline numbers, formatted (the report's first screen). */
  numbers: DocumentNumber[];
}

/** One estimate with its interval: a row of the long-format CSV. */
export interface EstimateRow {
  /** The table of the report the row belongs to (e.g. `drift`, `dRel`, `contrast`). */
  table: string;
  subject: string | null;
  judge: string | null;
  group: string | null;
  label: string | null;
  estimate: number | null;
  interval: [number, number] | null;
  n: number | null;
  p: number | null;
  pAdjusted: number | null;
  /** The multiple-comparison family `pAdjusted` is adjusted within (null: unadjusted). */
  family: string | null;
  /** The unit of inference (positions, sessions, questions, cutpoints). */
  unit: string | null;
  notes: string[];
  fragile: boolean;
  underpowered: boolean;
}

/** How a number in a table is written (report/format.ts): `signed` +0.25, `fixed` 0.250, `percent` +33.7%, `share` 33.7%, `integer` 1,234 (as is). */
export type NumberFormat = 'signed' | 'fixed' | 'percent' | 'share' | 'integer';

/** Text with spans: plain strings, `code` (a name, a file) and `strong`. Escaped by every renderer. */
export type RichText = string | Array<string | { code: string } | { strong: string }>;

/**
 * A typed table cell: every renderer writes it the same way (format.ts), and a missing number is `—`.
 * `suffix` is text after the value (a flag, a unit count); `mark` highlights a text cell.
 */
export type DocumentCell =
  | { kind: 'text'; text: string; code?: boolean; mark?: boolean }
  | { kind: 'number'; value: number | null; format: NumberFormat; digits?: number; suffix?: string }
  | { kind: 'interval'; estimate: number | null; interval: [number, number] | null; format: NumberFormat; digits?: number; suffix?: string }
  | { kind: 'p'; value: number | null; suffix?: string };

export interface DocumentColumn {
  header: string;
  /** Right-aligned (numbers). */
  numeric?: boolean;
}

/**
 * One block of a section, as data. `examples` holds untrusted model output: renderers escape it
 * and show it as text.
 */
export type DocumentBlock =
  /** A heading inside a section; `minor` one level further down. */
  | { kind: 'heading'; text: string; id?: string; minor?: boolean }
  /** A paragraph; `quote`: set apart (a Markdown block quote). */
  | { kind: 'text'; text: RichText; quote?: boolean }
  | { kind: 'list'; items: RichText[] }
  /** Text shown as written (a config, JSON): a fenced block in Markdown, `<pre>` in HTML. */
  | { kind: 'code'; text: string; language?: string }
  | { kind: 'table'; columns: DocumentColumn[]; rows: DocumentCell[][]; empty?: string }
  /** A chart as data (report/chart-spec.ts) under its own heading, drawn as SVG in HTML; Markdown carries the tables, not the chart. */
  | { kind: 'chart'; title?: string; id?: string; spec: ChartSpec; caption: string }
  | { kind: 'examples'; text: string; items: DocumentExample[] };

/** One example of model output: tags (target, item, …) and panes of text side by side, or a table of aligned steps. */
export interface DocumentExample {
  tags: string[];
  title?: string;
  panes?: Array<{ label: string; detail: string; text: string }>;
  table?: { columns: DocumentColumn[]; rows: DocumentCell[][] };
}

/** A section of the report: a heading and its blocks (tables, charts, notes). */
export interface DocumentSection {
  id?: string;
  title: string;
  blocks: DocumentBlock[];
}

/** The run's cells: what the store links to the run (the same counts as `runs list`). */
export interface DocumentCounts {
  cells: number;
  done: number;
  failed: number;
  pending: number;
  /** Distinct requests among the cells (a request asked twice within a run is answered and paid once). */
  distinctRequests: number;
}

/** Tokens and prompt-cache use, summed over a run's distinct requests. */
export interface TokenUse extends Omit<TokenCounts, 'reasoningTokens'> {
  /** Cells whose provider reported a prompt-cache read. */
  providerCacheHits: number;
}

/** What the run cost: `usd` is null when some cell's model has no known price (unknown, never $0). */
export interface DocumentCost extends TokenUse {
  usd: number | null;
  /** Dollars over the cells whose model has a known price. */
  pricedUsd: number;
  unpricedCells: number;
}

export interface DocumentProvenance {
  /** Some model of the run is a simulation (`sim:`): its numbers measure nothing real. */
  simulated: boolean;
  /** Every model the run's config names (targets, judges, labeler). */
  models: string[];
  /** The materials the run read, in one line. */
  materials: string;
  /** The procedure (calibrated or the authors' reference), in one line. */
  procedure: string;
  echolensVersion: string | null;
  gitCommit: string | null;
  seed: number | null;
}

export interface ResultDocument {
  schema: typeof RESULT_DOCUMENT_SCHEMA;
  run: { id: string; audit: string; title: string; name: string; status: string; startedAt: string; endedAt: string | null };
  provenance: DocumentProvenance;
  counts: DocumentCounts;
  cost: DocumentCost;
  /** Why the answers cannot be analysed (gate/sanity.ts), or null. */
  notComputable: string | null;
  verdicts: DocumentVerdict[];
  estimates: EstimateRow[];
  /** The report's sections (tables, charts as data, notes), rendered alike in HTML and Markdown. */
  sections: DocumentSection[];
}

/** What an audit adds to a run's document from its analysis (the shared fields are filled in by `buildResultDocument`). */
export interface AuditDocumentPart {
  verdicts: DocumentVerdict[];
  /** The report's sections; the HTML and Markdown renderers (report/document/render-*.ts) draw them. */
  sections?: DocumentSection[];
  /** Extra facts per estimate row, matched on `table`, `subject`, `group` and `label` (the rows come from `csvRows`). */
  estimateNotes?: (row: EstimateRow) => Partial<Pick<EstimateRow, 'family' | 'unit' | 'notes' | 'fragile' | 'underpowered'>> | undefined;
}
