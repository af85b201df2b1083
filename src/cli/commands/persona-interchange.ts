import { existsSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { InputError, InvalidArgumentError } from '../../core/errors.js';
import { confinedEntry, readUserJson } from '../../core/user-files.js';
import { readContextEchoArchive, writeArchiveFiles } from '../../persona-drift/interchange-files.js';
import { personaRunId } from '../../persona-drift/run.js';
import { openStore } from '../../store/run-store.js';
import { closing } from '../../core/closing.js';

/**
 * `echolens persona import | export`: the ContextEcho authors' archive layouts (docs/interchange.md).
 * The store side (interchange-store.ts) loads when a command runs: it imports the run machinery,
 * which `persona report` (registered beside these) never needs.
 */
const interchangeStore = () => import('../../persona-drift/interchange-store.js');

const LAYOUT_HELP = "archive layout (only contextecho: the ContextEcho authors' per-cell, content-position, cross-compaction and anchor-variant files)";

function checkLayout(layout: string): void {
  if (layout !== 'contextecho') throw new InvalidArgumentError('--layout', `unknown layout "${layout}": the one layout is contextecho`);
}

async function readExportManifest(dir: string) {
  const { EXPORT_MANIFEST, parseExportManifest } = await interchangeStore();
  const path = join(dir, EXPORT_MANIFEST);
  if (!existsSync(path) && !isLink(path)) return undefined;
  confinedEntry(dir, path, { file: path });
  return parseExportManifest(readUserJson(path, { file: path }));
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

export function registerPersonaInterchange(persona: Command): void {
  persona
    .command('import')
    .description("record an archive of the ContextEcho authors' layouts as a persona run: responses and verdicts kept as cells, no model called")
    .argument(
      '<dir>',
      'archive folder: results/probes_at_crosscompaction/<target>/<position>/<arm>/<probe_id>.json and/or content-position *.json (here or in docs/)',
    )
    .requiredOption('--layout <layout>', LAYOUT_HELP)
    .option('--db <file>', 'run store to add the run to', 'runs/persona.db')
    .option('--judge <name>', "name of the judge whose scores the archive holds (the authors' files do not say)", 'archive-judge')
    .option('--procedure <name>', "echolens or reference (default: reference, or the exported run's own procedure)")
    .option(
      '--redact-responses',
      "replace personal data (names, phones, addresses, IPs, cards, national ids, IBANs) in the archived responses and verdict reasons before they are stored (default: on when the exported run's config had redactResponses: true); secrets of known shapes are always scrubbed",
    )
    .addHelpText(
      'after',
      "\nThe whole archive is checked first and written in one transaction: a bad file (missing field, unknown arm,\nnon-integer score) exits 2 naming the file and the field, and nothing is imported. A score of -1 (the\nauthors' mark of an unparsed judge output) is kept as an invalid judgement. Then: echolens persona report <db>.",
    )
    .action(async (dir: string, options: { layout: string; db: string; judge: string; procedure?: string; redactResponses?: boolean }) => {
      checkLayout(options.layout);
      if (options.procedure !== undefined && options.procedure !== 'echolens' && options.procedure !== 'reference') {
        throw new InvalidArgumentError('--procedure', `must be echolens or reference, got "${options.procedure}"`);
      }
      const read = readContextEchoArchive(dir, options.judge);
      const exportManifest = await readExportManifest(dir);
      const exportedRedaction = (exportManifest as { config?: { redactResponses?: unknown } } | undefined)?.config?.redactResponses === true;
      const redactText = options.redactResponses === true || exportedRedaction ? (await import('../../sessions/redact/pii.js')).redactPiiText : undefined;
      const { importArchive } = await interchangeStore();
      await closing(openStore(options.db), async (store) => {
        const result = await importArchive(store, read, {
          source: dir,
          ...(redactText ? { redactText } : {}),
          ...(exportManifest ? { exportManifest } : {}),
          ...(options.procedure ? { procedure: options.procedure as 'echolens' | 'reference' } : {}),
        });
        process.stdout.write(
          `imported run ${result.runId} into ${options.db}: ${result.targetCells} responses, ${result.judgeCells} verdicts (${read.layouts.perCell} per-cell files, ${read.layouts.contentPosition} content-position files${read.layouts.crossCompaction ? `, ${read.layouts.crossCompaction} cross-compaction files` : ''}${read.layouts.anchorVariants ? `, ${read.layouts.anchorVariants} anchor-variant files` : ''}), targets ${result.targets.join(', ')}, procedure ${result.procedure}; no model was called\nreport: echolens persona report ${options.db} --run ${result.runId}\n`,
        );
      });
    });

  persona
    .command('export')
    .description("write a persona run in the ContextEcho authors' layouts, so their analysis and plotting scripts read it")
    .argument('<run.db>', 'run store')
    .argument('<dir>', 'folder to write (results/probes_at_crosscompaction/…, docs/CONTENT_POSITION_<target>.json, echolens-run.json)')
    .requiredOption('--layout <layout>', LAYOUT_HELP)
    .option('--run <id>', 'run id (default: the latest persona run in the store)')
    .action(async (db: string, dir: string, options: { layout: string; run?: string }) => {
      checkLayout(options.layout);
      const { EXPORT_MANIFEST, exportRun } = await interchangeStore();
      if (existsSync(join(dir, 'results', 'probes_at_crosscompaction')) || existsSync(join(dir, EXPORT_MANIFEST))) {
        throw new InputError('already holds an archive; export into an empty folder', { file: dir });
      }
      await closing(openStore(db, { readonly: true }), async (store) => {
        const runId = await personaRunId(store, options.run);
        const result = await exportRun(store, runId);
        writeArchiveFiles(dir, result.files);
        const skipped = Object.entries(result.skipped).map(([surface, n]) => `${n} ${surface} cells`);
        process.stdout.write(
          `exported run ${runId} to ${dir}: ${result.cells} probe cells in ${result.files.length} files${skipped.length > 0 ? `; not in these layouts: ${skipped.join(', ')}` : ''}\n`,
        );
      });
    });
}
