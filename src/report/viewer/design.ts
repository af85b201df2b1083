import type { ContinuationCollected } from '../../continuation/run.js';
import { scoreTrajectories } from '../../memory-drift/analysis.js';
import type { MemoryCollection } from '../../memory-drift/observations.js';
import type { CellLabels } from '../../store/types.js';
import type { IndexedCell, RunAnalysis, RunIndex } from './data.js';

/**
 * The design of a run as the viewer shows it, read from its cells' labels: the factors a cell
 * list can be filtered by (whatever the audit labels its cells with: condition, question,
 * position, arm, mitigation, probe, cutpoint …), per-cell numbers from the audit's analysis
 * (memory DTW/SRI against the no-memory reference, continuation argument fidelity) and each
 * cell's paired cell (persona real ⇄ filler, memory perturbed → no-memory reference,
 * continuation arm ⇄ arm). Pure over the index and the analysis.
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
const ORDER = ['target', 'condition', 'tier', 'question_id', 'domain', 'session', 'position', 'cutpoint', 'task', 'arm', 'mitigation', 'distance', 'surface', 'item', 'category', 'paraphrase', 'sample'];

const LABELS: Record<string, string> = { question_id: 'question', item: 'probe / item', stimulus_id: 'stimulus', sameTask: 'same task' };

const MAX_VALUES = 400;
const MAX_VALUE_LENGTH = 80;

const naturalCompare = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });

/** A label value as the filter compares it ('' for absent). */
export const labelText = (labels: CellLabels, name: string): string => {
  const v = labels[name];
  return v === undefined || v === null ? '' : String(v);
};

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
      if (typeof value === 'object' || String(value).length > MAX_VALUE_LENGTH) {
        refused.add(name);
        seen.delete(name);
        continue;
      }
      let set = seen.get(name);
      if (!set) {
        set = new Set();
        seen.set(name, set);
      }
      set.add(String(value));
      if (set.size > MAX_VALUES) {
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

export interface CellMeasure {
  name: string;
  /** Column header and filter label. */
  label: string;
  /** What it is, for the page. */
  description: string;
  values: Map<string, number | null>;
}

function memoryMeasures(index: RunIndex, collection: MemoryCollection): CellMeasure[] {
  const key = (target: string, question: string, condition: string, stimulus: string, sample: number) => JSON.stringify([target, question, condition, stimulus, sample]);
  const generationKeys = new Map(collection.records.map((r) => [key(r.sample.target, r.sample.question, r.sample.condition, r.sample.stimulus, r.sample.sample), r.generationKey]));
  const observations = scoreTrajectories(
    collection.records.map((r) => r.sample),
    { pairing: 'reference' },
  ).observations;
  const dtw = new Map<string, number | null>();
  const sri = new Map<string, number | null>();
  for (const o of observations) {
    const cellKey = generationKeys.get(key(o.target, o.question, o.condition, o.stimulus, o.sample));
    if (cellKey === undefined) continue;
    dtw.set(cellKey, o.dtw);
    sri.set(cellKey, o.sri);
  }
  const present = new Set(index.cells.map((c) => c.key));
  for (const map of [dtw, sri]) for (const k of map.keys()) if (!present.has(k)) map.delete(k);
  return [
    { name: 'dtw', label: 'DTW', description: 'trajectory distance (DTW) to the no-memory reference answer of the same question', values: dtw },
    { name: 'sri', label: 'SRI', description: 'step reordering index (SRI) against the no-memory reference answer', values: sri },
  ];
}

function continuationMeasures(index: RunIndex, collected: ContinuationCollected): CellMeasure[] {
  const byLabels = new Map(index.cells.map((c) => [JSON.stringify([labelText(c.labels, 'target'), labelText(c.labels, 'cutpoint'), labelText(c.labels, 'arm')]), c.key]));
  const fidelity = new Map<string, number | null>();
  for (const s of collected.cells) {
    const cellKey = byLabels.get(JSON.stringify([s.target, s.cutpoint, s.arm]));
    if (cellKey !== undefined) fidelity.set(cellKey, s.score.fidelity);
  }
  return [{ name: 'fidelity', label: 'fidelity', description: 'argument fidelity of the tool call to the ground-truth call (0–1)', values: fidelity }];
}

/** Per-cell numbers the audit's analysis gives (none for persona: its judge score is the cell's number). */
export function cellMeasures(index: RunIndex, analysis: RunAnalysis | undefined): CellMeasure[] {
  if (!analysis) return [];
  switch (analysis.audit.name) {
    case 'memory':
      return memoryMeasures(index, analysis.analyzed.collected as MemoryCollection);
    case 'continuation':
      return continuationMeasures(index, analysis.analyzed.collected as ContinuationCollected);
    default:
      return [];
  }
}

// ---- paired cells ----

export interface CellPair {
  /** What the pair is, e.g. "filler context at the same position, probe and sample". */
  relation: string;
  cell: IndexedCell;
}

interface PairRule {
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

const RULES: Record<string, PairRule> = {
  persona: {
    dimension: 'arm',
    partner: (arm) => (arm === 'real' ? 'filler' : arm === '' ? undefined : 'real'),
    shared: ['target', 'session', 'position', 'surface', 'item', 'paraphrase', 'sample', 'distance', 'systemPrompt', 'framed'],
    preferred: { name: 'mitigation', fallback: 'none' },
    relation: (arm) => `the ${arm} context at the same position, probe and sample`,
  },
  memory: {
    dimension: 'role',
    partner: (role) => (role === 'perturbed' ? 'reference' : undefined),
    shared: ['target', 'question_id', 'mode'],
    preferred: { name: 'sample', fallback: '0' },
    relation: () => 'the no-memory reference answer to the same question',
  },
  continuation: {
    dimension: 'arm',
    partner: (arm) => (arm === 'recent' ? 'cross' : arm === '' ? undefined : 'recent'),
    shared: ['target', 'cutpoint', 'sample'],
    relation: (arm) => `the ${arm} arm at the same cutpoint`,
  },
};

/** The cell a cell is paired with in its audit's design, if any. */
export function pairedCell(index: RunIndex, cell: IndexedCell): CellPair | undefined {
  const rule = RULES[index.run.experiment];
  if (!rule) return undefined;
  const partner = rule.partner(labelText(cell.labels, rule.dimension));
  if (partner === undefined) return undefined;
  const candidates = index.cells.filter(
    (c) => c !== cell && labelText(c.labels, rule.dimension) === partner && rule.shared.every((name) => labelText(c.labels, name) === labelText(cell.labels, name)),
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

/** A no-memory reference answer: the perturbed answers to its question that are scored against it. */
export function referencedBy(index: RunIndex, cell: IndexedCell): { question: string; count: number } | undefined {
  if (index.run.experiment !== 'memory' || labelText(cell.labels, 'role') !== 'reference') return undefined;
  const question = labelText(cell.labels, 'question_id');
  const target = labelText(cell.labels, 'target');
  const count = index.cells.filter((c) => labelText(c.labels, 'role') === 'perturbed' && labelText(c.labels, 'question_id') === question && labelText(c.labels, 'target') === target).length;
  return { question, count };
}
