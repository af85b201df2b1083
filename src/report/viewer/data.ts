import { basename } from 'node:path';
import type { AnalyzedRun, AnyAudit } from '../../experiment/audit.js';
import { findAudit } from '../../experiment/registry.js';
import { analyzeAuditRun } from '../../experiment/analyze-run.js';
import type { RunInfo, RunStore } from '../../store/run-store.js';
import type { CellQuery, RunCellResultRecord } from '../../store/run-store-common.js';
import type { CellLabels, CellStatus } from '../../store/types.js';
import type { IndexedCell, Verdict } from './types.js';
import { mapSequential } from '../../core/map-sequential.js';

export type { IndexedCell, Verdict } from './types.js';

/**
 * What the viewer reads from the stores it was started with. Stores are fixed
 * at startup and addressed by index; runs by id inside a store; cells by key
 * inside a run. Nothing here takes a path from a request.
 */

export interface ViewerStore {
  index: number;
  file: string;
  name: string;
  store: RunStore;
}

export interface RunIndex {
  run: RunInfo;
  /** The answers the audit asked for (target and generation cells), plan order. */
  cells: IndexedCell[];
  /** Judge cells by key. */
  judgeCells: Map<string, IndexedCell>;
  /** Cells that grade or label an answer (judge and labeler calls) by key. */
  auxiliaryCells: Map<string, IndexedCell>;
  /**
   * The run's judge and labeler entries: one per graded answer, so identical requests (the same
   * judge call for two identical answers) count once per answer, as the run's cell counts do.
   */
  auxiliaryEntries: number;
  /** Winning verdict per target cell key and judge. */
  verdicts: Map<string, Map<string, Verdict>>;
  judges: string[];
  signature: string;
}

/** Stages whose cells grade or label another cell: counted apart from the answers. */
export const AUXILIARY_STAGES: ReadonlySet<string> = new Set(['judge', 'labeling']);

export interface CellFilter {
  /** Factor name → value the cell must have (any factor of the run: see design.ts). */
  labels: Partial<Record<string, string>>;
  /** Ranges on the per-cell numbers (DTW, SRI, fidelity), by measure name. */
  ranges?: Record<string, { min?: number; max?: number }>;
  status?: CellStatus;
  judge?: string;
  minScore?: number;
  maxScore?: number;
  /** Case-insensitive substring of the response text. */
  text?: string;
}

/** A run analysed by its registered audit. */
export interface RunAnalysis {
  audit: AnyAudit;
  analyzed: AnalyzedRun<unknown, unknown>;
}

export class ViewerData {
  readonly stores: ViewerStore[];
  private readonly indexes = new Map<string, RunIndex>();
  private readonly analyses = new Map<string, RunAnalysis>();
  /**
   * The cells the latest run index was built from, kept until that run's analysis reads them: the
   * run page needs both, and reading a run's cells once instead of twice (index, then analysis) was
   * a sixth of the page's time at paper scale (issue #44). One run's only, so memory stays bounded.
   */
  private indexedCells: { cacheKey: string; signature: string; cells: RunCellResultRecord[] } | undefined;

  constructor(stores: ReadonlyArray<{ file: string; store: RunStore }>) {
    this.stores = stores.map((s, index) => ({ index, file: s.file, name: basename(s.file), store: s.store }));
  }

  store(index: number): ViewerStore | undefined {
    return Number.isInteger(index) ? this.stores[index] : undefined;
  }

  /** Every run of every store, newest first within a store. */
  async runs(): Promise<Array<{ store: ViewerStore; run: RunInfo }>> {
    return (await mapSequential(this.stores, async (store) => (await store.store.listRuns()).map((run) => ({ store, run })))).flat();
  }

  async run(storeIndex: number, runId: string): Promise<RunIndex | undefined> {
    const store = this.store(storeIndex);
    const run = await store?.store.getRun(runId);
    if (!store || !run) return undefined;
    const signature = `${run.updatedAt}|${JSON.stringify(run.counts)}`;
    const cacheKey = `${storeIndex}\u0000${runId}`;
    const cached = this.indexes.get(cacheKey);
    if (cached && cached.signature === signature) return cached;
    const cells = await store.store.cellResultsOfRun(run.id);
    const index = buildRunIndex(cells, run, signature);
    this.indexes.set(cacheKey, index);
    this.analyses.delete(cacheKey);
    this.indexedCells = { cacheKey, signature, cells };
    return index;
  }

  /** The audit registered for a run's experiment, if any. */
  auditOf(run: RunInfo): AnyAudit | undefined {
    return findAudit(run.experiment);
  }

  /** A run's analysis by its audit (cached per run state), or undefined without a registered audit. */
  async analysis(storeIndex: number, runId: string): Promise<RunAnalysis | undefined> {
    const index = await this.run(storeIndex, runId);
    const audit = index ? this.auditOf(index.run) : undefined;
    if (!index || !audit) return undefined;
    const cacheKey = `${storeIndex}\u0000${runId}`;
    let analysis = this.analyses.get(cacheKey);
    if (!analysis) {
      const kept = this.indexedCells;
      let store = (this.store(storeIndex) as ViewerStore).store;
      if (kept !== undefined && kept.cacheKey === cacheKey && kept.signature === index.signature) {
        store = withRunCells(store, runId, kept.cells);
        this.indexedCells = undefined;
      }
      analysis = { audit, analyzed: await analyzeAuditRun(audit, store, index.run) };
      this.analyses.set(cacheKey, analysis);
    }
    return analysis;
  }

  async close(): Promise<void> {
    for (const s of this.stores) await s.store.close();
  }
}

/** The store as it is, except that the whole cell list of one run (no query) is the one already read. */
function withRunCells(store: RunStore, runId: string, cells: readonly RunCellResultRecord[]): RunStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'cellResultsOfRun') {
        return (id: string, query?: CellQuery) =>
          id === runId && (query === undefined || Object.keys(query).length === 0) ? Promise.resolve([...cells]) : target.cellResultsOfRun(id, query);
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

function toolNames(calls: unknown): string[] | undefined {
  return Array.isArray(calls) ? calls.map((c) => String((c as { name?: unknown }).name ?? '?')) : undefined;
}

/** The run's index from its cells as `cellResultsOfRun` reads them (labels, status, text; no requests). */
function buildRunIndex(records: readonly RunCellResultRecord[], run: RunInfo, signature: string): RunIndex {
  const cells: IndexedCell[] = [];
  const judgeCells = new Map<string, IndexedCell>();
  const auxiliaryCells = new Map<string, IndexedCell>();
  let auxiliaryEntries = 0;
  // Every judge link of the run: one judge cell (same request) can judge several target cells.
  const judgeLinks: IndexedCell[] = [];
  for (const record of records) {
    const tools = toolNames(record.result.toolCalls);
    const cell: IndexedCell = {
      key: record.key,
      ordinal: record.ordinal,
      labels: record.labels,
      status: record.result.status,
      text: record.result.text,
      model: record.model,
      ...(tools ? { toolCalls: tools } : {}),
    };
    if (!AUXILIARY_STAGES.has(String(cell.labels.stage))) {
      cells.push(cell);
      continue;
    }
    auxiliaryCells.set(cell.key, cell);
    auxiliaryEntries += 1;
    if (cell.labels.stage !== 'judge') continue;
    judgeCells.set(cell.key, cell);
    judgeLinks.push(cell);
  }
  // The audit reads its judge cells' re-ask chains (the same reading as its analysis).
  const verdicts = findAudit(run.experiment)?.viewer?.judgeVerdicts?.(judgeLinks) ?? new Map<string, Map<string, Verdict>>();
  const judges = new Set<string>();
  for (const byJudge of verdicts.values()) for (const judge of byJudge.keys()) judges.add(judge);
  return { run, cells, judgeCells, auxiliaryCells, auxiliaryEntries, verdicts, judges: [...judges].sort(), signature };
}

/** The score a cell shows: the chosen judge's, else the first judge's. */
export function scoreOf(index: RunIndex, key: string, judge?: string): Verdict | undefined {
  const byJudge = index.verdicts.get(key);
  if (!byJudge) return undefined;
  const wanted = judge ?? index.judges[0];
  return wanted === undefined ? undefined : byJudge.get(wanted);
}

/** Per-cell numbers by measure name (design.ts `cellMeasures`), for range filters. */
export type MeasureValues = ReadonlyMap<string, ReadonlyMap<string, number | null>>;

/** A number within [min, max] (either end may be open); a missing number is in no range. */
const inRange = (value: number | null | undefined, min?: number, max?: number): boolean =>
  value !== null && value !== undefined && !(min !== undefined && value < min) && !(max !== undefined && value > max);

export function filterCells(index: RunIndex, filter: CellFilter, measures: MeasureValues = new Map()): IndexedCell[] {
  const needle = filter.text?.toLowerCase();
  const scored = filter.minScore !== undefined || filter.maxScore !== undefined;
  return index.cells.filter((cell) => {
    for (const [name, value] of Object.entries(filter.labels)) {
      if (value !== undefined && value !== '' && String(cell.labels[name] ?? '') !== value) return false;
    }
    if (filter.status && cell.status !== filter.status) return false;
    if (needle && !(cell.text ?? '').toLowerCase().includes(needle)) return false;
    if (scored && !inRange(scoreOf(index, cell.key, filter.judge)?.score, filter.minScore, filter.maxScore)) return false;
    for (const [name, { min, max }] of Object.entries(filter.ranges ?? {})) {
      if ((min !== undefined || max !== undefined) && !inRange(measures.get(name)?.get(cell.key), min, max)) return false;
    }
    return true;
  });
}

/** The judge cells of one target cell (every attempt of every judge), for the cell page. */
export function judgeCellsOf(index: RunIndex, targetKey: string): IndexedCell[] {
  return [...index.judgeCells.values()].filter((cell) => String(cell.labels.targetKey) === targetKey);
}

export interface PairedCell {
  match: string;
  a: IndexedCell;
  b: IndexedCell;
  scoreA: number | null;
  scoreB: number | null;
}

/**
 * Cells of two runs that ask the same thing: same labels, ignoring the target
 * when the runs have no target in common (the usual "same grid, other model").
 */
export function pairCells(a: RunIndex, b: RunIndex): { pairs: PairedCell[]; byTarget: boolean } {
  const targetsA = new Set(a.cells.map((c) => String(c.labels.target ?? '')));
  const byTarget = b.cells.some((c) => targetsA.has(String(c.labels.target ?? '')));
  const matchKey = (labels: CellLabels) => {
    const entries = Object.entries(labels).filter(([name]) => byTarget || name !== 'target');
    entries.sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
    return JSON.stringify(entries);
  };
  const fromA = new Map(a.cells.map((cell) => [matchKey(cell.labels), cell]));
  const pairs: PairedCell[] = [];
  for (const cell of b.cells) {
    const match = matchKey(cell.labels);
    const other = fromA.get(match);
    if (!other) continue;
    pairs.push({ match, a: other, b: cell, scoreA: scoreOf(a, other.key)?.score ?? null, scoreB: scoreOf(b, cell.key)?.score ?? null });
  }
  return { pairs, byTarget };
}
