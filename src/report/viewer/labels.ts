import type { CellLabels } from '../../store/types.js';

/** A label value as the filter compares it ('' for absent). */
export const labelText = (labels: CellLabels, name: string): string => {
  const v = labels[name];
  return v === undefined || v === null ? '' : String(v);
};
