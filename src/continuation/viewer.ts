import type { AuditViewer } from '../experiment/audit.js';
import { labelText } from '../report/viewer/labels.js';
import type { CellMeasure, IndexedCell } from '../report/viewer/types.js';
import type { ContinuationCollected } from './run.js';

/** The continuation audit in the viewer: each answer's argument fidelity, and arm ⇄ arm pairs at a cutpoint. */

function continuationMeasures(cells: readonly IndexedCell[], collected: ContinuationCollected): CellMeasure[] {
  const byLabels = new Map(
    cells.map((c) => [JSON.stringify([labelText(c.labels, 'target'), labelText(c.labels, 'cutpoint'), labelText(c.labels, 'arm')]), c.key]),
  );
  const fidelity = new Map<string, number | null>();
  for (const s of collected.cells) {
    const cellKey = byLabels.get(JSON.stringify([s.target, s.cutpoint, s.arm]));
    if (cellKey !== undefined) fidelity.set(cellKey, s.score.fidelity);
  }
  return [{ name: 'fidelity', label: 'fidelity', description: 'argument fidelity of the tool call to the ground-truth call (0–1)', values: fidelity }];
}

export const continuationViewer: AuditViewer<ContinuationCollected> = {
  cellMeasures: continuationMeasures,
  pairing: {
    dimension: 'arm',
    partner: (arm) => (arm === 'recent' ? 'cross' : arm === '' ? undefined : 'recent'),
    shared: ['target', 'cutpoint', 'sample'],
    relation: (arm) => `the ${arm} arm at the same cutpoint`,
  },
};
