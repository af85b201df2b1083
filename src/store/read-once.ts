import { type RunCellResultRecord, type RunHead, type RunInfo, type RunStore, tallyCounts } from './run-store-common.js';
import type { CellStatus } from './types.js';

/** The reads a report repeats: each answered once per distinct argument list. */
const REPEATED_READS = new Set<PropertyKey>(['getRun', 'requireRun', 'listRuns', 'listRunHeads', 'cellResultsOfRun']);

/** A run's counts by status from its cells as `cellResultsOfRun` gives them (the rows the store's count joins). */
function countsOfCells(cells: readonly RunCellResultRecord[]): RunInfo['counts'] {
  const byStatus = new Map<CellStatus, number>();
  for (const cell of cells) byStatus.set(cell.result.status, (byStatus.get(cell.result.status) ?? 0) + 1);
  return tallyCounts([...byStatus].map(([status, n]) => ({ status, n })));
}

/**
 * A read-only store for one report (issue #44): a report's parts each read the run and its cells
 * (the analysis, the accounting, the verdict, the materials, the completeness check), and at paper
 * scale (28,800 cells) every `cellResultsOfRun` took over a second and every `getRun` a quarter
 * of one (it counts the run's cells by status). Through this view each of those reads happens once
 * per argument list; a list comes back as a fresh array of the same records, which callers must
 * not change. A run is read without the store's count (`listRunHeads`) and its counts are taken
 * from its cells, which every report, gate and run page reads in full anyway (a run `listRuns`
 * gave is answered from that list). Every other method goes to the store as it is. Only for
 * stores nothing writes to while the view lives (reports, gates, viewer pages).
 */
export function readOnce<S extends RunStore>(store: S): S {
  const answers = new Map<string, Promise<unknown>>();
  let listed: RunInfo[] | undefined;
  let view: S;
  /** The run with counts from its cells, or undefined when the store has no such run. */
  const runOf = async (id: unknown): Promise<RunInfo | undefined> => {
    const head: RunHead | undefined = (await view.listRunHeads()).find((r) => r.id === id);
    if (head === undefined) return undefined;
    return { ...head, counts: countsOfCells(await view.cellResultsOfRun(head.id)) };
  };
  view = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (!REPEATED_READS.has(property)) return method.bind(target);
      return (...args: unknown[]) => {
        const key = `${String(property)}\u0000${JSON.stringify(args)}`;
        let answer = answers.get(key);
        if (answer === undefined) {
          if (property === 'getRun' || property === 'requireRun') {
            const run = listed?.find((r) => r.id === args[0]);
            // An unknown run goes to the store, which answers undefined or fails as it always does.
            answer = run !== undefined ? Promise.resolve(run) : runOf(args[0]).then((found) => found ?? method.apply(target, args));
          } else answer = Promise.resolve(method.apply(target, args));
          answers.set(key, answer);
          answer.then(
            (result) => {
              if (property === 'listRuns') listed = result as RunInfo[];
            },
            // A failed read (an unknown run) is not kept: the next call fails the same way.
            () => answers.delete(key),
          );
        }
        return answer.then((result) => (Array.isArray(result) ? [...result] : result));
      };
    },
  });
  return view;
}
