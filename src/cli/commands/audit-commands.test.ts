import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import type { AnyAudit } from '../../experiment/audit.js';
import { registerAuditCommands } from './audit-commands.js';

/** What a command writes to stdout. */
async function stdoutOf(run: () => Promise<unknown>): Promise<string> {
  const out: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string) => {
    out.push(chunk);
    return true;
  }) as typeof process.stdout.write;
  try {
    await run();
  } finally {
    process.stdout.write = write;
  }
  return out.join('');
}

describe('the generated audit group', () => {
  // Only the members the generated commands read before running anything.
  const audit = {
    name: 'fake',
    title: 'Fake audit',
    command: 'fake',
    calibrate: async ({ replicates }: { replicates: number }) => ({
      audit: 'fake',
      replicates,
      tests: [
        { test: 'a|b', rejection: { rate: 0.05, mcSE: 0.01 } },
        { test: 'none', rejection: null },
      ],
      notes: ['A note.'],
    }),
  } as unknown as AnyAudit;

  it('makes run, report and calibrate; hooks add flags and sub-commands and replace calibrate', () => {
    const plain = new Command('fake');
    registerAuditCommands(plain, audit);
    expect(plain.commands.map((c) => c.name())).toEqual(['run', 'report', 'calibrate']);
    const hooked = new Command('fake');
    registerAuditCommands(hooked, audit, {
      run: { flags: (run) => run.option('--extra <x>', 'an extra flag') },
      calibrate: (group) => void group.command('calibrate').description('its own'),
      extra: (group) => void group.command('more'),
    });
    expect(hooked.commands.map((c) => c.name())).toEqual(['run', 'report', 'calibrate', 'more']);
    const run = hooked.commands[0] as Command;
    expect(run.options.map((o) => o.long)).toEqual(expect.arrayContaining(['--db', '--dry-run', '--set', '--target', '--extra', '--concurrency', '--fresh']));
    expect(run.options.map((o) => o.long)).not.toContain('--report');
    expect(hooked.commands[2]?.description()).toBe('its own');
  });

  it("calibrate prints the audit's calibration through the shared Markdown renderer", async () => {
    const program = new Command().exitOverride();
    registerAuditCommands(program.command('fake'), audit);
    const md = await stdoutOf(() => program.parseAsync(['fake', 'calibrate', '--replicates', '7'], { from: 'user' }));
    expect(md).toBe(
      '# Fake audit: calibration (simulated)\n\n7 simulated runs.\n\n| test | rejection rate | Monte Carlo SE |\n| --- | --- | --- |\n| a\\|b | 0.05 | 0.01 |\n| none | — | — |\n\nA note.\n',
    );
  });
});
