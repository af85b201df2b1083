import type { Command } from 'commander';
import { InvalidArgumentError } from '../../core/errors.js';
import { findAudit } from '../../experiment/registry.js';
import { type ComparedPair, compareRows, renderCompareMarkdown } from '../../report/compare.js';
import { checkSameAudit, compareAnalyzedRuns } from '../../report/compare-runs.js';
import { collectReports, verdictOfReport } from '../../report/report.js';
import { runName } from '../../report/run-name.js';
import type { RunInfo, RunStore } from '../../store/run-store.js';
import { openStore } from '../../store/run-store.js';
import { renderBaselineMarkdown } from '../../report/baseline-markdown.js';
import { baselinePairs, compareToBaseline } from '../../report/history.js';
import { emit, positiveNumber, numberOption } from '../options.js';
import { closing } from '../../core/closing.js';
import { mapSequential } from '../../core/map-sequential.js';

interface CompareOptions {
  format: string;
  json?: boolean;
  baseline?: string;
  against?: string;
  out?: string;
  runA?: string;
  runB?: string;
  audit?: string;
  bootstrap?: number;
  seed?: number;
}

const latest = async (store: RunStore, experiment: string): Promise<RunInfo | undefined> =>
  (await store.listRuns()).filter((r) => r.experiment === experiment).sort((x, y) => y.startedAt.localeCompare(x.startedAt))[0];

/** Which runs to compare: the named ones, else the latest run of each audit both stores hold. */
async function selectPairs(
  a: { file: string; store: RunStore },
  b: { file: string; store: RunStore },
  options: CompareOptions,
): Promise<Array<[RunInfo, RunInfo]>> {
  const pick = async (side: { file: string; store: RunStore }, id: string | undefined, flag: string) => {
    if (!id) return undefined;
    const run = await side.store.getRun(id);
    if (!run) throw new InvalidArgumentError(flag, `no run ${id} in ${side.file}`);
    return run;
  };
  const ra = await pick(a, options.runA, '--run-a');
  const rb = await pick(b, options.runB, '--run-b');
  if (options.audit && !findAudit(options.audit)) throw new InvalidArgumentError('--audit', `no audit named "${options.audit}"`);
  if (ra || rb) {
    const experiment = (ra ?? rb)?.experiment as string;
    const left = ra ?? (await latest(a.store, experiment));
    const right = rb ?? (await latest(b.store, experiment));
    if (!left) throw new InvalidArgumentError('--run-a', `${a.file} holds no ${experiment} run to compare with run ${rb?.id}`);
    if (!right) throw new InvalidArgumentError('--run-b', `${b.file} holds no ${experiment} run to compare with run ${ra?.id}`);
    checkSameAudit(left, right, { a: `run A in ${a.file}`, b: `run B in ${b.file}` });
    return [[left, right]];
  }
  const experiments = async (store: RunStore) => new Set((await store.listRuns()).map((r) => r.experiment).filter((e) => findAudit(e) !== undefined));
  const ea = await experiments(a.store);
  const eb = await experiments(b.store);
  const shared = [...ea].filter((e) => eb.has(e) && (!options.audit || e === options.audit));
  if (shared.length === 0) {
    const list = (s: Set<string>) => (s.size === 0 ? 'no audit run' : `${[...s].join(', ')} runs`);
    throw new InvalidArgumentError(
      'compare',
      `${a.file} holds ${list(ea)} and ${b.file} holds ${list(eb)}${options.audit ? ` (asked: ${options.audit})` : ''}; compare only runs of the same audit`,
    );
  }
  return mapSequential(shared, async (e) => [(await latest(a.store, e)) as RunInfo, (await latest(b.store, e)) as RunInfo] as [RunInfo, RunInfo]);
}

async function compareBaseline(db: string, options: CompareOptions): Promise<void> {
  if (options.format !== 'md' && options.format !== 'json') throw new InvalidArgumentError('--format', `must be md or json, got "${options.format}"`);
  await closing(openStore(db, { readonly: true }), async (store) => {
    const { pairs, notes } = await baselinePairs(store, {
      baseline: options.baseline as string,
      ...(options.against ? { against: options.against } : {}),
      ...(options.audit ? { audit: options.audit } : {}),
    });
    const seed = options.seed ? Math.round(options.seed) : 42;
    const B = options.bootstrap ? Math.max(1000, Math.round(options.bootstrap)) : 20_000;
    const comparisons = await mapSequential(pairs, (pair) => compareToBaseline(store, pair, { seed, B }));
    emit(
      options.format === 'json'
        ? JSON.stringify({ schema: 'echolens.baseline/1', level: 0.95, comparisons, notes }, null, 2)
        : renderBaselineMarkdown(comparisons, notes),
      options.out,
    );
  });
}

export function registerCompare(program: Command): void {
  program
    .command('compare')
    .description(
      'two runs of the same audit side by side (B − A with a paired bootstrap CI over shared design units), or with --baseline the latest measurement against a baseline (sign-flip test and interval)',
    )
    .argument('<a.db>', 'run store A (e.g. last week, or the old model)')
    .argument('[b.db]', 'run store B (may be the same file as A, with --run-a/--run-b); not with --baseline')
    .option(
      '--baseline <run|first|tag>',
      'drift over time: compare the latest measurement of each design in <a.db> with this one (first, a run id, or a --tag name)',
    )
    .option('--against <run|latest|tag>', 'with --baseline: the measurement compared (default latest)')
    .option('--run-a <id>', 'the run of A (default: the latest run of each audit both stores hold)')
    .option('--run-b <id>', 'the run of B (default: the latest run of the same audit in B)')
    .option('--audit <name>', 'compare only this audit (persona, memory, continuation)')
    .option('--format <format>', 'md or json', 'md')
    .option('-o, --out <file>', 'write to a file instead of stdout')
    .addOption(numberOption('--bootstrap <B>', 'bootstrap replicates of the B − A intervals (default 2000)', positiveNumber))
    .addOption(numberOption('--seed <n>', 'seed of the B − A bootstrap (default 42)', positiveNumber))
    .addHelpText(
      'after',
      '\nWith --baseline: the two measurements of one design are paired unit by unit; the change (latest − baseline) has a 95% interval\nand a p from one procedure, a sign-flip test over the sampled units and the interval that inverts it (docs/over-time.md).',
    )
    .action(async (a: string, b: string | undefined, options: CompareOptions) => {
      if (options.json) options.format = 'json';
      if (options.baseline !== undefined) {
        if (b !== undefined) throw new InvalidArgumentError('--baseline', 'compares the measurements of one store: give one run store, not two');
        await compareBaseline(a, options);
        return;
      }
      if (options.against !== undefined) throw new InvalidArgumentError('--against', 'goes with --baseline');
      if (b === undefined) throw new InvalidArgumentError('compare', 'give two run stores, or one with --baseline <run|first|tag>');
      if (options.format !== 'md' && options.format !== 'json') throw new InvalidArgumentError('--format', `must be md or json, got "${options.format}"`);
      const B = options.bootstrap ? Math.max(50, Math.round(options.bootstrap)) : 2000;
      const seed = options.seed ? Math.round(options.seed) : 42;
      const storeA = openStore(a, { readonly: true });
      const storeB = b === a ? storeA : openStore(b, { readonly: true });
      try {
        const pairs: ComparedPair[] = await mapSequential(
          await selectPairs({ file: a, store: storeA }, { file: b, store: storeB }, options),
          async ([ra, rb]) => {
            const audit = findAudit(ra.experiment);
            const [reportA] = await collectReports(storeA, [ra.id]);
            const [reportB] = await collectReports(storeB, [rb.id]);
            if (!audit || !reportA?.analyzed || !reportB?.analyzed)
              throw new InvalidArgumentError('compare', `no audit is registered for ${ra.experiment} runs`);
            return {
              audit: audit.name,
              title: audit.title,
              a: { store: a, run: ra.id, name: runName(ra), verdict: verdictOfReport(reportA) },
              b: { store: b, run: rb.id, name: runName(rb), verdict: verdictOfReport(reportB) },
              comparison: compareAnalyzedRuns(audit.name, reportA.analyzed, reportB.analyzed, { B, seed }),
            };
          },
        );
        emit(
          options.format === 'json' ? JSON.stringify({ schema: 'echolens.compare/2', pairs, rows: compareRows(pairs) }, null, 2) : renderCompareMarkdown(pairs),
          options.out,
        );
      } finally {
        await storeA.close();
        if (storeB !== storeA) await storeB.close();
      }
    });
}
