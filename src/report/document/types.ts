/**
 * The result document (docs/result-document.md): what one run found, as data. Every surface —
 * the HTML, Markdown, JSON and CSV reports, the viewer, the gate, compare and `runs list` — reads
 * its headline numbers (counts, cost, verdicts, intervals, p-values, MDEs, flags) from here, so
 * they cannot disagree, and the reports' sections are rendered from its `sections`. Pure types:
 * the document's own are inferred from its zod schemas (schema.ts).
 */

import type { TokenCounts } from '../../core/token-counts.js';
import type { DocumentSection, DocumentVerdict, EstimateRow } from './schema.js';

export type {
  DocumentBlock,
  DocumentCell,
  DocumentColumn,
  DocumentCost,
  DocumentCounts,
  DocumentExample,
  DocumentNumber,
  DocumentProvenance,
  DocumentSection,
  DocumentTone,
  DocumentVerdict,
  EstimateRow,
  NumberFormat,
  ResultDocument,
  RichText,
} from './schema.js';
export { RESULT_DOCUMENT_SCHEMA } from './version.js';

/** Tokens and prompt-cache use, summed over a run's distinct requests. */
export interface TokenUse extends Omit<TokenCounts, 'reasoningTokens'> {
  /** Cells whose provider reported a prompt-cache read. */
  providerCacheHits: number;
}

/** What an audit adds to a run's document from its analysis (the shared fields are filled in by `buildResultDocument`). */
export interface AuditDocumentPart {
  verdicts: DocumentVerdict[];
  /** The report's sections; the HTML and Markdown renderers (report/document/render-*.ts) draw them. */
  sections?: DocumentSection[];
  /** Extra facts per estimate row, matched on `table`, `subject`, `group` and `label` (the rows come from `csvRows`). */
  estimateNotes?: (row: EstimateRow) => Partial<Pick<EstimateRow, 'family' | 'unit' | 'notes' | 'fragile' | 'underpowered'>> | undefined;
}
