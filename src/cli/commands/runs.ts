import type { Command } from 'commander';
import { isSimulatedRun } from '../../gate/run-info.js';
import { openStore } from '../../store/run-store.js';
import { emit } from '../options.js';
import { cancelBatchesCommand } from './runs-cancel-batches.js';

function modelsOf(config: unknown): string {
  const c = (config ?? {}) as Record<string, unknown>;
  const list = [c.targets, c.judges, c.labeler].flat().filter((x): x is string => typeof x === 'string');
  return list.join(', ');
}

export function registerRuns(program: Command): void {
  const runs = program.command('runs').description('list or delete the runs of a run store');

  runs
    .command('list')
    .description('every run in a store: id, audit, status, cells by status, models, simulated or not')
    .argument('<run.db>', 'run store')
    .option('--json', 'one JSON array instead of the table')
    .action((db: string, options) => {
      const store = openStore(db, { readonly: true });
      try {
        const list = store.listRuns().map((r) => ({
          id: r.id,
          experiment: r.experiment,
          status: r.status,
          startedAt: r.startedAt,
          endedAt: r.endedAt,
          cells: r.counts,
          models: modelsOf(r.manifest.config),
          simulated: isSimulatedRun(r),
        }));
        if (options.json) {
          emit(JSON.stringify(list, null, 2));
          return;
        }
        if (list.length === 0) {
          emit(`no runs in ${db}`);
          return;
        }
        const lines = list.map(
          (r) =>
            `${r.id}  ${r.experiment}  ${r.status}  started ${r.startedAt}  cells ${r.cells.total} (done ${r.cells.done}, failed ${r.cells.failed}, pending ${r.cells.pending})  ${r.models}${r.simulated ? '  [SIMULATED]' : ''}`,
        );
        emit(lines.join('\n'));
      } finally {
        store.close();
      }
    });

  runs
    .command('rm')
    .description('delete runs from a store (cells no other run uses are deleted with them)')
    .argument('<run.db>', 'run store')
    .argument('<id...>', 'run ids (see `echolens runs list`)')
    .action((db: string, ids: string[]) => {
      const store = openStore(db);
      try {
        for (const id of ids) store.requireRun(id);
        for (const id of ids) {
          const { cellsRemoved } = store.deleteRun(id);
          process.stdout.write(`deleted run ${id} (${cellsRemoved} cells no other run used)\n`);
        }
      } finally {
        store.close();
      }
    });

  runs
    .command('cancel-batches')
    .description(
      'cancel the open OpenAI / Anthropic batches of a --batch run at the provider (lines already processed keep their results; re-run the same command to collect them and submit the rest again)',
    )
    .argument('<run.db>', 'run store')
    .option('--run <id>', 'only this run\u2019s batches (default: every open batch of the store)')
    .action(async (db: string, options: { run?: string }) => {
      process.exitCode = await cancelBatchesCommand(db, options.run);
    });
}
