import { spendOrNull } from '../../core/money.js';
import type { Command } from 'commander';
import { InputError } from '../../core/errors.js';
import { isPostgresUrl, openStore } from '../../store/run-store.js';
import type { PgRunStore } from '../../store/postgres/pg-store.js';
import { workCells } from '../../execution/worker.js';
import { interruptSignals } from '../../store/interrupt.js';
import { positiveNumber, numberOption } from '../options.js';

/**
 * `echolens worker --db <postgres url>`: joins the runs of a shared store. The plan
 * (every request) is in the store, so a worker needs no config file, only the API
 * keys of the providers it calls, from its own environment (never written to the store).
 */
export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description('work the pending cells of a shared PostgreSQL run store (join a run from another machine)')
    .option('--db <url>', 'the store: a postgres:// or postgresql:// URL (default: $ECHOLENS_DB); put the password in PGPASSWORD or ~/.pgpass, not in the URL')
    .option('--run <id>', 'work only this run (default: every running run of the store)')
    .addOption(numberOption('--concurrency <n>', 'calls in flight at once (default 8)', positiveNumber))
    .addOption(
      numberOption('--idle-exit <seconds>', 'exit once no running run has had a pending cell for this long (default: keep waiting for work)', positiveNumber),
    )
    .addOption(numberOption('--lease <seconds>', 'how long a claimed cell stays this worker\u2019s without a renewal (default 30)', positiveNumber))
    .addHelpText(
      'after',
      `\nA worker claims cells of running runs with a lease it renews while it works; if it dies, the lease lapses and\nanother worker takes the cells. Budgets (--max-cost) and rate limits are the run's, shared by all workers.\nExample:\n  export ECHOLENS_DB=postgresql://audit@db.example/echolens PGPASSWORD=… OPENAI_API_KEY=…\n  echolens worker --concurrency 16 --idle-exit 300\nCtrl-C once: finish the calls in flight and give the other claimed cells back. Twice: cancel them.`,
    )
    .action(async (options) => {
      const db: string | undefined = options.db ?? process.env.ECHOLENS_DB;
      if (db === undefined || db === '') throw new InputError('echolens worker needs --db <postgres url> (or ECHOLENS_DB)', { field: '--db' });
      if (!isPostgresUrl(db)) {
        throw new InputError(
          'echolens worker works a shared PostgreSQL store; a SQLite file has one writer (its run command)',
          { field: '--db' },
          { hint: 'use --db postgresql://…' },
        );
      }
      const opened = openStore(db);
      if (opened.backend !== 'postgres') throw new InputError('not a PostgreSQL store', { field: '--db' });
      const store = opened as PgRunStore;
      // A second Ctrl-C ends the worker within 2 s even while the database is unreachable:
      // waiting retries end at once, calls are cancelled, and a store call still stuck exits the process.
      const signals = interruptSignals(process, (_name, level) => {
        if (level === 'graceful') {
          process.stderr.write('echolens worker: stopping after the calls in flight; Ctrl-C again to cancel them\n');
          return;
        }
        void store.close();
        setTimeout(() => {
          process.stderr.write('echolens worker: cancelled; cells still leased return to the pool when their leases lapse\n');
          process.exit(130);
        }, 1_500).unref();
      });
      try {
        await store.ready;
        const started = Date.now();
        process.stderr.write(`echolens worker: ${store.file}${options.run ? `, run ${options.run}` : ''}\n`);
        let lastLine = 0;
        const result = await workCells(store, {
          ...(options.run ? { runId: options.run } : {}),
          ...(options.concurrency ? { concurrency: Math.round(options.concurrency) } : {}),
          ...(options.idleExit ? { idleExitMs: options.idleExit * 1000 } : {}),
          ...(options.lease ? { leaseMs: options.lease * 1000 } : {}),
          signal: signals.signal,
          hardSignal: signals.hardSignal,
          onCell: () => {
            if (Date.now() - lastLine < 10_000) return;
            lastLine = Date.now();
            process.stderr.write(`echolens worker: ${Math.round((Date.now() - started) / 1000)} s\n`);
          },
        });
        for (const ended of result.ended) process.stderr.write(`run ${ended.runId} ${ended.status}: ${ended.message}\n`);
        process.stdout.write(
          `${JSON.stringify({ worker: result.owner, written: result.written, done: result.done, empty: result.empty, failed: result.failed, calls: result.calls, spendUsd: spendOrNull(result.spendUsd, result.unpricedCells), unpricedCells: result.unpricedCells, refused: result.refused })}\n`,
        );
      } finally {
        signals.dispose();
        await store.close();
      }
    });
}
