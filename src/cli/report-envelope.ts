import { accountedCounts, unfinishedCells } from '../report/document/build.js';
import { reportVerdict, verdictMarkdown } from '../gate/verdict.js';
import { accountRun } from '../report/report.js';
import type { RunStore } from '../store/run-store.js';

/**
 * What every single-audit JSON and Markdown report carries besides its
 * numbers: the gate's verdict, `simulated`, and the run's manifest.
 */
export async function reportEnvelope(store: RunStore, runId: string, reports: Readonly<Record<string, unknown>>) {
  const run = await store.requireRun(runId);
  const account = await accountRun(store, runId);
  // The run's cells as the result document counts them (the same figures as `runs list` and the viewer),
  // from the cells the accounting read rather than a second count by the store.
  const counts = accountedCounts(account);
  const unfinished = unfinishedCells(counts);
  const verdict = reportVerdict(run, reports, { total: counts.cells, unfinished }, account.notComputable);
  return {
    /** The line a finished run ends with when its answers fail the sanity check (gate/sanity.ts), else null. */
    notComputableLine: verdict.notComputable === undefined ? null : `verdict: NOT COMPUTABLE — ${verdict.notComputable}`,
    json: { verdict: verdict.verdict, simulated: verdict.simulated, gate: verdict, manifest: run.manifest },
    /** Inserts the verdict block after the Markdown report's title. */
    markdown: (report: string) => {
      const block = verdictMarkdown(run, verdict);
      const cut = report.indexOf('\n\n');
      return cut < 0 ? `${block}${report}` : `${report.slice(0, cut + 2)}${block}${report.slice(cut + 2)}`;
    },
  };
}
