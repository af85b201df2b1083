import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeAuditRun } from '../../experiment/analyze-run.js';
import { findAudit } from '../../experiment/registry.js';
import { openStore, type RunStore } from '../../store/run-store.js';
import { personaRuns } from '../../testing/audit-runs.js';
import { AUXILIARY_STAGES, ViewerData } from './data.js';

/** The store, counting how often each read of a run's cells is made. */
function countingReads(store: RunStore): { store: RunStore; reads: Record<string, number> } {
  const reads: Record<string, number> = { cellResultsOfRun: 0, cellIndexOfRun: 0 };
  const counted = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (typeof property === 'string' && property in reads) reads[property] = (reads[property] ?? 0) + 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: counted, reads };
}

describe('the viewer reads a run once for its index and its analysis (issue #44)', { timeout: 300_000 }, () => {
  it('builds the run index from the cells the analysis reads, with the fields the cell index read gives, and the same analysis', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'echolens-viewer-data-')), 'runs.db');
    const [runId] = (await personaRuns(db, ['sim:persona'])) as [string];
    const plain = openStore(db, { readonly: true });
    const { store, reads } = countingReads(openStore(db, { readonly: true }));
    const data = new ViewerData([{ file: db, store }]);
    try {
      const index = await data.run(0, runId);
      const analysis = await data.analysis(0, runId);
      expect(reads).toEqual({ cellResultsOfRun: 1, cellIndexOfRun: 0 });

      // Every cell as the index read of the store gives it: answers in plan order, judge cells by key.
      const rows = await plain.cellIndexOfRun(runId);
      const fromRows = rows.map((row) => ({
        key: row.key,
        ordinal: row.ordinal,
        labels: JSON.parse(row.labels),
        status: row.status,
        text: row.text,
        model: row.model,
      }));
      const auxiliary = (cell: { labels: Record<string, unknown> }) => AUXILIARY_STAGES.has(String(cell.labels.stage));
      expect(index?.cells).toEqual(fromRows.filter((cell) => !auxiliary(cell)));
      expect(index?.auxiliaryCells).toEqual(new Map(fromRows.filter(auxiliary).map((cell) => [cell.key, cell])));
      expect(index?.judgeCells.size).toBeGreaterThan(0);

      const run = await plain.requireRun(runId);
      const audit = findAudit('persona');
      if (audit === undefined) throw new Error('persona audit not registered');
      expect(analysis?.analyzed.report).toEqual((await analyzeAuditRun(audit, plain, run)).report);

      // A second page of the same run reads nothing again.
      await data.analysis(0, runId);
      expect(reads.cellResultsOfRun).toBe(1);
    } finally {
      await data.close();
      await plain.close();
    }
  });
});
