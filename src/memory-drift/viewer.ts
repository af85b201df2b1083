import type { AuditViewer } from '../experiment/audit.js';
import { labelText } from '../report/viewer/labels.js';
import type { CellMeasure, CellReferences, IndexedCell } from '../report/viewer/types.js';
import { collectionObservations, type MemoryCollection } from './observations.js';

/**
 * The memory audit in the viewer: DTW and SRI of each answer against the no-memory reference
 * answer of its question (per-cell numbers and range filters), each perturbed answer paired
 * with that reference, and a reference linked to the answers scored against it.
 */

function memoryMeasures(cells: readonly IndexedCell[], collection: MemoryCollection): CellMeasure[] {
  const key = (target: string, question: string, condition: string, stimulus: string, sample: number) =>
    JSON.stringify([target, question, condition, stimulus, sample]);
  const generationKeys = new Map(
    collection.records.map((r) => [key(r.sample.target, r.sample.question, r.sample.condition, r.sample.stimulus, r.sample.sample), r.generationKey]),
  );
  const observations = collectionObservations(collection, 'reference');
  const dtw = new Map<string, number | null>();
  const sri = new Map<string, number | null>();
  for (const o of observations) {
    const cellKey = generationKeys.get(key(o.target, o.question, o.condition, o.stimulus, o.sample));
    if (cellKey === undefined) continue;
    dtw.set(cellKey, o.dtw);
    sri.set(cellKey, o.sri);
  }
  const present = new Set(cells.map((c) => c.key));
  for (const map of [dtw, sri]) for (const k of map.keys()) if (!present.has(k)) map.delete(k);
  return [
    { name: 'dtw', label: 'DTW', description: 'trajectory distance (DTW) to the no-memory reference answer of the same question', values: dtw },
    { name: 'sri', label: 'SRI', description: 'step reordering index (SRI) against the no-memory reference answer', values: sri },
  ];
}

/** A no-memory reference answer: the perturbed answers to its question that are scored against it. */
function referencedBy(cells: readonly IndexedCell[], cell: IndexedCell): CellReferences | undefined {
  if (labelText(cell.labels, 'role') !== 'reference') return undefined;
  const question = labelText(cell.labels, 'question_id');
  const target = labelText(cell.labels, 'target');
  const count = cells.filter(
    (c) => labelText(c.labels, 'role') === 'perturbed' && labelText(c.labels, 'question_id') === question && labelText(c.labels, 'target') === target,
  ).length;
  return {
    before: `The no-memory reference answer to ${question}:`,
    filter: { question_id: question, role: 'perturbed' },
    link: `${count} answers with a memory`,
    after: 'are scored against it.',
  };
}

export const memoryViewer: AuditViewer<MemoryCollection> = {
  cellMeasures: memoryMeasures,
  pairing: {
    dimension: 'role',
    partner: (role) => (role === 'perturbed' ? 'reference' : undefined),
    shared: ['target', 'question_id', 'mode'],
    preferred: { name: 'sample', fallback: '0' },
    relation: () => 'the no-memory reference answer to the same question',
  },
  referencedBy,
};
