import { InvalidArgumentError } from '../../core/errors.js';
import { requestKeys } from '../request-hash.js';
import type { CellOutcome, RunInfo, RunStore } from '../run-store-common.js';
import { SqlStore } from '../sql/sql-store.js';
import type { CellSpec } from '../types.js';

/**
 * Copies runs between stores of either backend (`echolens runs export / import`):
 * the run row (manifest, status, summary, times), its plan (requests with their
 * labels, in plan order, under the same cell keys) and every finished result. A
 * cell the destination already finished keeps its answer (a `done` cell is final
 * in every store). Open provider batch jobs are not copied: collect them first.
 */

export interface TransferResult {
  runs: Array<{ id: string; cells: number; results: number; skipped: boolean }>;
}

export async function transferRuns(source: RunStore, target: RunStore, ids?: readonly string[]): Promise<TransferResult> {
  const runs: RunInfo[] = [];
  if (ids === undefined || ids.length === 0) runs.push(...(await source.listRuns()).reverse());
  else for (const id of ids) runs.push(await source.requireRun(id));
  const out: TransferResult = { runs: [] };
  for (const run of runs) {
    if ((await target.getRun(run.id)) !== undefined) {
      throw new InvalidArgumentError('run', `run ${run.id} is already in ${target.file}; delete it there first (echolens runs rm) or choose other runs`);
    }
    const cells = await source.cellsOfRun(run.id);
    // The model name each provider reported (not part of CellResult).
    const responseModels = source instanceof SqlStore ? await source.responseModelsOfRun(run.id) : new Map<string, string | null>();
    const specs: CellSpec[] = cells.map((cell) => ({ request: cell.request, labels: cell.labels }));
    // The source's keys, whatever identity rule wrote them (content keys recomputed: they are a pure function of the request).
    const identities = cells.map((cell) => ({ key: cell.key, contentKey: requestKeys(cell.request).contentKey }));
    let written = 0;
    await target.transaction(async () => {
      await target.createRun(run.manifest, { id: run.id });
      await target.registerCells(run.id, specs, identities);
      const existing = await target.getCells(cells.map((cell) => cell.key));
      const seen = new Set<string>();
      const items: Array<{ key: string; outcome: CellOutcome }> = [];
      for (const cell of cells) {
        if (seen.has(cell.key) || cell.result.status === 'pending') continue;
        seen.add(cell.key);
        if (existing.get(cell.key)?.status !== 'pending') continue;
        const r = cell.result;
        items.push({
          key: cell.key,
          outcome: {
            status: r.status as CellOutcome['status'],
            attempts: r.attempts,
            text: r.text,
            reasoning: r.reasoning,
            finishReason: r.finishReason,
            responseModel: responseModels.get(cell.key) ?? null,
            usage: r.usage,
            latencyMs: r.latencyMs,
            costUsd: r.costUsd,
            errorClass: r.errorClass,
            errorMessage: r.errorMessage,
            startedAt: r.startedAt ?? '',
            finishedAt: r.finishedAt ?? '',
            ...(r.toolCalls ? { toolCalls: r.toolCalls } : {}),
          },
        });
      }
      written = (await target.recordResults(items)).filter(Boolean).length;
      await target.setRunStatus(run.id, run.status, run.summary ?? undefined);
      // The run keeps its own times (createRun stamps the moment of the copy).
      if (target instanceof SqlStore) await target.setRunTimes(run.id, run.startedAt, run.updatedAt, run.endedAt);
    });
    out.runs.push({ id: run.id, cells: cells.length, results: written, skipped: false });
  }
  return out;
}
