import { Command, CommanderError } from 'commander';
import { isEcholensError } from '../core/errors.js';
import { lastStoreFile, storeFaultOf } from '../store/faults.js';
import { packageVersion } from '../core/version.js';
import { registerCommands } from './commands.js';
import { addOutputFlagAliases } from './output-flags.js';
import { EXIT, exitCodeOf } from './exit-codes.js';

function baseProgram(): Command {
  return new Command()
    .name('echolens')
    .description('Audit language models for drift: memory drift (DriftLens) and persona drift in long agentic sessions (ContextEcho).')
    .version(packageVersion(), '-V, --version', 'print the echolens version')
    .showHelpAfterError('(run with --help for usage)')
    .configureHelp({ sortSubcommands: false });
}

/** Command groups that read neither the audit registry nor the simulated models. */
const REGISTRY_FREE_GROUPS = new Set(['sessions']);

/**
 * Commands that only read run stores: they call no model, so the simulated models (whose modules,
 * with the YAML parser and the memory ontology, were a tenth of `persona report`'s CPU; issue #44)
 * are not registered for them. `<audit> report` is the `report` sub-command of any audit's group.
 */
const MODEL_FREE_GROUPS = new Set(['report', 'gate', 'history', 'compare', 'audits', 'schema', 'init']);
const MODEL_FREE_SUBCOMMANDS = new Set(['report']);

/** True when the command line names a command that calls no model (see MODEL_FREE_GROUPS). */
export function callsNoModel(args: readonly string[]): boolean {
  const [group, sub] = args.filter((arg) => !arg.startsWith('-'));
  return group !== undefined && (MODEL_FREE_GROUPS.has(group) || (sub !== undefined && MODEL_FREE_SUBCOMMANDS.has(sub)));
}

/** Command groups whose help texts read neither registry: `<group> … --help` loads neither (their actions do). */
const HELP_REGISTRY_FREE_GROUPS = new Set(['ask', 'models', 'runs', 'worker', 'view', 'compare']);

/** The top-level command a command line names (its first argument that is not an option), if any. */
export function commandOf(args: readonly string[]): string | undefined {
  return args.find((arg) => !arg.startsWith('-'));
}

/**
 * The program with the command groups `args` needs (all of them without `args`).
 * `echolens --version` needs none; `echolens persona …` loads only the persona group;
 * `echolens --help` lists every group from its summary without loading any.
 */
export async function buildProgram(args?: readonly string[]): Promise<Command> {
  // Before the commands are added, so that they inherit it: help and errors end in runCli, not process.exit.
  const program = baseProgram().exitOverride();
  const command = args === undefined ? undefined : commandOf(args);
  const versionOnly = args !== undefined && command === undefined && args.length > 0 && args.every((a) => a === '-V' || a === '--version');
  if (!versionOnly) {
    // Simulated models and the built-in audits are registered only when a command may use them
    // (the audits' command groups, report, gate, viewer and compare read the registry). The
    // overview (`echolens --help`, no command) lists the groups from their summaries: every
    // built-in audit has its group there, so it needs neither (and loads no audit module).
    // `sessions` reads transcripts only: no audit or simulation module is loaded for it either.
    const helpOnly = args?.some((a) => a === '--help' || a === '-h') === true;
    if (command !== undefined && !REGISTRY_FREE_GROUPS.has(command) && !(helpOnly && HELP_REGISTRY_FREE_GROUPS.has(command))) {
      if (!callsNoModel(args ?? [])) (await import('../builtin-sims.js')).registerBuiltinSimProfiles();
      // An audit's own group (`persona …`) needs only that audit; everything else reads them all.
      if (!(await (await import('../builtin-audit.js')).registerBuiltinAuditOf(command))) (await import('../audits.js')).registerBuiltinAudits();
    }
    await registerCommands(program, args ?? [], { all: args === undefined });
    addOutputFlagAliases(program);
  }
  // Every command, not only the root (in case one was built before it inherited the override):
  // commander would otherwise exit by itself on a usage error instead of returning exit code 2.
  const override = (c: Command): void => {
    c.exitOverride();
    c.commands.forEach(override);
  };
  override(program);
  return program;
}

/**
 * Flags other tools use for what echolens names differently (promptfoo's and Inspect's `--model`, …):
 * commander suggests only near spellings, so these get the echolens flag by name.
 */
const FLAG_REFLEXES: Record<string, string> = {
  '--model': 'echolens names the model under test with --target (repeatable) and the judge with --judge, e.g. --target openai:gpt-4.1-mini',
  '--models': 'echolens names the models under test with --target (repeatable), e.g. --target openai:gpt-4.1-mini --target anthropic:claude-sonnet-4-5',
  '-m': 'echolens names the model under test with --target and the judge with --judge',
  '--provider': 'the provider is part of the model ref: --target <provider>:<model>, e.g. --target openai:gpt-4.1-mini',
  '--config': 'a config file is the command’s argument, not a flag: echolens persona run persona.yaml',
  '--output': 'use -o / --out <file> (reports) or --report <file> (run)',
  '--limit': 'limit the questions with --questions-limit <n> (memory), or --max-cost <usd> for spend',
  '--budget': 'the spend limit is --max-cost <usd>',
  '--grader': 'echolens names the judge with --judge',
  '--scorer': 'echolens names the judge with --judge',
};

/** The hint for an unknown flag that another tool's users type by reflex, or null. */
export function unknownOptionHint(message: string): string | null {
  const flag = /unknown option '([^']+)'/u.exec(message)?.[1];
  return flag === undefined ? null : (FLAG_REFLEXES[flag.split('=')[0] as string] ?? null);
}

/** Runs the CLI with a full argv (`[node, script, ...args]`); returns the exit code. Expected failures print one clear message, no stack. */
export async function runCli(argv: readonly string[]): Promise<number> {
  try {
    const program = await buildProgram(argv.slice(2));
    await program.parseAsync(argv as string[]);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (caught) {
    if (caught instanceof CommanderError) {
      // --help and --version end through here with exit code 0; every usage error is exit 2.
      if (caught.code === 'commander.unknownOption') {
        const hint = unknownOptionHint(caught.message);
        if (hint !== null) process.stderr.write(`hint: ${hint}\n`);
      }
      return caught.exitCode === 0 ? 0 : EXIT.usage;
    }
    // A full disk or a damaged store is an expected fault: one line naming it, exit 2.
    const error = (isEcholensError(caught) ? undefined : storeFaultOf(caught, lastStoreFile())) ?? caught;
    if (isEcholensError(error)) {
      process.stderr.write(`echolens: ${error.message}\n`);
      if (error.hint) process.stderr.write(`hint: ${error.hint}\n`);
      return exitCodeOf(error);
    }
    process.stderr.write(`echolens: internal error (please report it)\n`);
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 70;
  }
}
