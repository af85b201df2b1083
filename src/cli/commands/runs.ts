import type { Command } from 'commander';
import { measurementOf } from '../../experiment/measurement.js';
import { incompleteRunMessage, stageProgressText } from '../../experiment/run-completeness.js';
import { isSimulatedRun } from '../../gate/run-info.js';
import { InputError } from '../../core/errors.js';
import { transferRuns } from '../../store/postgres/transfer.js';
import { verifyStoreFileForImport } from '../../store/import-verify.js';
import { checkStore, migrateStore } from '../../store/maintenance.js';
import { isPostgresUrl, openStore } from '../../store/run-store.js';
import { emit } from '../options.js';
import { closing } from '../../core/closing.js';
import { cancelBatchesCommand } from './runs-cancel-batches.js';
import { mapSequential } from '../../core/map-sequential.js';

function modelsOf(config: unknown): string {
  const c = (config ?? {}) as Record<string, unknown>;
  const list = [c.targets, c.judges, c.labeler].flat().filter((x): x is string => typeof x === 'string');
  return list.join(', ');
}

export function registerRuns(program: Command): void {
  const runs = program.command('runs').description('list, check, migrate, delete, export or import the runs of a run store, or cancel its open batches');

  runs
    .command('list')
    .description('every run in a store: id, audit, status, progress of each stage, cells by status, models, simulated or not')
    .argument('<run.db>', 'run store')
    .option('--json', 'one JSON array instead of the table')
    .action(async (db: string, options) => {
      await closing(openStore(db, { readonly: true }), async (store) => {
        const list = await mapSequential(await store.listRuns(), async (r) => {
          const stages = await store.stages(r.id);
          return {
            id: r.id,
            experiment: r.experiment,
            status: r.status,
            // Per stage: cells expected (null until known), registered and settled; `incomplete` says why the run is not done.
            stages: stages.map((s) => ({ stage: s.stage, expected: s.expected, registered: s.registered, settled: s.settled })),
            progress: stageProgressText(stages),
            incomplete: incompleteRunMessage(r, stages),
            startedAt: r.startedAt,
            endedAt: r.endedAt,
            cells: r.counts,
            models: modelsOf(r.manifest.config),
            simulated: isSimulatedRun(r),
            // The measurement it is (docs/over-time.md): runs of one design share `design`.
            design: measurementOf(r).designId,
            measuredAt: measurementOf(r).measuredAt,
            tag: measurementOf(r).tag,
          };
        });
        const lines = list.map(
          (r) =>
            `${r.id}  ${r.experiment}  ${r.status}${r.progress ? `  [${r.progress}]` : ''}  started ${r.startedAt}  cells ${r.cells.total} (done ${r.cells.done}, failed ${r.cells.failed}, pending ${r.cells.pending})  ${r.models}${r.tag ? `  tag ${r.tag}` : ''}${r.design !== r.id ? `  (measurement of ${r.design})` : ''}${r.simulated ? '  [SIMULATED]' : ''}`,
        );
        if (options.json) emit(JSON.stringify(list, null, 2));
        else emit(list.length === 0 ? `no runs in ${store.file}` : lines.join('\n'));
      });
    });

  runs
    .command('rm')
    .description('delete runs from a store (cells no other run uses are deleted with them)')
    .argument('<run.db>', 'run store')
    .argument('<id...>', 'run ids (see `echolens runs list`)')
    .action(async (db: string, ids: string[]) => {
      await closing(openStore(db), async (store) => {
        for (const id of ids) await store.requireRun(id);
        for (const id of ids) {
          const { cellsRemoved } = await store.deleteRun(id);
          process.stdout.write(`deleted run ${id} (${cellsRemoved} cells no other run used)\n`);
        }
      });
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

  runs
    .command('export')
    .description('copy runs from a PostgreSQL store into a SQLite file (plan, labels, results, status; the file is created if missing)')
    .argument('<url>', 'the PostgreSQL store (postgres:// or postgresql://)')
    .argument('<file.db>', 'the SQLite store to write')
    .option('--run <id...>', 'only these runs (default: every run)')
    .action((url: string, file: string, options) => copyRuns(url, file, options.run, 'export'));

  runs
    .command('import')
    .description('copy runs from a SQLite file into a PostgreSQL store (so that workers can join them)')
    .argument('<file.db>', 'the SQLite store to read')
    .argument('<url>', 'the PostgreSQL store (postgres:// or postgresql://)')
    .option('--run <id...>', 'only these runs (default: every run)')
    .action((file: string, url: string, options) => copyRuns(file, url, options.run, 'import'));

  runs
    .command('check')
    .description('check a store file: SQLite integrity check, echolens mark and schema version (exit 1 with the findings when damaged)')
    .argument('<run.db>', 'run store')
    .option('--json', 'the result as JSON')
    .action((db: string, options) => {
      const result = checkStore(db);
      if (options.json) emit(JSON.stringify(result, null, 2));
      else if (result.ok) emit(`${db}: ok (schema version ${result.schemaVersion})`);
      else emit([`${db}: damaged`, ...result.findings.map((f) => `  ${f}`)].join('\n'));
      if (!result.ok) process.exitCode = 1;
    });

  runs
    .command('migrate')
    .description('upgrade a store written by an older echolens to this version’s schema (read-only commands ask for this)')
    .argument('<run.db>', 'run store')
    .action(async (db: string) => {
      const { from, to } = await migrateStore(db);
      emit(from === to ? `${db}: already at schema version ${to}` : `${db}: migrated from schema version ${from} to ${to}`);
    });
}

async function copyRuns(from: string, to: string, ids: string[] | undefined, direction: 'export' | 'import'): Promise<void> {
  const url = direction === 'export' ? from : to;
  const file = direction === 'export' ? to : from;
  if (!isPostgresUrl(url)) throw new InputError(`runs ${direction} needs a postgres:// or postgresql:// URL, got ${JSON.stringify(url)}`, { field: '<url>' });
  if (isPostgresUrl(file)) throw new InputError(`runs ${direction} needs a SQLite file, got a URL`, { field: '<file.db>' });
  // Everything a file from elsewhere holds is checked before it is opened as a store (store/import-verify.ts).
  if (direction === 'import') verifyStoreFileForImport(file, ids);
  await closing(openStore(from, { readonly: true }), async (source) => {
    await closing(openStore(to), async (target) => {
      const result = await transferRuns(source, target, ids);
      for (const run of result.runs) process.stdout.write(`copied run ${run.id}: ${run.cells} cells, ${run.results} results\n`);
      if (result.runs.length === 0) process.stdout.write(`no runs in ${source.file}\n`);
    });
  });
}
