import type { Command } from 'commander';
import { emit, integerIn, oneOf } from '../options.js';
import { ConfigError } from '../../core/errors.js';
import { closing } from '../../core/closing.js';
import {
  exportStepLabelSheet,
  parseStepLabelKey,
  parseStepLabelSheet,
  renderStepLabelAgreementMarkdown,
  sampleStepLabels,
  STEP_SHEET_INSTRUCTIONS,
  type StepLabelKey,
  stepLabelAgreement,
} from '../../memory-drift/label-sheet.js';
import { collectMemorySamples, memoryRunId } from '../../memory-drift/observations.js';
import { ontologySymbols } from '../../memory-drift/ontology.js';
import { resolveMemoryStimuli } from '../../memory-drift/run.js';
import { openStore } from '../../store/run-store.js';
import { readInputText } from '../../core/user-files.js';

/** `<sheet>.key.json` beside the sheet unless named. */
const keyPathOf = (sheet: string) => `${sheet.replace(/\.csv$/i, '')}.key.json`;

/** `echolens memory label-sheet export | import` (DriftLens App. C.5: human check of the labeler's step labels). */
export function registerMemoryLabelSheet(memory: Command): void {
  const sheet = memory
    .command('label-sheet')
    .description(
      "human check of the labeler's step labels (App. C.5): export a sample of labelled steps as a CSV sheet, import the filled sheet for agreement and Cohen's κ per category",
    );

  sheet
    .command('export')
    .description('write a review sheet (CSV) of a seeded sample of labelled reasoning steps, and its answer key (JSON)')
    .argument('<run.db>', 'run store written by `echolens memory run`')
    .option('--run <id>', 'memory run id (default: the latest memory run in the store)')
    .requiredOption('-o, --out <sheet.csv>', 'the sheet to hand to the reviewer')
    .option('--key <file>', 'answer key (default: <sheet>.key.json); keep it away from the reviewer of a blind sheet')
    .option('--n <n>', 'steps to sample (the paper inspects 100)', integerIn('--n', 1, 1_000_000), 100)
    .option('--seed <n>', 'sampling seed', integerIn('--seed', 0, 2 ** 31 - 1), 42)
    .option('--blind', "leave the labeler's label out of the sheet (the reviewer labels without seeing it)")
    .addHelpText('after', `\n${STEP_SHEET_INSTRUCTIONS}\nThen: echolens memory label-sheet import <filled.csv> --key <key.json>`)
    .action(async (db: string, options) => {
      const key: StepLabelKey = await closing(openStore(db, { readonly: true }), async (store) => {
        const runId = await memoryRunId(store, options.run);
        const collection = await collectMemorySamples(store, runId);
        const stimuli = await resolveMemoryStimuli(collection.config);
        const questions = new Map(stimuli.questions.questions.map((q) => [q.id, q.text]));
        const items = sampleStepLabels(collection.records, { n: options.n, seed: options.seed, questions });
        if (items.length === 0) throw new ConfigError('the run has no labelled answer whose labels align with its steps', { field: 'run' });
        return {
          kind: 'echolens-step-label-key',
          runId,
          labeler: collection.config.labeler,
          blind: Boolean(options.blind),
          symbols: ontologySymbols(collection.ontology),
          items,
        };
      });
      const keyFile: string = options.key ?? keyPathOf(options.out);
      emit(exportStepLabelSheet(key.items, { blind: key.blind }), options.out);
      emit(`${JSON.stringify(key, null, 1)}\n`, keyFile);
      process.stdout.write(`wrote ${key.items.length} steps of run ${key.runId} to ${options.out} (key: ${keyFile})\n`);
    });

  sheet
    .command('import')
    .description("compare a filled sheet with the labeler: agreement and Cohen's κ overall, by root category and per category (one versus the rest)")
    .argument('<sheet.csv>', 'the filled sheet (human_label column)')
    .option('--key <file>', 'answer key from export (default: <sheet>.key.json)')
    .option('--format <format>', 'md or json', 'md')
    .option('-o, --out <file>', 'write the report here (default: stdout)')
    .option('--also <files...>', 'more filled copies of the same sheet (other reviewers): each is reported against the labeler')
    .action((file: string, options) => {
      oneOf('--format', ['md', 'json'], options.format);
      const keyFile: string = options.key ?? keyPathOf(file);
      const key = parseStepLabelKey(readInputText(keyFile, 'answer key'), keyFile);
      const reports = [file, ...((options.also as string[] | undefined) ?? [])].map((sheetFile) => ({
        sheet: sheetFile,
        agreement: stepLabelAgreement(key, parseStepLabelSheet(readInputText(sheetFile, 'filled sheet'), sheetFile, key)),
      }));
      const text =
        options.format === 'json'
          ? `${JSON.stringify({ run: key.runId, labeler: key.labeler, blind: key.blind, reviews: reports }, null, 2)}\n`
          : reports.map((r) => `<!-- ${r.sheet} -->\n${renderStepLabelAgreementMarkdown(r.agreement, key)}`).join('\n');
      emit(text, options.out);
    });
}
