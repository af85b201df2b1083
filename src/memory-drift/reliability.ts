import { InvalidArgumentError, StatisticsError } from '../core/errors.js';
import { agreement } from '../stats/index.js';
import { attempt, type Maybe } from '../core/maybe.js';
import { getOrInsert } from '../core/get-or-insert.js';

/**
 * Labeler reliability (DriftLens App. C.4), pure: exact-match agreement and Cohen's κ on
 * category–subcategory labels of the same reasoning steps, between labelers (Table 9), between
 * two runs of one labeler (Table 10: the caller passes runs made at T = 1) and between two
 * ontology wordings (Table 11).
 */

/** One label of one step. `label: null` = the labeler's output for this response was invalid. */
export interface LabelRecord {
  /** The labelled response (e.g. a generation cell key). */
  item: string;
  /** 1-based (or 0-based, consistently) step index within the response. */
  step: number;
  labeler: string;
  /** Labeling run (repeated labeling of the same responses). */
  run: string | number;
  /** Ontology wording (e.g. `original`, `rewritten`). */
  wording: string;
  label: string | null;
}

export interface LabelAgreement {
  /** Steps labelled validly on both sides. */
  n: number;
  /** Steps present on only one side. */
  unpaired: number;
  /** Steps present on both sides where at least one label is invalid (null). */
  invalid: number;
  /** Share of the n steps with identical labels. */
  exact: Maybe<number>;
  /** Cohen's κ (unweighted) over the label strings. */
  kappa: Maybe<number>;
}

export interface CrossModelAgreement extends LabelAgreement {
  wording: string;
  run: string;
  labelerA: string;
  labelerB: string;
}

export interface WithinModelAgreement extends LabelAgreement {
  labeler: string;
  wording: string;
  runA: string;
  runB: string;
}

export interface WordingAgreement extends LabelAgreement {
  labeler: string;
  run: string;
  wordingA: string;
  wordingB: string;
}

export interface LabelerReliability {
  crossModel: CrossModelAgreement[];
  /** Mean pairwise exact agreement per (wording, run) over the labeler pairs that have one. */
  crossModelMean: Array<{ wording: string; run: string; pairs: number; meanExact: number | null }>;
  withinModel: WithinModelAgreement[];
  wordings: WordingAgreement[];
}

type Labeling = Map<string, string | null>;

const stepKey = (item: string, step: number) => JSON.stringify([item, step]);

function checkRecords(records: readonly LabelRecord[]): void {
  if (!Array.isArray(records)) throw new InvalidArgumentError('records', 'expected an array of label records');
  const seen = new Set<string>();
  records.forEach((r, i) => {
    const at = `records[${i}]`;
    if (r === null || typeof r !== 'object') throw new InvalidArgumentError(at, 'expected { item, step, labeler, run, wording, label }');
    for (const key of ['item', 'labeler', 'wording'] as const) {
      if (typeof r[key] !== 'string' || r[key] === '') throw new InvalidArgumentError(`${at}.${key}`, 'must be a non-empty string');
    }
    if (!Number.isInteger(r.step) || r.step < 0) throw new InvalidArgumentError(`${at}.step`, `must be an integer ≥ 0, got ${String(r.step)}`);
    if (typeof r.run === 'number' ? !Number.isFinite(r.run) : typeof r.run !== 'string') {
      throw new InvalidArgumentError(`${at}.run`, 'must be a string or a finite number');
    }
    if (r.label !== null && (typeof r.label !== 'string' || r.label === '')) {
      throw new InvalidArgumentError(`${at}.label`, 'must be a non-empty string or null (invalid)');
    }
    const key = JSON.stringify([r.item, r.step, r.labeler, String(r.run), r.wording]);
    if (seen.has(key)) {
      throw new InvalidArgumentError(
        at,
        `duplicate label for item '${r.item}' step ${r.step} (labeler '${r.labeler}', run ${String(r.run)}, wording '${r.wording}')`,
      );
    }
    seen.add(key);
  });
}

function toLabeling(records: readonly LabelRecord[]): Labeling {
  const labeling: Labeling = new Map();
  for (const r of records) labeling.set(stepKey(r.item, r.step), r.label);
  return labeling;
}

function compare(left: Labeling, right: Labeling): LabelAgreement {
  const a: string[] = [];
  const b: string[] = [];
  let unpaired = 0;
  let invalid = 0;
  for (const [key, label] of left) {
    if (!right.has(key)) {
      unpaired += 1;
      continue;
    }
    const other = right.get(key) ?? null;
    if (label === null || other === null) {
      invalid += 1;
      continue;
    }
    a.push(label);
    b.push(other);
  }
  for (const key of right.keys()) if (!left.has(key)) unpaired += 1;
  const n = a.length;
  const empty = 'no step is labelled validly on both sides';
  let same = 0;
  for (let i = 0; i < n; i++) if (a[i] === b[i]) same += 1;
  return {
    n,
    unpaired,
    invalid,
    exact: n === 0 ? { error: empty } : same / n,
    kappa: attempt(() => {
      if (n === 0) throw new StatisticsError(empty);
      // κ on label strings through an index map (categories are unordered; only unweighted κ is used).
      const index = new Map([...new Set([...a, ...b])].sort().map((label, i) => [label, i]));
      return agreement(
        a.map((label) => index.get(label) as number),
        b.map((label) => index.get(label) as number),
        { categories: 'infer' },
      ).kappa;
    }),
  };
}

/** Agreement between two sets of labels of the same steps, joined on (item, step). */
export function labelAgreement(left: readonly LabelRecord[], right: readonly LabelRecord[]): LabelAgreement {
  checkRecords(left);
  checkRecords(right);
  return compare(toLabeling(left), toLabeling(right));
}

const sortedDistinct = (values: Iterable<string>) => [...new Set(values)].sort();

/** Every unordered pair of a list, in list order: (0, 1), (0, 2) … (1, 2) … */
function* pairsOf<T>(list: readonly T[]): Generator<[T, T]> {
  for (let i = 0; i < list.length; i++) for (let j = i + 1; j < list.length; j++) yield [list[i] as T, list[j] as T];
}

/**
 * Every agreement of App. C.4 that the records support: each labeler pair within a (wording,
 * run); each pair of runs within a (labeler, wording); each pair of wordings within a
 * (labeler, run).
 */
export function labelerReliability(records: readonly LabelRecord[]): LabelerReliability {
  checkRecords(records);
  const slices = new Map<string, LabelRecord[]>();
  for (const r of records) {
    const key = JSON.stringify([r.labeler, String(r.run), r.wording]);
    getOrInsert(slices, key, () => []).push(r);
  }
  const labelings = new Map<string, Labeling>();
  const labelingOf = (labeler: string, run: string, wording: string): Labeling | undefined => {
    const key = JSON.stringify([labeler, run, wording]);
    const list = slices.get(key);
    return list === undefined ? undefined : getOrInsert(labelings, key, () => toLabeling(list));
  };
  const labelers = sortedDistinct(records.map((r) => r.labeler));
  const runs = sortedDistinct(records.map((r) => String(r.run)));
  const wordings = sortedDistinct(records.map((r) => r.wording));

  const crossModel: CrossModelAgreement[] = [];
  const crossModelMean: LabelerReliability['crossModelMean'] = [];
  for (const wording of wordings) {
    for (const run of runs) {
      const exacts: number[] = [];
      let pairs = 0;
      for (const [labelerA, labelerB] of pairsOf(labelers)) {
        const a = labelingOf(labelerA, run, wording);
        const b = labelingOf(labelerB, run, wording);
        if (a === undefined || b === undefined) continue;
        const result = compare(a, b);
        crossModel.push({ wording, run, labelerA, labelerB, ...result });
        pairs += 1;
        if (typeof result.exact === 'number') exacts.push(result.exact);
      }
      if (pairs > 0) {
        crossModelMean.push({
          wording,
          run,
          pairs,
          meanExact: exacts.length > 0 ? exacts.reduce((s, v) => s + v, 0) / exacts.length : null,
        });
      }
    }
  }

  const withinModel: WithinModelAgreement[] = [];
  const wordingResults: WordingAgreement[] = [];
  for (const labeler of labelers) {
    for (const wording of wordings) {
      for (const [runA, runB] of pairsOf(runs)) {
        const a = labelingOf(labeler, runA, wording);
        const b = labelingOf(labeler, runB, wording);
        if (a !== undefined && b !== undefined) withinModel.push({ labeler, wording, runA, runB, ...compare(a, b) });
      }
    }
    for (const run of runs) {
      for (const [wordingA, wordingB] of pairsOf(wordings)) {
        const a = labelingOf(labeler, run, wordingA);
        const b = labelingOf(labeler, run, wordingB);
        if (a !== undefined && b !== undefined) wordingResults.push({ labeler, run, wordingA, wordingB, ...compare(a, b) });
      }
    }
  }
  return { crossModel, crossModelMean, withinModel, wordings: wordingResults };
}
