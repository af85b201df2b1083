import { Command, CommanderError } from 'commander';
import { isEcholensError } from '../core/errors.js';
import { packageVersion } from '../core/version.js';
import { registerCommands } from './commands.js';
import { EXIT, exitCodeOf } from './exit-codes.js';

export function buildProgram(): Command {
  const program = new Command();
  program
    .name('echolens')
    .description(
      'Audit language models for drift: memory drift (DriftLens) and persona drift in long agentic sessions (ContextEcho).',
    )
    .version(packageVersion(), '-V, --version', 'print the echolens version')
    .showHelpAfterError('(run with --help for usage)')
    .configureHelp({ sortSubcommands: false });
  registerCommands(program);
  return program;
}

/** Runs the CLI; returns the process exit code. Expected failures print one clear message, no stack. */
export async function runCli(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  // Every command, not only the root: commander would otherwise exit 1 itself on a usage error.
  const override = (command: Command): void => {
    command.exitOverride();
    command.commands.forEach(override);
  };
  override(program);
  try {
    await program.parseAsync(argv as string[]);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end through here with exit code 0; every usage error is exit 2.
      return error.exitCode === 0 ? 0 : EXIT.usage;
    }
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
