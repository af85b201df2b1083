import type { Command } from 'commander';
import { storeHistory, type DesignHistory } from '../../report/history.js';
import { openStore } from '../../store/run-store.js';
import { emit } from '../options.js';
import { closing } from '../../core/closing.js';

/** Fixed-point text of a headline in its scale. */
function headlineText(h: DesignHistory['runs'][number]['headlines'][number]): string {
  const f = (x: number) => (h.scale === 'percent' ? `${(100 * x).toFixed(0)}%` : `${x >= 0 ? '+' : ''}${x.toFixed(2)}`);
  if (h.estimate === null) return 'n/a';
  return `${f(h.estimate)}${h.ci ? ` [${f(h.ci[0])}, ${f(h.ci[1])}]` : ''}`;
}

export function renderHistoryText(designs: readonly DesignHistory[]): string {
  const lines: string[] = [];
  for (const d of designs) {
    lines.push(`${d.audit} design ${d.design}: ${d.runs.length} measurement${d.runs.length === 1 ? '' : 's'}`);
    for (const r of d.runs) {
      const models = Object.entries(r.models)
        .map(([model, versions]) => `${model} → ${versions.length === 0 ? '(not reported)' : versions.join(', ')}`)
        .join('; ');
      lines.push(`  ${r.measuredAt}  ${r.run}${r.tag ? `  [${r.tag}]` : ''}  ${r.incomplete ?? r.status}`);
      for (const h of r.headlines) lines.push(`    ${h.statistic} · ${h.subject}: ${headlineText(h)}`);
      lines.push(`    models: ${models || '—'}${r.modelChanged ? '  ← model version changed since the previous measurement' : ''}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** `echolens history <run.db>`: the measurements of each design over time. */
export function registerHistory(program: Command): void {
  program
    .command('history')
    .description('the measurements of each design over time: headline estimates with intervals, tags, and the model versions the providers reported')
    .argument('<run.db>', 'run store')
    .option('--audit <name>', 'only this audit (persona, memory, continuation)')
    .option('--design <id>', 'only this design (its id: the run id of its first measurement)')
    .option('--json', 'JSON (schema echolens.history/1) instead of text')
    .option('-o, --out <file>', 'write to a file instead of stdout')
    .addHelpText('after', '\nSee docs/over-time.md. Compare two measurements with `echolens compare <run.db> --baseline first`.')
    .action(async (db: string, options: { audit?: string; design?: string; json?: boolean; out?: string }) => {
      await closing(openStore(db, { readonly: true }), async (store) => {
        const designs = await storeHistory(store, {
          ...(options.audit ? { audit: options.audit } : {}),
          ...(options.design ? { design: options.design } : {}),
        });
        emit(options.json ? JSON.stringify({ schema: 'echolens.history/1', designs }, null, 2) : renderHistoryText(designs), options.out);
      });
    });
}
