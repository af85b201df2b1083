import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinAudits } from '../audits.js';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { commandFromSnapshot, helpTarget, printHelpFromSnapshot, snapshotOf } from './help-snapshot.js';
import { buildProgram } from './program.js';
import { runCliInProcess as cli } from './testing/run-cli.js';

/** Every command path of a tree (`['persona', 'run']`), parents before children. */
function commandPaths(command: Command, prefix: string[] = []): string[][] {
  return command.commands.flatMap((c) => [[...prefix, c.name()], ...commandPaths(c, [...prefix, c.name()])]);
}

/** What printHelpFromSnapshot writes to stdout, and whether it answered. */
function snapshotHelp(args: string[], file: string): { answered: boolean; stdout: string } {
  const out: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string | Uint8Array) => {
    out.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  }) as typeof process.stdout.write;
  try {
    return { answered: printHelpFromSnapshot(args, file), stdout: out.join('') };
  } finally {
    process.stdout.write = write;
  }
}

describe('help from the build snapshot of the command tree', { timeout: 120_000 }, () => {
  let dir: string;
  let file: string;
  let paths: string[][];

  beforeAll(async () => {
    registerBuiltinSimProfiles();
    registerBuiltinAudits();
    const program = await buildProgram();
    dir = mkdtempSync(join(tmpdir(), 'echolens-help-snapshot-'));
    file = join(dir, 'help-snapshot.json');
    writeFileSync(file, JSON.stringify(snapshotOf(program)));
    paths = commandPaths(program).filter((p) => p[p.length - 1] !== 'help');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("prints, for every command, exactly the help the command's own module prints", async () => {
    expect(paths.length).toBeGreaterThan(40);
    expect(paths).toContainEqual(['persona', 'run']);
    for (const path of paths) {
      const ordinary = await cli([...path, '--help']);
      expect(ordinary.code, path.join(' ')).toBe(0);
      const fromSnapshot = snapshotHelp([...path, '--help'], file);
      expect(fromSnapshot.answered, path.join(' ')).toBe(true);
      expect(fromSnapshot.stdout, path.join(' ')).toBe(ordinary.stdout);
    }
    expect(snapshotHelp(['persona', 'run', '-h'], file).stdout).toBe((await cli(['persona', 'run', '--help'])).stdout);
  });

  it('answers nothing but `<command words> --help`', () => {
    for (const args of [
      ['--help'],
      ['persona', 'run'],
      ['persona', 'run', 'persona.yaml', '--help'],
      ['persona', 'run', '--json', '--help'],
      ['help', 'persona'],
      ['persona', 'nope', '--help'],
      ['persona', '--help', 'run'],
    ]) {
      const run = snapshotHelp(args, file);
      expect(run, args.join(' ')).toEqual({ answered: false, stdout: '' });
    }
    expect(snapshotHelp(['persona', 'run', '--help'], join(dir, 'missing.json'))).toEqual({ answered: false, stdout: '' });
  });

  it('rebuilds a tree whose commands keep their arguments, options and parents', async () => {
    const program = commandFromSnapshot(JSON.parse(JSON.stringify(snapshotOf(await buildProgram()))));
    const run = helpTarget(program, ['persona', 'run', '--help']);
    expect(run?.name()).toBe('run');
    expect(run?.parent?.name()).toBe('persona');
    expect(run?.registeredArguments.map((a) => a.name())).toEqual(['config']);
    expect(run?.options.some((o) => o.long === '--dry-run')).toBe(true);
  });
});
