import type { CellLabels, CellStatus } from '../../store/types.js';

/**
 * What the viewer shows of a run's cells, as types only: the shared viewer (data.ts,
 * design.ts) and each audit's `viewer` member (experiment/audit.ts) speak in these.
 */

export interface IndexedCell {
  key: string;
  ordinal: number;
  labels: CellLabels;
  status: CellStatus;
  text: string | null;
  model: string;
  /** Names of the tool calls the answer made (tool-using runs), in order. */
  toolCalls?: string[];
}

/** A judge's winning verdict on one answer (re-asks resolved). */
export interface Verdict {
  judge: string;
  key: string;
  attempt: number;
  score: number | null;
  label: string | null;
  reason: string;
  raw: string;
  error: string | null;
}

export interface CellMeasure {
  name: string;
  /** Column header and filter label. */
  label: string;
  /** What it is, for the page. */
  description: string;
  values: Map<string, number | null>;
}

/** How an audit pairs its cells: the partner of a cell differs in one label and shares others. */
export interface PairRule {
  /** The label whose value the partner differs in. */
  dimension: string;
  /** The partner's value for a cell's value (undefined: no partner). */
  partner(value: string): string | undefined;
  /** Labels the partner shares. */
  shared: readonly string[];
  /** Labels the partner should share when it can (else any value, preferring `fallback`). */
  preferred?: { name: string; fallback: string };
  relation(partner: string): string;
}

/** Cells scored against a cell (e.g. a no-memory reference answer): a sentence with a link to them. */
export interface CellReferences {
  /** Text before the link. */
  before: string;
  /** The filter of the run page the link opens (label → value). */
  filter: Record<string, string>;
  /** The link's text. */
  link: string;
  /** Text after the link. */
  after: string;
}
