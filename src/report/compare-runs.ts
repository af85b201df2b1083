import type { ContinuationCollected, ContinuationReport } from '../continuation/run.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { AnalyzedRun } from '../experiment/audit.js';
import { type MemoryMetric, type MemoryReport, scoreTrajectories } from '../memory-drift/analysis.js';
import type { MemoryCollection } from '../memory-drift/observations.js';
import { NO_PERTURBATION } from '../memory-drift/perturbations.js';
import type { PersonaReport } from '../persona-drift/analysis.js';
import type { RunInfo } from '../store/run-store.js';
import { meanOfClusterMeans, type PairedDifference, type PairedUnit, pairedBootstrapDifference } from '../stats/paired-bootstrap.js';

/**
 * Two runs of the same audit compared number by number: the B − A difference of each headline
 * statistic with a paired bootstrap interval over the design units the runs share (persona:
 * positions, or sessions when the shared positions span several; memory: questions;
 * continuation: cutpoints). Pure over the two analysed runs. docs/statistics.md, "Comparing runs".
 */

export interface RunDifference {
  /** The headline statistic, e.g. "drift gap Δ (filler − real)". */
  statistic: string;
  /** What it is measured on in each run (target, judge, tier …): "A-subject ⇄ B-subject" when they differ. */
  subject: string;
  /** The unit the bootstrap draws. */
  unit: string;
  /** How to print it: plain numbers or fractions shown as percentages. */
  scale: 'number' | 'percent';
  result: PairedDifference | { error: string };
}

export interface RunComparison {
  audit: string;
  a: string;
  b: string;
  B: number;
  seed: number;
  rows: RunDifference[];
}

export interface CompareRunsOptions {
  B?: number;
  seed?: number;
}

/** Refuses runs of different audits (nothing they measure is comparable). */
export function checkSameAudit(a: RunInfo, b: RunInfo, names: { a: string; b: string } = { a: 'run A', b: 'run B' }): void {
  if (a.experiment !== b.experiment) {
    throw new InvalidArgumentError(
      'compare',
      `${names.a} (${a.id}) is a ${a.experiment} run and ${names.b} (${b.id}) a ${b.experiment} run; compare only runs of the same audit`,
    );
  }
}

const attempt = (f: () => PairedDifference): PairedDifference | { error: string } => {
  try {
    return f();
  } catch (error) {
    return { error: (error as Error).message };
  }
};

/** Rows of A and B to compare: the same subject in both, else (one each, or the same count) in order. */
function matchSubjects<T>(a: readonly T[], b: readonly T[], key: (x: T) => string): Array<[T, T, string]> {
  const byKey = new Map(b.map((x) => [key(x), x]));
  const shared = a.filter((x) => byKey.has(key(x)));
  if (shared.length > 0) return shared.map((x) => [x, byKey.get(key(x)) as T, key(x)]);
  if (a.length !== b.length) return [];
  return a.map((x, i) => [x, b[i] as T, `${key(x)} ⇄ ${key(b[i] as T)}`]);
}

function sharedUnits<V>(a: ReadonlyMap<string, V>, b: ReadonlyMap<string, V>, cluster: (unit: string) => string): PairedUnit<V>[] {
  return [...a.keys()].filter((k) => b.has(k)).sort().map((k) => ({ cluster: cluster(k), a: a.get(k) as V, b: b.get(k) as V }));
}

// ---- persona: the drift gap over positions ----

function personaRows(a: PersonaReport, b: PersonaReport, options: Required<CompareRunsOptions>): RunDifference[] {
  return matchSubjects(a.drift, b.drift, (d) => `${d.target} · judge ${d.judge}`).map(([da, db, subject]) => {
    const unitValues = (d: typeof da) => {
      const out = new Map<string, { session: string; value: number }>();
      for (const p of d.byPosition) if (!('error' in p.gap)) out.set(`${p.session}\u0000${p.position}`, { session: p.session, value: p.gap.estimate });
      return out;
    };
    const va = unitValues(da);
    const vb = unitValues(db);
    const sessions = new Set([...va.keys()].filter((k) => vb.has(k)).map((k) => k.split('\u0000')[0]));
    // Several sessions: sessions are the units (positions averaged within each), as in the report.
    const bySession = sessions.size >= 2;
    const units = sharedUnits(va, vb, (k) => (bySession ? (k.split('\u0000')[0] as string) : k));
    return {
      statistic: 'drift gap Δ (filler − real)',
      subject,
      unit: bySession ? 'session' : 'position',
      scale: 'number',
      result: attempt(() => pairedBootstrapDifference(units, (clusters) => meanOfClusterMeans(clusters.map((c) => c.map((u) => u.value))), options)),
    };
  });
}

// ---- memory: tier elevations over questions ----

type Sums = { tn: number; ts: number; fn: number; fs: number };

function memoryQuestionSums(collection: MemoryCollection, target: string, metric: MemoryMetric, tier: string): Map<string, Sums> {
  const observations = scoreTrajectories(
    collection.records.map((r) => r.sample),
    { pairing: collection.config.analysis.pairing },
  ).observations;
  const out = new Map<string, Sums>();
  for (const o of observations) {
    const value = o[metric];
    if (o.target !== target || o.status !== 'scored' || value === null) continue;
    const floor = o.condition === NO_PERTURBATION;
    if (!floor && o.tier !== tier) continue;
    let s = out.get(o.question);
    if (!s) {
      s = { tn: 0, ts: 0, fn: 0, fs: 0 };
      out.set(o.question, s);
    }
    if (floor) {
      s.fn += 1;
      s.fs += value;
    } else {
      s.tn += 1;
      s.ts += value;
    }
  }
  return out;
}

/** μ_tier / μ_floor − 1 over every row of the drawn questions (the report's elevation). */
function elevationOf(clusters: readonly (readonly Sums[])[]): number | null {
  let tn = 0;
  let ts = 0;
  let fn = 0;
  let fs = 0;
  for (const c of clusters) {
    for (const s of c) {
      tn += s.tn;
      ts += s.ts;
      fn += s.fn;
      fs += s.fs;
    }
  }
  if (tn === 0 || fn === 0 || !(fs > 0)) return null;
  return ts / tn / (fs / fn) - 1;
}

function memoryRows(a: AnalyzedRun<MemoryCollection, MemoryReport>, b: AnalyzedRun<MemoryCollection, MemoryReport>, options: Required<CompareRunsOptions>): RunDifference[] {
  const rows: RunDifference[] = [];
  for (const [ta, tb, subject] of matchSubjects(a.report.targets, b.report.targets, (t) => t.target)) {
    for (const metric of ['dtw', 'sri'] as const) {
      for (const tier of ta.metrics[metric].tiers.map((t) => t.tier)) {
        if (!tb.metrics[metric].tiers.some((t) => t.tier === tier)) continue;
        const units = sharedUnits(memoryQuestionSums(a.collected, ta.target, metric, tier), memoryQuestionSums(b.collected, tb.target, metric, tier), (q) => q);
        rows.push({
          statistic: `${metric.toUpperCase()} elevation over the no-memory floor · ${tier}`,
          subject,
          unit: 'question',
          scale: 'percent',
          result: attempt(() => pairedBootstrapDifference(units, elevationOf, options)),
        });
      }
    }
  }
  return rows;
}

// ---- continuation: recent − cross fidelity over cutpoints ----

function continuationDiffs(collected: ContinuationCollected, target: string, arms: { a: string; b: string }, itt: boolean): Map<string, number> {
  const byCut = new Map<string, Map<string, (typeof collected.observations)[number]>>();
  for (const o of collected.observations) {
    if (o.target !== target) continue;
    let m = byCut.get(o.cutpoint);
    if (!m) {
      m = new Map();
      byCut.set(o.cutpoint, m);
    }
    m.set(o.arm, o);
  }
  const score = (o: (typeof collected.observations)[number]) => (o.status === 'call' && o.fidelity !== null ? o.fidelity : 0);
  const out = new Map<string, number>();
  for (const [cut, m] of byCut) {
    const x = m.get(arms.a);
    const y = m.get(arms.b);
    if (!x?.generated || !y?.generated) continue;
    if (itt) out.set(cut, score(x) - score(y));
    else if (x.status === 'call' && y.status === 'call' && x.fidelity !== null && y.fidelity !== null) out.set(cut, x.fidelity - y.fidelity);
  }
  return out;
}

function continuationRows(
  a: AnalyzedRun<ContinuationCollected, ContinuationReport>,
  b: AnalyzedRun<ContinuationCollected, ContinuationReport>,
  options: Required<CompareRunsOptions>,
): RunDifference[] {
  const arms = a.report.analysis.primary;
  const rows: RunDifference[] = [];
  for (const [ta, tb, subject] of matchSubjects(a.report.analysis.targets, b.report.analysis.targets, (t) => t.target)) {
    for (const [name, itt] of [
      ['complete case', false],
      ['intention to treat', true],
    ] as const) {
      const units = sharedUnits(continuationDiffs(a.collected, ta.target, arms, itt), continuationDiffs(b.collected, tb.target, arms, itt), (c) => c);
      rows.push({
        statistic: `argument fidelity ${arms.a} − ${arms.b} · ${name}`,
        subject,
        unit: 'cutpoint',
        scale: 'number',
        result: attempt(() => pairedBootstrapDifference(units, (clusters) => meanOfClusterMeans(clusters.map((c) => [...c])), options)),
      });
    }
  }
  return rows;
}

/** The B − A differences of two analysed runs of one audit (persona, memory or continuation). */
export function compareAnalyzedRuns(audit: string, a: AnalyzedRun<unknown, unknown>, b: AnalyzedRun<unknown, unknown>, options: CompareRunsOptions = {}): RunComparison {
  checkSameAudit(a.run, b.run);
  const resolved = { B: options.B ?? 2000, seed: options.seed ?? 42 };
  let rows: RunDifference[];
  switch (audit) {
    case 'persona':
      rows = personaRows(a.report as PersonaReport, b.report as PersonaReport, resolved);
      break;
    case 'memory':
      rows = memoryRows(a as AnalyzedRun<MemoryCollection, MemoryReport>, b as AnalyzedRun<MemoryCollection, MemoryReport>, resolved);
      break;
    case 'continuation':
      rows = continuationRows(a as AnalyzedRun<ContinuationCollected, ContinuationReport>, b as AnalyzedRun<ContinuationCollected, ContinuationReport>, resolved);
      break;
    default:
      rows = [];
  }
  return { audit, a: a.run.id, b: b.run.id, ...resolved, rows };
}

const signed = (x: number, digits = 2) => (x >= 0 ? `+${x.toFixed(digits)}` : x.toFixed(digits));

/** "A → B, B − A [CI]" for one row, in the row's scale. */
export function differenceText(row: RunDifference): { a: string; b: string; difference: string } {
  if ('error' in row.result) return { a: '—', b: '—', difference: `n/a (${row.result.error})` };
  const r = row.result;
  if (row.scale === 'percent') {
    const pct = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(0)}%`;
    const pp = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(0)} pp`;
    return { a: pct(r.a), b: pct(r.b), difference: `${pp(r.difference)} [${pp(r.ci[0])}, ${pp(r.ci[1])}]` };
  }
  return { a: signed(r.a), b: signed(r.b), difference: `${signed(r.difference)} [${signed(r.ci[0])}, ${signed(r.ci[1])}]` };
}
