import { type Command, Option } from 'commander';
import { InvalidArgumentError } from '../core/errors.js';

/**
 * One spelling for machine output on every command that has output: `--json` is the short form
 * of `--format json`. Commands are written with one of the two; this pass, run once the commands
 * are built, gives each the other, so a new command gets both without remembering to.
 *
 * - a command with `--format` whose values include `json` gains `--json`;
 * - a command with `--json` and no `--format` gains `--format <text|json>`.
 *
 * A `preAction` hook maps one onto the other before the action runs, and refuses a contradiction
 * (`--json --format md`).
 */
export function addOutputFlagAliases(root: Command): void {
  const visit = (command: Command): void => {
    const format = command.options.find((o) => o.long === '--format');
    const json = command.options.find((o) => o.long === '--json');
    if (format && !json && /\bjson\b/u.test(format.description)) {
      command.addOption(new Option('--json', 'same as --format json'));
      command.hook('preAction', (_self, action) => {
        if (action !== command) return;
        if (action.getOptionValue('json') !== true) {
          // Both spellings leave the same options: `--format json` sets `json` too.
          if (action.getOptionValue('format') === 'json') action.setOptionValueWithSource('json', true, 'cli');
          return;
        }
        if (action.getOptionValueSource('format') === 'cli' && action.getOptionValue('format') !== 'json') {
          throw new InvalidArgumentError('--json', `contradicts --format ${String(action.getOptionValue('format'))}`);
        }
        action.setOptionValueWithSource('format', 'json', 'cli');
      });
    } else if (json && !format) {
      command.addOption(new Option('--format <format>', 'text or json (--format json is the same as --json)'));
      command.hook('preAction', (_self, action) => {
        if (action !== command) return;
        const value = action.getOptionValue('format') as string | undefined;
        if (value === undefined) {
          if (action.getOptionValue('json') === true) action.setOptionValueWithSource('format', 'json', 'cli');
          return;
        }
        if (value !== 'json' && value !== 'text') throw new InvalidArgumentError('--format', `must be text or json, got "${value}"`);
        if (value === 'json') action.setOptionValueWithSource('json', true, 'cli');
        else if (action.getOptionValue('json') === true) throw new InvalidArgumentError('--format', 'text contradicts --json');
      });
    }
    command.commands.forEach(visit);
  };
  visit(root);
}

/** Every command path (`sessions inspect`) with its machine-output flags, for tests and docs. */
export function outputFlagCommands(root: Command): Array<{ path: string; format: boolean; json: boolean }> {
  const out: Array<{ path: string; format: boolean; json: boolean }> = [];
  const visit = (command: Command, prefix: string[]): void => {
    const path = command === root ? [] : [...prefix, command.name()];
    const format = command.options.some((o) => o.long === '--format');
    const json = command.options.some((o) => o.long === '--json');
    if (format || json) out.push({ path: path.join(' '), format, json });
    for (const sub of command.commands) visit(sub, path);
  };
  visit(root, []);
  return out;
}
