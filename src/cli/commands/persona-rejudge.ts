import { spendText } from '../../core/money.js';
import type { Command } from 'commander';
import { interruptedSummary, stageLine } from '../../experiment/stage-tally.js';
import { estimateLines } from '../../models/estimate.js';
import { openStore } from '../../store/run-store.js';
import { InvalidArgumentError } from '../../core/errors.js';
import { collect } from '../options.js';
import { closing } from '../../core/closing.js';
import { addLimitFlags, CTRL_C_HELP, MODEL_REF_FORMS, runtimeOfFlags } from '../run-options.js';
import { stopAdvice } from '../stop-advice.js';

/** `echolens persona rejudge`: score a persona run's stored answers again with other judges (docs/interchange.md). */
export function registerPersonaRejudge(persona: Command): void {
  const command = persona
    .command('rejudge')
    .description(
      "score a persona run's stored probe answers with other judges, calling no target: one judge cell per answer and judge, planned as the run's judge stage plans them, added to the run as a stage of its own (cached, resumable); reports then show every judge side by side",
    )
    .argument('<run.db>', 'run store holding the run (`persona run`, or `persona import --layout contextecho`)')
    .option('--run <id>', 'persona run id (default: the latest persona run in the store)')
    .option('--judge <model>', 'judge model ref to score the answers with; repeatable (at least one)', collect, [])
    .option('--dry-run', 'print the judge cells and the estimate; call nothing, record nothing')
    .option('--prices <file>', 'prices overriding the built-in table (JSON or YAML)');
  addLimitFlags(command)
    .addHelpText(
      'after',
      `\n${MODEL_REF_FORMS}: sim:judge, sim:judge-lenient, sim:judge-strict).\nThe rubric, judge decoding and procedure are the run's own. A judge the run already has is refused.\nUntil every rejudge stage is complete, reports refuse the run; re-run the same command to finish.\n${CTRL_C_HELP}`,
    )
    .action(async (db: string, options) => {
      // Loaded here: rejudging runs the engine, which the other persona commands (report) never need.
      const { estimateRejudge, prepareRejudge, preflightRejudge, rejudgePersonaRun } = await import('../../persona-drift/rejudge-run.js');
      const { budgetInForce } = await import('../../experiment/preflight.js');
      const { keyWarningLines } = await import('../audit-run.js');
      const judges: string[] = options.judge;
      if (judges.length === 0) throw new InvalidArgumentError('--judge', 'name at least one judge model ref to score the answers with');
      const runtime = runtimeOfFlags(options);
      const prepared = await closing(openStore(db, { readonly: true }), (store) => prepareRejudge(store, judges, options.run));
      const checked = preflightRejudge(prepared, judges, options.dryRun ? { ...runtime, dryRun: true } : runtime);
      const cells = prepared.plan.stages.reduce((n, stage) => n + stage.items.length, 0);
      if (options.dryRun) {
        process.stdout.write(
          `${[
            `plan: ${cells} judgements (${prepared.plan.answers} stored probe answers × ${judges.length} judge${judges.length === 1 ? '' : 's'}) for run ${prepared.runId}; no target is called`,
            ...estimateLines(estimateRejudge(prepared, options.prices)),
          ].join('\n')}\n`,
        );
        for (const line of keyWarningLines(checked.keyWarnings)) process.stderr.write(`${line}\n`);
        return;
      }
      const result = await rejudgePersonaRun(db, prepared, runtime);
      if (result.interrupted) {
        process.stdout.write(
          `${interruptedSummary(result.runId, db, result.stopReason, result.stages, result.pricedSpendUsd, result.unpricedCells).join('\n')}\n`,
        );
        const budget = budgetInForce(checked.estimate, runtime.maxCostUsd ?? prepared.config.limits.maxCostUsd);
        process.stdout.write(`${stopAdvice(result.stopReason, budget)}\n`);
        process.exitCode = 3;
        return;
      }
      process.stdout.write(
        `rejudged run ${result.runId} in ${db}: ${result.answers} stored probe answers × ${result.judges.join(', ')} = ${result.judgeCells} judgements, ${result.calls} model calls (stored cells are not called again), ${result.invalidJudgements} invalid ones excluded, spend ${spendText(result.pricedSpendUsd, result.unpricedCells)}; no target was called\n`,
      );
      if (result.stages.length > 0) process.stdout.write(`stages: ${result.stages.map(stageLine).join('; ')}\n`);
      process.stdout.write(`report: echolens persona report ${db} --run ${result.runId}\n`);
    });
}
