import type { Command } from 'commander';
import { InvalidArgumentError } from '../../core/errors.js';
import { listAudits } from '../../experiment/registry.js';
import { renderReport, type ReportFormat } from '../../report/report.js';
import { openStore } from '../../store/run-store.js';
import { readOnce } from '../../store/read-once.js';
import { emit } from '../options.js';
import { closing } from '../../core/closing.js';

const FORMATS: readonly ReportFormat[] = ['html', 'md', 'json', 'csv'];

export function registerReport(program: Command): void {
  program
    .command('report')
    .description('write the report of every run in a store: self-contained HTML with charts, Markdown, JSON or CSV')
    .argument(
      '<run.db>',
      `run store written by ${listAudits()
        .map((a) => `\`echolens ${a.command} run\``)
        .join(' / ')} / \`echolens demo\``,
    )
    .option(
      '-o, --out <file>',
      'output file (default for html: the store name with .db replaced by .report.html, e.g. runs/x.db → runs/x.report.html; stdout for the other formats)',
    )
    .option('--format <format>', `one of ${FORMATS.join(', ')}`, 'html')
    .option(
      '--run <id...>',
      `only these runs (default: every run in the store of a registered audit: ${listAudits()
        .map((a) => a.command)
        .join(', ')})`,
    )
    .option('--bootstrap <B>', 'bootstrap replicates (default: each run config’s value)')
    .action(async (db: string, options) => {
      const format = options.format as ReportFormat;
      if (!FORMATS.includes(format)) throw new InvalidArgumentError('--format', `must be one of ${FORMATS.join(', ')}, got "${options.format}"`);
      const B = options.bootstrap === undefined ? undefined : Number(options.bootstrap);
      if (B !== undefined && (!Number.isInteger(B) || B < 100)) throw new InvalidArgumentError('--bootstrap', 'must be an integer ≥ 100');
      await closing(readOnce(openStore(db, { readonly: true })), async (store) => {
        const text = await renderReport(store, format, { ...(options.run ? { runIds: options.run } : {}), ...(B ? { B } : {}) });
        const out = options.out ?? (format === 'html' ? defaultHtmlReport(db) : undefined);
        emit(text, out);
      });
    });
}

/** Where `report` writes HTML when no --out is given (the help text describes this). */
export function defaultHtmlReport(db: string): string {
  return `${db.replace(/\.db$/u, '')}.report.html`;
}
