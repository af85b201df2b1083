import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { outputFlagCommands } from './output-flags.js';
import { buildProgram } from './program.js';

/** The subcommand at `path` (`sessions inspect`) of a freshly built program. */
function find(root: Command, path: string): Command {
  let command = root;
  for (const name of path.split(' ')) {
    const next = command.commands.find((c) => c.name() === name);
    if (!next) throw new Error(`no command ${path}`);
    command = next;
  }
  return command;
}

/** Parses `path <required args> ...flags` with the action replaced by one that records the options. */
async function parsedOptions(path: string, flags: readonly string[]): Promise<Record<string, unknown>> {
  const program = await buildProgram();
  const command = find(program, path);
  let seen: Record<string, unknown> | undefined;
  command.action(function (this: Command) {
    seen = this.opts();
  });
  const args = command.registeredArguments.filter((a) => a.required).map(() => 'x');
  const mandatory = command.options.filter((o) => o.mandatory).flatMap((o) => [o.long as string, 'x']);
  await program.parseAsync(['node', 'echolens', ...path.split(' '), ...args, ...mandatory, ...flags]);
  if (!seen) throw new Error(`${path}: the action did not run`);
  return seen;
}

describe('--json is the short form of --format json on every command with machine output', { timeout: 120_000 }, () => {
  it('every command with JSON output has both flags, and both spellings reach the action as the same options', async () => {
    const program = await buildProgram();
    const withJson = outputFlagCommands(program).filter((c) => {
      const format = find(program, c.path).options.find((o) => o.long === '--format');
      return c.json || (format !== undefined && /\bjson\b/u.test(format.description));
    });
    // The commands named in the issue, at least: the one-word flag and the format flag kinds.
    const paths = withJson.map((c) => c.path);
    for (const expected of [
      'models',
      'audits',
      'runs list',
      'sessions inspect',
      'ask',
      'report',
      'gate',
      'compare',
      'persona report',
      'memory report',
      'continuation report',
    ]) {
      expect(paths).toContain(expected);
    }
    for (const { path, format, json } of withJson) {
      expect({ path, format, json }).toEqual({ path, format: true, json: true });
      const a = await parsedOptions(path, ['--json']);
      const b = await parsedOptions(path, ['--format', 'json']);
      expect(a.json, `${path} --json`).toBe(true);
      expect(b.json, `${path} --format json`).toBe(true);
      expect(a.format, `${path} --json`).toBe('json');
      expect(b.format, `${path} --format json`).toBe('json');
    }
  });

  it('a contradiction is refused', async () => {
    await expect(parsedOptions('report', ['--json', '--format', 'md'])).rejects.toThrow(/--json.*contradicts --format md/);
    await expect(parsedOptions('models', ['--json', '--format', 'text'])).rejects.toThrow(/contradicts --json/);
    await expect(parsedOptions('models', ['--format', 'yaml'])).rejects.toThrow(/must be text or json/);
  });
});
