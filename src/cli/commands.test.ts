import { describe, expect, it } from 'vitest';
import { COMMAND_GROUPS } from './commands.js';
import { buildProgram } from './program.js';

describe('the command overview', () => {
  it('lists every group exactly as the loaded groups would (term and description)', async () => {
    const overview = await buildProgram(['--help']);
    const loaded = await buildProgram();
    expect(overview.helpInformation()).toBe(loaded.helpInformation());
    const help = loaded.createHelp();
    for (const group of COMMAND_GROUPS) {
      const command = loaded.commands.find((c) => c.name() === group.name);
      expect(command, group.name).toBeDefined();
      expect(help.subcommandTerm(command!), group.name).toBe(group.term);
      expect(command!.description(), group.name).toBe(group.summary);
    }
    expect(loaded.commands.map((c) => c.name())).toEqual(COMMAND_GROUPS.map((g) => g.name));
  });

  it('loads no group for --help, no command or an unknown command', async () => {
    for (const args of [['--help'], [], ['bogus'], ['help']]) {
      const program = await buildProgram(args);
      expect(program.commands.map((c) => c.name())).toEqual(COMMAND_GROUPS.map((g) => g.name));
      expect(
        program.commands.every((c) => c.commands.length === 0 && c.options.length === 0),
        args.join(' '),
      ).toBe(true);
    }
  });

  it('loads only the group a command line names, also after `help`', async () => {
    for (const args of [
      ['persona', '--help'],
      ['help', 'persona'],
    ]) {
      const program = await buildProgram(args);
      expect(program.commands.map((c) => c.name())).toEqual(['persona']);
      expect(program.commands[0]!.commands.length).toBeGreaterThan(0);
    }
  });
});
