import type { Command } from 'commander';
import { definedFields } from '../../core/copy-defined.js';
import { InvalidArgumentError } from '../../core/errors.js';
import { personaAudit } from '../../persona-drift/audit.js';
import {
  type CalibrationDesign,
  calibratePersona,
  calibrationDesignFromConfig,
  DEFAULT_VARIANCE,
  SESSION_EFFECT_SHAPES,
  type SessionEffectShape,
} from '../../persona-drift/calibrate.js';
import { renderCalibrationText } from '../../persona-drift/calibrate-text.js';
import type { PersonaConfig } from '../../persona-drift/config.js';
import { renderPersonaMarkdown } from '../../persona-drift/document.js';
import { plannedItems } from '../../persona-drift/plan.js';
import type { PersonaReport } from '../../persona-drift/report-types.js';
import { configForkCount, loadPersonaConfig, personaConfigFromFlags, personaReport } from '../../persona-drift/run.js';
import { loadPersonaStimuli } from '../../persona-drift/stimuli.js';
import { personaHeadlines } from '../headline.js';
import { collect, emit, nonNegative, oneOf, positiveNumber, numberOption } from '../options.js';
import { CTRL_C_HELP, MODEL_REF_FORMS, SET_FLAG_HELP } from '../run-options.js';
import { registerAuditCommands } from './audit-commands.js';
import { registerPersonaInterchange } from './persona-interchange.js';
import { registerPersonaRejudge } from './persona-rejudge.js';

/** `echolens persona run | report | calibrate | import | export | rejudge`: the generated group with persona's own flags. */
export function registerPersona(persona: Command): void {
  registerAuditCommands<PersonaConfig, PersonaReport>(persona, personaAudit, {
    run: {
      description: 'run the ContextEcho grid of a config: target cells, then judge cells (cached, resumable)',
      config: [
        '[config]',
        'YAML config (see docs/persona-config.md); without one, --session, --target and --judge are enough and every other key takes its default',
      ],
      defaultDb: 'runs/persona.db',
      dryRunHelp:
        'print the plan size, the minimum detectable |Δ| and power of the headline test (UNDERPOWERED with what to add) and the estimate (cells, tokens, dollars); call nothing',
      flags: (run) =>
        run
          .option('--judge <model>', 'replace the judges with this model ref; repeatable', collect, [])
          .option('--session <file>', 'replace the sessions with this transcript; repeatable', collect, []),
      materials: 'ContextEcho',
      helpAfter: `\n${MODEL_REF_FORMS}).\n${CTRL_C_HELP}`,
      overrides: (options) => listOverrides({ judges: options.judge, sessions: options.session }),
      configFromFlags: personaConfigFromFlags,
      headline: personaHeadlines,
    },
    report: {
      description:
        "analyse a persona run: a verdict per target, then drift gaps per design cell with CIs at the sampled unit, mitigations, stressors, contracts, compaction, agreement, the pooled judge consensus (several judges), Claude Code vs Codex (sessions of both), framing and anchor ablations, the onset with its rule; under procedure: reference (imported runs) also the paper's own estimators beside them (`reference`)",
      schema: 'docs/persona-report-schema.md',
      flags: (report) =>
        report.addOption(
          numberOption(
            '--bootstrap <B>',
            'Monte Carlo sign patterns for tests over more than 20 units (at least 20,000 are used; smaller tests are exact)',
            positiveNumber,
          ),
        ),
      analyze: (store, runId, options) => personaReport(store, runId, options.bootstrap ? { B: Math.round(options.bootstrap) } : {}),
      markdown: (report) => renderPersonaMarkdown(report),
      json: (report) => ({ ...report }),
    },
    calibrate: registerPersonaCalibrate,
    extra: (group) => {
      registerPersonaInterchange(group);
      registerPersonaRejudge(group);
    },
  });
}

/** The `key=[…]` config overrides of the repeatable flags that were given. */
const listOverrides = (lists: Record<string, string[]>): string[] =>
  Object.entries(lists).flatMap(([key, values]) => (values.length > 0 ? [`${key}=${JSON.stringify(values)}`] : []));

/** `persona calibrate`: the operating characteristics of a config's exact design, before spending. */
function registerPersonaCalibrate(persona: Command): void {
  persona
    .command('calibrate')
    .description(
      "before spending: simulate this config's exact design and print, for every test the report makes, the false-positive rate at α = 0.05 (± Monte Carlo SE), 95% CI coverage, power at |Δ| = 0.30 and the minimum detectable Δ at 80% power",
    )
    .argument('[config]', 'YAML config (see docs/persona-config.md); without one, --session (and optionally --target, --judge) as for `persona run`')
    .option('--set <key=value>', SET_FLAG_HELP, collect, [])
    .option('--session <file>', 'replace the sessions with this transcript; repeatable (as in `persona run`)', collect, [])
    .option('--target <model>', 'replace the targets with this model ref; repeatable (as in `persona run`; only their number matters here)', collect, [])
    .option('--judge <model>', 'replace the judges with this model ref; repeatable (as in `persona run`)', collect, [])
    .addOption(numberOption('--replicates <n>', 'simulated runs per world (null, and each planted effect the design has)', positiveNumber, 400))
    .option('--seed <n>', 'seed of the simulation', (v: string) => Number.parseInt(v, 10), 42)
    .addOption(
      numberOption('--between-session <sd>', `SD across sessions of each contrast, judge points (default ${DEFAULT_VARIANCE.betweenSession})`, nonNegative),
    )
    .addOption(
      numberOption(
        '--between-position <sd>',
        `SD across positions within a session of each contrast (default ${DEFAULT_VARIANCE.betweenPosition})`,
        nonNegative,
      ),
    )
    .addOption(numberOption('--within-cell <sd>', `SD of one response's score around its cell mean (default ${DEFAULT_VARIANCE.withinCell})`, nonNegative))
    .addOption(numberOption('--effect <delta>', 'planted |Δ| for power (default 0.30)', positiveNumber))
    .addOption(numberOption('--sessions <n>', 'sessions to simulate (default: as many as the config lists)', positiveNumber))
    .addOption(numberOption('--positions <n>', 'positions per session (default: counted from the selectors)', positiveNumber))
    .addOption(numberOption('--compactions <n>', 'compaction events per session when a compactions selector is configured (default 2)', nonNegative))
    .addOption(
      numberOption(
        '--forks <n>',
        "of the sessions, how many are forks of another (the last n fork the first n; each fork is analysed as its parent's unit, as runs do; default: the forks found among the config's transcripts)",
        nonNegative,
      ),
    )
    .addOption(numberOption('--fork-at <fraction>', "share of a fork's positions before its fork point (default 0.5)", nonNegative))
    .option(
      '--shared-draws',
      'simulate the old plan: forks as separate sessions and identical requests sharing one cached draw (shows the inflated false-positive rate)',
    )
    .option(
      '--session-effects <shape>',
      'shape of the between-session effects: normal, skewed (centred exponential), dominant (each session +1.4 with probability 1/8, else −0.2: a rare session, mean 0) or one-dominant (the first session +1.4, the others sharing −1.4: their mean exactly 0); the sign-flip test assumes symmetry, so the last three show its false-positive rate when that fails',
      'normal',
    )
    .option(
      '--harness-groups <cc,codex>',
      'record the first cc sessions as Claude Code and the next codex as Codex (sets the session count) and test the harness contrast; e.g. 3,9',
    )
    .addOption(
      numberOption('--harness-spread <k>', "the Codex sessions' session effects are k times as spread (with --harness-groups; default 1)", positiveNumber),
    )
    .option(
      '--judge-noise <sd,...>',
      "SD of each judge's own noise on a response's score, one per judge (default 0.2 each); sets the number of simulated judges, e.g. 0.2,0.2,1.0 for one noisy judge of three",
    )
    .option('--format <format>', 'text or json', 'text')
    .option('-o, --out <file>', 'write to a file instead of stdout')
    .addHelpText(
      'after',
      '\nRuns the report\'s own analysis in-process on simulated judge scores (no store, no model calls). The simulated\ntargets and judges measure nothing about any model: the numbers describe what this design can and cannot detect.\nSee docs/statistics.md ("Persona drift") for the variance model and its defaults.',
    )
    .action(async (configFile: string | undefined, options) => {
      oneOf('--format', ['text', 'json'], options.format);
      if (!(SESSION_EFFECT_SHAPES as readonly string[]).includes(options.sessionEffects)) {
        throw new InvalidArgumentError('--session-effects', `must be ${SESSION_EFFECT_SHAPES.join(', ')}, got "${options.sessionEffects}"`);
      }
      // The same flags as `persona run`, meaning the same: a calibration of the design that run would make.
      const overrides = [...options.set, ...listOverrides({ targets: options.target, judges: options.judge, sessions: options.session })];
      if (configFile === undefined) {
        if (options.session.length === 0) throw new InvalidArgumentError('[config]', 'name a config file, or --session <file> (as for `persona run`)');
        // Only the number of targets and judges shapes the design: simulated ones stand in when none are named.
        if (options.target.length === 0) overrides.push('targets=["sim:persona"]');
        if (options.judge.length === 0) overrides.push('judges=["sim:judge"]');
      }
      const config = configFile === undefined ? personaConfigFromFlags(overrides) : loadPersonaConfig(configFile, overrides);
      const design = calibrationDesignFromConfig(config, plannedItems(config, loadPersonaStimuli()), {
        ...(options.sessions ? { sessions: Math.round(options.sessions) } : {}),
        ...(options.positions ? { positionsPerSession: Math.round(options.positions) } : {}),
        ...(options.compactions !== undefined ? { compactionsPerSession: Math.round(options.compactions) } : {}),
      });
      if (options.forks !== undefined) design.forks = Math.round(options.forks);
      else if (options.sessions === undefined) {
        // The config's own forks (read from its transcripts), as many as the design can pair with a parent.
        const forks = await configForkCount(config);
        if (forks) design.forks = Math.min(forks, Math.floor(design.sessions / 2));
      }
      if (options.forkAt !== undefined) design.forkAt = options.forkAt;
      applyDepartures(design, options);
      const result = calibratePersona(design, {
        replicates: Math.round(options.replicates),
        seed: options.seed,
        tostMargin: config.analysis.tostMargin,
        ...(options.sharedDraws ? { draws: 'shared' as const } : {}),
        sessionEffects: options.sessionEffects as SessionEffectShape,
        ...(options.effect ? { effect: options.effect } : {}),
        variance: definedFields(options, ['betweenSession', 'betweenPosition', 'withinCell']),
      });
      emit(options.format === 'json' ? JSON.stringify(result, null, 2) : renderCalibrationText(result), options.out);
    });
}

/** Comma-separated numbers of a flag, or a clear error naming it. */
function numberList(flag: string, value: string): number[] {
  const parts = value.split(',').map((v) => v.trim());
  const numbers = parts.map(Number);
  if (parts.length === 0 || parts.some((v) => v === '') || numbers.some((n) => !Number.isFinite(n))) {
    throw new InvalidArgumentError(flag, `expected comma-separated numbers, got "${value}"`);
  }
  return numbers;
}

/** `persona calibrate`'s departures from the tests' assumptions: harness groups and spreads, judge noise. */
function applyDepartures(design: CalibrationDesign, options: { harnessGroups?: string; harnessSpread?: number; judgeNoise?: string; sessions?: number }): void {
  if (options.harnessGroups !== undefined) {
    const groups = numberList('--harness-groups', options.harnessGroups);
    if (groups.length !== 2 || groups.some((g) => !Number.isInteger(g) || g < 1)) {
      throw new InvalidArgumentError('--harness-groups', `expected two positive integers (Claude Code, Codex sessions), got "${options.harnessGroups}"`);
    }
    const [cc, cx] = groups as [number, number];
    if (options.sessions !== undefined && Math.round(options.sessions) !== cc + cx) {
      throw new InvalidArgumentError('--harness-groups', `${cc} + ${cx} sessions disagree with --sessions ${options.sessions}`);
    }
    design.sessions = cc + cx;
    design.harnessGroups = [cc, cx];
    if (design.forks) design.forks = Math.min(design.forks, Math.floor(design.sessions / 2));
  }
  if (options.harnessSpread !== undefined) {
    if (!design.harnessGroups) throw new InvalidArgumentError('--harness-spread', 'needs --harness-groups (which sessions are Codex)');
    design.harnessSpread = options.harnessSpread;
  }
  if (options.judgeNoise !== undefined) {
    const noise = numberList('--judge-noise', options.judgeNoise);
    if (noise.some((n) => n < 0)) throw new InvalidArgumentError('--judge-noise', `SDs must be non-negative, got "${options.judgeNoise}"`);
    // Only the number of judges shapes the design: as many as listed (the config's names when they match).
    if (noise.length !== design.judges.length) design.judges = noise.map((_, i) => `judge-${i + 1}`);
    design.judgeNoise = noise;
  }
}
