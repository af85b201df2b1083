import { InvalidArgumentError } from '../core/errors.js';
import { designsOf, measurementOf } from '../experiment/measurement.js';
import { findAudit } from '../experiment/registry.js';
import { analyzeAuditRun } from '../experiment/analyze-run.js';
import { requireCompleteRun, runIncompleteness } from '../experiment/run-completeness.js';
import type { RunInfo, RunStore } from '../store/run-store.js';
import { type BaselineOptions, type BaselineRow, compareSeries, type SeriesHeadline, seriesHeadline } from './baseline.js';
import type { AuditSeries } from './compare-types.js';
import { mapSequential } from '../core/map-sequential.js';

/**
 * Drift over time read from a store: the runs of each design in the order they were measured,
 * with their headline estimates and the model versions the providers reported
 * (`echolens history`, the viewer's trend page), and the two runs a baseline comparison pairs
 * (`echolens compare --baseline`, `echolens gate --baseline`). docs/over-time.md.
 */

export interface HistoryEntry {
  run: string;
  audit: string;
  measuredAt: string;
  tag: string | null;
  status: RunInfo['status'];
  /** Why the run cannot be analysed yet (unfinished stages), else null. */
  incomplete: string | null;
  /** Per requested model, the model ids (and fingerprints) the provider said answered, sorted. */
  models: Record<string, string[]>;
  /** True when a model's reported versions differ from the previous run's. */
  modelChanged: boolean;
  headlines: SeriesHeadline[];
}

export interface DesignHistory {
  design: string;
  audit: string;
  runs: HistoryEntry[];
}

/** Each requested model with the versions the provider reported for the run's cells. */
export async function runModels(store: RunStore, runId: string): Promise<Record<string, string[]>> {
  const out = new Map<string, Set<string>>();
  for (const cell of await store.cellResultsOfRun(runId)) {
    const set = out.get(cell.model) ?? new Set<string>();
    if (cell.result.responseModel) set.add(cell.result.responseModel);
    out.set(cell.model, set);
  }
  return Object.fromEntries([...out].sort(([a], [b]) => a.localeCompare(b)).map(([model, versions]) => [model, [...versions].sort()]));
}

/** The audit's series of a complete run (none when the audit has no `overTime` member). */
export async function runSeries(store: RunStore, run: RunInfo, options: { B?: number } = {}): Promise<AuditSeries[]> {
  const audit = findAudit(run.experiment);
  if (!audit?.overTime) return [];
  await requireCompleteRun(store, run.id);
  return audit.overTime(await analyzeAuditRun(audit, store, run, options.B ? { B: options.B } : {}));
}

const sameModels = (a: Record<string, string[]>, b: Record<string, string[]>) =>
  Object.keys(a).every((m) => b[m] === undefined || a[m]?.join('\n') === b[m]?.join('\n'));

/** Every design of the store (or of one audit / one design), runs oldest first, each analysed when complete. */
export async function storeHistory(store: RunStore, options: { audit?: string; design?: string; B?: number } & BaselineOptions = {}): Promise<DesignHistory[]> {
  const out: DesignHistory[] = [];
  for (const [design, runs] of designsOf(await store.listRuns(), options.audit)) {
    if (options.design !== undefined && design !== options.design) continue;
    if (!findAudit(runs[0]?.experiment ?? '')) continue;
    let previous: Record<string, string[]> | null = null;
    const entries = await mapSequential(runs, async (run): Promise<HistoryEntry> => {
      const m = measurementOf(run);
      const incomplete = await runIncompleteness(store, run);
      const models = await runModels(store, run.id);
      const headlines = incomplete === null ? (await runSeries(store, run)).map((s) => seriesHeadline(s, options)) : [];
      const modelChanged = previous !== null && !sameModels(models, previous);
      previous = models;
      return { run: run.id, audit: run.experiment, measuredAt: m.measuredAt, tag: m.tag, status: run.status, incomplete, models, modelChanged, headlines };
    });
    out.push({ design, audit: runs[0]?.experiment as string, runs: entries });
  }
  return out;
}

export interface BaselinePair {
  design: string;
  audit: string;
  baseline: RunInfo;
  latest: RunInfo;
}

/**
 * The runs a baseline comparison pairs, per design: `against` (default `latest`: the design's
 * latest measurement, or a run id / tag) and `baseline` (`first`, `latest`, a run id, or a tag:
 * the latest run carrying it). A run id picks its own design; `first` and a tag apply to every
 * design of the store (of `audit` when given) that has that baseline and a later run.
 */
export async function baselinePairs(
  store: RunStore,
  spec: { baseline: string; against?: string; audit?: string; allowSingle?: boolean },
): Promise<{ pairs: BaselinePair[]; notes: string[]; single: string[] }> {
  if (spec.audit !== undefined && !findAudit(spec.audit)) throw new InvalidArgumentError('--audit', `no audit named "${spec.audit}"`);
  const runs = await store.listRuns();
  const named = runs.find((r) => r.id === spec.baseline);
  const designs = designsOf(runs, spec.audit);
  const pairs: BaselinePair[] = [];
  const notes: string[] = [];
  /** Designs with one measurement only (the first run of a scheduled job: its baseline). */
  const single: string[] = [];
  const pick = (list: readonly RunInfo[], which: string, flag: string): RunInfo | undefined => {
    if (which === 'first') return list[0];
    if (which === 'latest') return list.at(-1);
    const byId = list.find((r) => r.id === which);
    if (byId) return byId;
    const tagged = list.filter((r) => measurementOf(r).tag === which);
    if (tagged.length > 0) return tagged.at(-1);
    if (runs.some((r) => r.id === which))
      throw new InvalidArgumentError(flag, `run ${which} is a measurement of another design than the ${flag === '--baseline' ? 'one compared' : 'baseline'}`);
    return undefined;
  };
  for (const [design, list] of designs) {
    if (named && measurementOf(named).designId !== design) continue;
    const audit = list[0]?.experiment as string;
    if (!findAudit(audit)) continue;
    const baseline = pick(list, spec.baseline, '--baseline');
    const latest = pick(list, spec.against ?? 'latest', '--against');
    if (!baseline || !latest) {
      notes.push(
        `${design}: no ${!baseline ? `baseline "${spec.baseline}"` : `run "${spec.against}"`} among its ${list.length} measurement${list.length === 1 ? '' : 's'}`,
      );
      continue;
    }
    if (baseline.id === latest.id) {
      if (list.length === 1) single.push(design);
      notes.push(`${design}: one measurement only (${latest.id}); measure again with --fresh to compare`);
      continue;
    }
    pairs.push({ design, audit, baseline, latest });
  }
  if (pairs.length === 0 && !(spec.allowSingle && single.length > 0)) {
    const known = [...designs.keys()];
    throw new InvalidArgumentError(
      '--baseline',
      known.length === 0
        ? `the store holds no run${spec.audit ? ` of ${spec.audit}` : ''} to compare`
        : `nothing to compare: ${notes.join('; ') || `no design has the baseline "${spec.baseline}"`}`,
    );
  }
  return { pairs, notes, single };
}

export interface BaselineComparison {
  design: string;
  audit: string;
  baseline: { run: string; measuredAt: string; tag: string | null; models: Record<string, string[]> };
  latest: { run: string; measuredAt: string; tag: string | null; models: Record<string, string[]> };
  rows: BaselineRow[];
}

/** Both runs analysed (each must be complete) and compared unit by unit. */
export async function compareToBaseline(store: RunStore, pair: BaselinePair, options: { B?: number } & BaselineOptions = {}): Promise<BaselineComparison> {
  const side = async (run: RunInfo) => {
    const m = measurementOf(run);
    return { run: run.id, measuredAt: m.measuredAt, tag: m.tag, models: await runModels(store, run.id) };
  };
  return {
    design: pair.design,
    audit: pair.audit,
    baseline: await side(pair.baseline),
    latest: await side(pair.latest),
    rows: compareSeries(await runSeries(store, pair.baseline), await runSeries(store, pair.latest), options),
  };
}
