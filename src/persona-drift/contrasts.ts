import { StatisticsError } from '../core/errors.js';
import { attempt } from '../core/maybe.js';
import { getOrInsert } from '../core/get-or-insert.js';
import type { AnalysisDesign, CellRef, Estimate, GapEstimate, Maybe, PersonaObservation } from './analysis-types.js';
import { clusteredInference, clusteredMean, type InferenceOptions, type UnitValue, unitInference } from './inference.js';

/**
 * Design cells and contrasts between them (pure). A cell is one level of every factor of the
 * design: target × judge × system prompt × context arm × mitigation × distance × surface ×
 * category. A contrast is a weighted sum of cell means, evaluated per (session, position) and
 * then passed to the clustered inference; nothing is averaged across a factor unless the
 * contrast names it.
 */

/** Stable, human-readable name of a cell, e.g. `target=sim:a judge=sim:judge prompt=probe-reference arm=real …`. */
export function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) getOrInsert(groups, key(item), () => []).push(item);
  return groups;
}

/** Every (judge, target) pair of the design, judges outer: the row order of every per-target table. */
export const judgeTargets = (design: Pick<AnalysisDesign, 'judges' | 'targets'>) =>
  design.judges.flatMap((judge) => design.targets.map((target) => [judge, target] as const));

export function cellName(cell: CellRef): string {
  return [
    `target=${cell.target}`,
    ...(cell.judge === null ? [] : [`judge=${cell.judge}`]),
    `prompt=${cell.systemPrompt}`,
    `arm=${cell.arm}`,
    `mitigation=${cell.mitigation}`,
    `distance=${cell.distance}`,
    `surface=${cell.surface}`,
    `category=${cell.category}`,
  ].join(' ');
}

export const DEFAULT_SYSTEM_PROMPT = 'default';

export function promptOf(o: PersonaObservation): string {
  return o.systemPrompt ?? DEFAULT_SYSTEM_PROMPT;
}

export { attempt };

const cellIndexes = new WeakMap<readonly PersonaObservation[], Map<string, PersonaObservation[]>>();

const indexKey = (target: string, arm: string, mitigation: string, distance: string, surface: string, category: string, prompt: string) =>
  `${target}\u0000${arm}\u0000${mitigation}\u0000${distance}\u0000${surface}\u0000${category}\u0000${prompt}`;

/** Done observations grouped by cell (without the judge), built once per observation array. */
function cellIndex(observations: readonly PersonaObservation[]): Map<string, PersonaObservation[]> {
  let index = cellIndexes.get(observations);
  if (index) return index;
  index = new Map<string, PersonaObservation[]>();
  for (const o of observations) {
    if (o.status !== 'done') continue;
    const prompt = promptOf(o);
    for (const category of [o.category, 'all'])
      getOrInsert(index, indexKey(o.target, o.arm, o.mitigation, o.distance, o.surface, category, prompt), () => []).push(o);
  }
  cellIndexes.set(observations, index);
  return index;
}

/** The observations of one cell (done responses only; scored by the cell's judge when it has one). */
export function inCell(observations: readonly PersonaObservation[], cell: CellRef): PersonaObservation[] {
  const list = cellIndex(observations).get(indexKey(cell.target, cell.arm, cell.mitigation, cell.distance, cell.surface, cell.category, cell.systemPrompt));
  return list ? list.filter((o) => cellValue(o, cell.judge) !== null) : [];
}

/** The analysed value of one observation: the judge score (probe) or the deterministic pass (0/1). */
export function cellValue(o: PersonaObservation, judge: string | null): number | null {
  if (judge !== null) {
    const s = o.scores[judge];
    return typeof s === 'number' ? s : null;
  }
  if (o.check) return o.check.pass ? 1 : 0;
  return null;
}

export const unitKey = (o: Pick<PersonaObservation, 'session' | 'position'>) => `${o.session}\u0000${o.position}`;

type UnitMean = Pick<PersonaObservation, 'session' | 'position' | 'positionValue'> & { mean: number; n: number };

/** Mean value per (session, position). */
export function unitMeans(observations: readonly PersonaObservation[], judge: string | null): Map<string, UnitMean> {
  const sums = new Map<string, { o: PersonaObservation; sum: number; n: number }>();
  for (const o of observations) {
    const v = cellValue(o, judge);
    if (v === null) continue;
    const entry = getOrInsert(sums, unitKey(o), () => ({ o, sum: 0, n: 0 }));
    entry.sum += v;
    entry.n++;
  }
  const out = new Map<string, UnitMean>();
  for (const [k, { o, sum, n }] of sums) {
    out.set(k, { session: o.session, position: o.position, positionValue: o.positionValue, mean: sum / n, n });
  }
  return out;
}

export interface Term {
  observations: readonly PersonaObservation[];
  weight: number;
}

/** Σ weight · (cell mean at the unit), for units where every term has data. */
export function combineUnits(terms: readonly Term[], judge: string | null): UnitValue[] {
  const means = terms.map((t) => unitMeans(t.observations, judge));
  const first = means[0];
  if (!first) return [];
  const out: UnitValue[] = [];
  for (const [k, u] of [...first].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    let value = 0;
    let complete = true;
    means.forEach((m, i) => {
      const x = m.get(k);
      if (!x) complete = false;
      else value += (terms[i] as Term).weight * x.mean;
    });
    if (complete) out.push({ session: u.session, position: u.position, value });
  }
  return out;
}

function armSummary(units: readonly UnitValue[], options: InferenceOptions): Estimate {
  const r = clusteredInference(units, options);
  return { estimate: r.estimate, ci: r.ci };
}

/**
 * A contrast `comparison − baseline` of two cells' responses with its inference, or the reason
 * it has none. The result keeps the historic `GapEstimate` shape: `real` is the baseline cell,
 * `filler` the comparison cell.
 */
type TwoCellContrast = (
  baseline: readonly PersonaObservation[],
  comparison: readonly PersonaObservation[],
  judge: string | null,
  options: InferenceOptions,
) => Maybe<GapEstimate>;

/** `comparison − baseline` per (session, position), clustered inference. */
export const cellContrast: TwoCellContrast = (baseline, comparison, judge, options) =>
  attempt(() => {
    if (baseline.length === 0) throw new StatisticsError('the baseline cell has no analysable response');
    if (comparison.length === 0) throw new StatisticsError('the comparison cell has no analysable response');
    const units = combineUnits(
      [
        { observations: comparison, weight: 1 },
        { observations: baseline, weight: -1 },
      ],
      judge,
    );
    if (units.length === 0) throw new StatisticsError('no position has analysable responses in both cells');
    const keys = new Set(units.map((u) => `${u.session}\u0000${u.position}`));
    const keep = (list: readonly PersonaObservation[]) => list.filter((o) => keys.has(unitKey(o)));
    const r = clusteredInference(units, options);
    const b = keep(baseline);
    const c = keep(comparison);
    return {
      ...r,
      estimate: clusteredMean(units),
      nPositions: units.length,
      real: armSummary(combineUnits([{ observations: b, weight: 1 }], judge), options),
      filler: armSummary(combineUnits([{ observations: c, weight: 1 }], judge), options),
      nReal: b.length,
      nFiller: c.length,
    };
  });

/** Weighted sum of cells per unit (e.g. a difference of two gaps), clustered inference. */
export function combinationContrast(terms: readonly Term[], judge: string | null, options: InferenceOptions) {
  return attempt(() => {
    const units = combineUnits(terms, judge);
    return { ...clusteredInference(units, options), estimate: clusteredMean(units) };
  });
}

/**
 * Within one position: probes (items) are the units; each item's value is its mean over
 * paraphrases and samples. Used for the per-position trajectory and the onset.
 */
export const itemContrast: TwoCellContrast = (baseline, comparison, judge, options) =>
  attempt(() => {
    const byItem = (list: readonly PersonaObservation[]) => {
      const m = new Map<string, { sum: number; n: number }>();
      for (const o of list) {
        const v = cellValue(o, judge);
        if (v === null) continue;
        const e = getOrInsert(m, o.item, () => ({ sum: 0, n: 0 }));
        e.sum += v;
        e.n++;
      }
      return m;
    };
    const b = byItem(baseline);
    const c = byItem(comparison);
    const items = [...b.keys()].filter((k) => c.has(k)).sort();
    if (items.length === 0) throw new StatisticsError('no probe has analysable responses in both cells at this position');
    // Each item's mean in each cell, and its difference (comparison − baseline).
    const means = (m: typeof b) =>
      items.map((k) => {
        const e = m.get(k) as { sum: number; n: number };
        return e.sum / e.n;
      });
    const bm = means(b);
    const cm = means(c);
    const counts = { sessions: 1, positions: 1 };
    const r = unitInference(
      cm.map((x, i) => x - (bm[i] as number)),
      'item',
      counts,
      options,
    );
    const bi = unitInference(bm, 'item', counts, options);
    const ci = unitInference(cm, 'item', counts, options);
    return {
      ...r,
      nPositions: 1,
      real: { estimate: bi.estimate, ci: bi.ci },
      filler: { estimate: ci.estimate, ci: ci.ci },
      nReal: items.reduce((s, k) => s + (b.get(k) as { n: number }).n, 0),
      nFiller: items.reduce((s, k) => s + (c.get(k) as { n: number }).n, 0),
    };
  });
