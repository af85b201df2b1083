import type { RunStore } from './run-store-common.js';

/** The reads a report repeats: each answered once per distinct argument list. */
const REPEATED_READS = new Set<PropertyKey>(['getRun', 'requireRun', 'listRuns', 'cellResultsOfRun']);

/**
 * A read-only store for one report (issue #44): a report's parts each read the run and its cells
 * (the analysis, the accounting, the verdict, the materials, the completeness check), and at paper
 * scale (28,800 cells) every `cellResultsOfRun` took over a second and every `getRun` a quarter
 * of one (it counts the run's cells by status). Through this view each of those reads happens once
 * per argument list (a run `listRuns` gave is not read again); a list comes back as a fresh array of the same records, which callers must
 * not change. Every other method goes to the store as it is. Only for stores nothing writes to
 * while the view lives (reports, gates, viewer pages).
 */
export function readOnce<S extends RunStore>(store: S): S {
  const answers = new Map<string, Promise<unknown>>();
  let listed: Array<{ id: string }> | undefined;
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (!REPEATED_READS.has(property)) return method.bind(target);
      return (...args: unknown[]) => {
        const key = `${String(property)}\u0000${JSON.stringify(args)}`;
        // A run the list already read is answered from it (each read counts the run's cells again).
        if ((property === 'getRun' || property === 'requireRun') && !answers.has(key)) {
          const run = listed?.find((r) => r.id === args[0]);
          if (run !== undefined) answers.set(key, Promise.resolve(run));
        }
        let answer = answers.get(key);
        if (answer === undefined) {
          answer = Promise.resolve(method.apply(target, args));
          answers.set(key, answer);
          answer.then(
            (result) => {
              if (property === 'listRuns') listed = result as Array<{ id: string }>;
            },
            // A failed read (an unknown run) is not kept: the next call fails the same way.
            () => answers.delete(key),
          );
        }
        return answer.then((result) => (Array.isArray(result) ? [...result] : result));
      };
    },
  });
}
