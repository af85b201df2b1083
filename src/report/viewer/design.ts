import { findAudit } from '../../experiment/registry.js';
import type { IndexedCell, RunAnalysis, RunIndex } from './data.js';
import { labelText } from './labels.js';
import type { CellMeasure, CellReferences } from './types.js';
import { getOrInsert } from '../../core/get-or-insert.js';

export { labelText } from './labels.js';
export type { CellMeasure, CellReferences, PairRule } from './types.js';

/**
 * The design of a run as the viewer shows it, read from its cells' labels: the factors a cell
 * list can be filtered by (whatever the audit labels its cells with: condition, question,
 * position, arm, mitigation, probe, cutpoint …), and, from the audit's `viewer` member, per-cell
 * numbers from its analysis (memory DTW/SRI, continuation argument fidelity) and each cell's
 * paired cell (persona real ⇄ filler, memory perturbed → no-memory reference, continuation
 * arm ⇄ arm). Pure over the index and the analysis.
 */

export interface Factor {
  name: string;
  /** The form label (e.g. `question` for `question_id`). */
  label: string;
  values: string[];
}

/** Bookkeeping labels that are not design factors. */
const NOT_FACTORS = new Set([
  'experiment',
  'stage',
  'targetKey',
  'generationKey',
  'bareProbe',
  'positionValue',
  'attempt',
  'compactionIndex',
  'compactionSide',
  'continuationClipped',
  'continuationMessages',
  'selectedBy',
]);

/** Factors first in this order, then the rest alphabetically. */
const ORDER = [
  'target',
  'condition',
  'tier',
  'question_id',
  'domain',
  'session',
  'position',
  'cutpoint',
  'task',
  'arm',
  'mitigation',
  'distance',
  'surface',
  'item',
  'category',
  'paraphrase',
  'sample',
];

const LABELS: Record<string, string> = { question_id: 'question', item: 'probe / item', stimulus_id: 'stimulus', sameTask: 'same task' };

const MAX_VALUES = 400;
const MAX_VALUE_LENGTH = 80;

const naturalCompare = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });

/**
 * Factors of a run: scalar labels with two or more values among its answer cells (the target
 * always), short enough to be a design level rather than free text.
 */
export function runFactors(index: RunIndex): Factor[] {
  const seen = new Map<string, Set<string>>();
  const refused = new Set<string>();
  for (const cell of index.cells) {
    for (const [name, value] of Object.entries(cell.labels)) {
      if (NOT_FACTORS.has(name) || refused.has(name) || value === null || value === undefined) continue;
      // Free text, or more values than a design has levels: not a factor.
      const freeText = typeof value === 'object' || String(value).length > MAX_VALUE_LENGTH;
      if (freeText || getOrInsert(seen, name, () => new Set<string>()).add(String(value)).size > MAX_VALUES) {
        refused.add(name);
        seen.delete(name);
      }
    }
  }
  const rank = (name: string) => {
    const at = ORDER.indexOf(name);
    return at < 0 ? ORDER.length : at;
  };
  return [...seen.entries()]
    .filter(([name, values]) => values.size > 1 || name === 'target')
    .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b))
    .map(([name, values]) => ({ name, label: LABELS[name] ?? name, values: [...values].sort(naturalCompare) }));
}

// ---- numbers per cell from the analysis ----

/** Per-cell numbers the audit's analysis gives (its `viewer.cellMeasures`; none for persona: its judge score is the cell's number). */
export function cellMeasures(index: RunIndex, analysis: RunAnalysis | undefined): CellMeasure[] {
  return analysis?.audit.viewer?.cellMeasures?.(index.cells, analysis.analyzed.collected) ?? [];
}

// ---- paired cells ----

export interface CellPair {
  /** What the pair is, e.g. "filler context at the same position, probe and sample". */
  relation: string;
  cell: IndexedCell;
}

/** The cell a cell is paired with in its audit's design, if any. */
export function pairedCell(index: RunIndex, cell: IndexedCell): CellPair | undefined {
  const rule = findAudit(index.run.experiment)?.viewer?.pairing;
  if (!rule) return undefined;
  const partner = rule.partner(labelText(cell.labels, rule.dimension));
  if (partner === undefined) return undefined;
  const candidates = index.cells.filter(
    (c) =>
      c !== cell && labelText(c.labels, rule.dimension) === partner && rule.shared.every((name) => labelText(c.labels, name) === labelText(cell.labels, name)),
  );
  if (candidates.length === 0) return undefined;
  const pref = rule.preferred;
  const chosen = pref
    ? (candidates.find((c) => labelText(c.labels, pref.name) === labelText(cell.labels, pref.name)) ??
      candidates.find((c) => labelText(c.labels, pref.name) === pref.fallback) ??
      candidates[0])
    : candidates[0];
  return chosen ? { relation: rule.relation(partner), cell: chosen } : undefined;
}

/** The cells scored against a cell (its audit's `viewer.referencedBy`, e.g. a no-memory reference answer). */
export function referencedBy(index: RunIndex, cell: IndexedCell): CellReferences | undefined {
  return findAudit(index.run.experiment)?.viewer?.referencedBy?.(index.cells, cell);
}
