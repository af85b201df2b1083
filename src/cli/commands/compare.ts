import type { MemoryReport } from '../../memory-drift/analysis.js';
import type { PersonaReport } from '../../persona-drift/analysis.js';
import type { Command } from 'commander';
import { InvalidArgumentError } from '../../core/errors.js';
import { MEMORY_EXPERIMENT } from '../../memory-drift/run.js';
import { PERSONA_EXPERIMENT } from '../../persona-drift/run.js';
import { type CompareSide, compareRows, renderCompareMarkdown } from '../../report/compare.js';
import { collectReports, verdictOfReport } from '../../report/report.js';
import { openStore } from '../../store/run-store.js';
import { emit, positiveNumber } from '../options.js';

function side(db: string, B: number | undefined): CompareSide {
  const store = openStore(db, { readonly: true });
  try {
    const latest = (experiment: string) =>
      store
        .listRuns()
        .filter((r) => r.experiment === experiment)
        .sort((x, y) => y.startedAt.localeCompare(x.startedAt))[0]?.id;
    const ids = [latest(PERSONA_EXPERIMENT), latest(MEMORY_EXPERIMENT)].filter((x): x is string => x !== undefined);
    const reports = ids.length === 0 ? [] : collectReports(store, ids, B ? { B } : {});
    const persona = reports.find((r) => r.persona);
    const memory = reports.find((r) => r.memory);
    return {
      label: db,
      ...(persona ? { personaRun: persona.run.id, persona: persona.persona as PersonaReport } : {}),
      ...(memory ? { memoryRun: memory.run.id, memory: memory.memory as MemoryReport } : {}),
      verdicts: reports.map(verdictOfReport),
    };
  } finally {
    store.close();
  }
}

export function registerCompare(program: Command): void {
  program
    .command('compare')
    .description('two run stores side by side: drift gaps and tier elevations of their latest persona and memory runs, and each verdict')
    .argument('<a.db>', 'run store A (e.g. last week, or the old model)')
    .argument('<b.db>', 'run store B')
    .option('--format <format>', 'md or json', 'md')
    .option('-o, --out <file>', 'write to a file instead of stdout')
    .option('--bootstrap <B>', 'bootstrap replicates (default: each run config’s value)', positiveNumber('--bootstrap'))
    .action((a: string, b: string, options) => {
      if (options.format !== 'md' && options.format !== 'json') throw new InvalidArgumentError('--format', `must be md or json, got "${options.format}"`);
      const B = options.bootstrap ? Math.round(options.bootstrap) : undefined;
      const sa = side(a, B);
      const sb = side(b, B);
      emit(
        options.format === 'json'
          ? JSON.stringify(
              {
                a: { store: a, personaRun: sa.personaRun ?? null, memoryRun: sa.memoryRun ?? null, verdicts: sa.verdicts },
                b: { store: b, personaRun: sb.personaRun ?? null, memoryRun: sb.memoryRun ?? null, verdicts: sb.verdicts },
                rows: compareRows(sa, sb),
              },
              null,
              2,
            )
          : renderCompareMarkdown(sa, sb),
        options.out,
      );
    });
}
