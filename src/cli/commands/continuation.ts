import type { Command } from 'commander';
import { InvalidArgumentError } from '../../core/errors.js';
import { continuationAudit, continuationDesignPowerLine } from '../../continuation/audit.js';
import { calibrateContinuation } from '../../continuation/calibrate.js';
import type { ContinuationConfig } from '../../continuation/config.js';
import { renderContinuationCalibrationMarkdown, renderContinuationMarkdown } from '../../continuation/document.js';
import { type ContinuationReport, continuationConfigFromFlags, continuationReport } from '../../continuation/run.js';
import { CONTINUATION_NULL_SIM, CONTINUATION_SIM, SIM_PROFILES } from '../../continuation/sim.js';
import { emit, oneOf, positiveNumber } from '../options.js';
import { CTRL_C_HELP } from '../run-options.js';
import { registerAuditCommands } from './audit-commands.js';

const formatOf = (value: string) => oneOf('--format', ['md', 'json'], value);

/** `echolens continuation run | report | calibrate`: the generated group with the continuation's own flags. */
export function registerContinuation(continuation: Command): void {
  registerAuditCommands<ContinuationConfig, ContinuationReport>(continuation, continuationAudit, {
    run: {
      description: 'cut the session before recorded tool calls, ask each target for the next call under four prefix arms (cached, resumable)',
      config: ['[config]', 'YAML config for the full grid (see docs/continuation.md); without one, --session and --target are enough'],
      defaultDb: 'runs/continuation.db',
      dryRunHelp:
        'print the cutpoints, the number of cells, the minimum detectable |Δ| and power of the primary contrast (UNDERPOWERED with the cutpoints to add) and the cost estimate; call nothing',
      flags: (run) =>
        run
          .option('--session <file>', 'Claude Code or Codex transcript whose recorded next tool calls are the ground truth')
          .option('--cross-session <file>', 'another transcript: the length-matched `cross` arm (default: the same session, half a session away)')
          .option('--cutpoints <n>', 'number of cutpoints (default 25)', positiveNumber('--cutpoints'))
          .option('--strategy <name>', 'cutpoint selection: stratified (default) or strided')
          .option('--window-tokens <n>', 'matched prefix length in tokens (default 3000, ≈ 4 characters each)', positiveNumber('--window-tokens'))
          .option('--tools <file>', 'tool schema file (JSON/YAML) instead of schemas reconstructed from the transcript')
          .option('--tasks <file>', 'task label file (YAML/JSON `tasks: [{from, label}]`) instead of the heuristic'),
      materials: 'ContextEcho',
      helpAfter: `\nExample (your own session, offline simulation):\n  echolens continuation run --session ~/.claude/projects/<project>/<id>.jsonl --target sim:continuation --db runs/cont.db\n  echolens continuation report runs/cont.db\nsim:continuation plants a fidelity gain for the recent arm; sim:continuation-null plants none (simulations measure nothing).\n${CTRL_C_HELP}`,
      overrides: (options) => [
        ...(options.session ? [`session=${JSON.stringify(options.session)}`] : []),
        ...(options.crossSession ? [`crossSession=${JSON.stringify(options.crossSession)}`] : []),
        ...(options.cutpoints ? [`cutpoints.count=${Math.round(options.cutpoints)}`] : []),
        ...(options.strategy ? [`cutpoints.strategy=${JSON.stringify(options.strategy)}`] : []),
        ...(options.windowTokens ? [`windowTokens=${Math.round(options.windowTokens)}`] : []),
        ...(options.tools ? [`tools=${JSON.stringify(options.tools)}`] : []),
        ...(options.tasks ? [`tasks=${JSON.stringify(options.tasks)}`] : []),
      ],
      configFromFlags: continuationConfigFromFlags,
      // Before spending: what this design can detect (the dry run prints it with the plan).
      beforeRun: (config, options) => {
        if (!options.dryRun) process.stderr.write(`${continuationDesignPowerLine(config, config.cutpoints.count)}\n`);
      },
    },
    report: {
      description: 'score every answer against the recorded next call; paired complete-case and ITT contrasts, strata, attrition',
      schema: 'docs/continuation-report-schema.md',
      flags: (report) => report.option('--resamples <B>', 'sign-flip resamples when the test is not exact (default 20,000)', positiveNumber('--resamples')),
      analyze: (store, runId, options) => continuationReport(store, runId, options.resamples ? { resamples: Math.round(options.resamples) } : {}),
      markdown: (report) => renderContinuationMarkdown(report),
      json: (report) => ({ ...report }),
    },
    calibrate: registerContinuationCalibrate,
  });
}

/** `continuation calibrate`: the design's false-positive rate, power and coverage under simulation. */
function registerContinuationCalibrate(continuation: Command): void {
  continuation
    .command('calibrate')
    .description('simulate the design: false-positive rate (null profile), power and CI coverage (planted profile), with Monte Carlo SE')
    .option('--profile <name>', `simulation profile: ${SIM_PROFILES.map((p) => p.name).join(', ')}, or both (default)`, 'both')
    .option('--cutpoints <n>', 'cutpoints per simulated run (default 25)', positiveNumber('--cutpoints'))
    .option('--replicates <n>', 'simulated runs (default 1000)', positiveNumber('--replicates'))
    .option('--resamples <B>', 'sign-flip resamples when not exact (default 20,000)', positiveNumber('--resamples'))
    .option('--seed <n>', 'seed (default 42)', Number)
    .option(
      '--blocks <k>',
      'dependent cutpoints: runs of k consecutive cutpoints, each after the first repeating the run’s first answer with probability --repeat (a polling loop)',
      positiveNumber('--blocks'),
    )
    .option('--repeat <p>', 'with --blocks: probability a cutpoint repeats its run’s first answer (default 0.6)', Number)
    .option('--declare-blocks', 'with --blocks: analyse the runs as clusters (analysis.clusterBy: { consecutive: k }); without it the cutpoints stay the units')
    .option('--format <format>', 'md or json', 'md')
    .option('-o, --out <file>', 'write to a file instead of stdout')
    .action((options) => {
      const format = formatOf(options.format);
      const profiles = options.profile === 'both' ? [CONTINUATION_NULL_SIM, CONTINUATION_SIM] : SIM_PROFILES.filter((p) => p.name === options.profile);
      if (profiles.length === 0) {
        throw new InvalidArgumentError('--profile', `must be ${SIM_PROFILES.map((p) => p.name).join(', ')} or both, got "${options.profile}"`);
      }
      const design = {
        cutpoints: Math.round(options.cutpoints ?? 25),
        replicates: Math.round(options.replicates ?? 1000),
        seed: options.seed ?? 42,
        analysis: { resamples: Math.round(options.resamples ?? 20_000) },
        ...(options.blocks ? { blocks: { size: Math.round(options.blocks), repeat: options.repeat ?? 0.6, declared: options.declareBlocks === true } } : {}),
      };
      const results = profiles.map((p) => calibrateContinuation(p, design));
      emit(format === 'json' ? JSON.stringify(results, null, 2) : renderContinuationCalibrationMarkdown(results), options.out);
    });
}
