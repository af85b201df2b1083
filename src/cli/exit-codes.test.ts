import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { personaArgs } from './testing/persona-args.js';
import { spawnCli as cli } from './testing/spawn-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'echolens-exit-codes-'));

describe('exit codes', { timeout: 120_000 }, () => {
  it('usage errors exit 2; --help exits 0', async () => {
    const unknownOption = await cli(['persona', 'run', '--bogus']);
    expect(unknownOption.code).toBe(2);
    expect(unknownOption.stderr).toMatch(/unknown option '--bogus'/);
    expect((await cli(['no-such-command'])).code).toBe(2);
    expect((await cli(['gate'])).code).toBe(2); // missing argument
    expect((await cli(['--help'])).code).toBe(0);
  });

  it('a typo in a model and a missing key exit 2 in preflight, listing both, with no run recorded', async () => {
    const db = join(dir, 'preflight.db');
    const run = await cli(personaArgs({ targets: ['sim:persna', 'openai:gpt-4.1-mini'], judges: ['sim:judge'], db }));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/preflight found 2 problems; nothing was called and no run was recorded/);
    expect(run.stderr).toMatch(/targets\.0: .*no simulation profile "persna" \(did you mean "persona"\?\)/);
    expect(run.stderr).toMatch(/targets\.1: .*OPENAI_API_KEY/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(db)).toBe(false);
    // --dry-run runs the same preflight.
    const dry = await cli([...personaArgs({ targets: ['sim:persna'], judges: ['sim:judge'] }), '--dry-run']);
    expect(dry.code).toBe(2);
    expect(dry.stderr).toMatch(/did you mean "persona"/);
  });

  it('a grid over the budget exits 2 naming the budget and one that fits', async () => {
    const run = await cli([...personaArgs({ targets: ['openai:gpt-4.1'], judges: ['openai:gpt-4.1-mini'] }), '--max-cost', '0.01', '--dry-run'], {
      OPENAI_API_KEY: 'sk-test-not-used',
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/over the budget --max-cost \$0\.01/);
    expect(run.stderr).toMatch(/raise --max-cost to \$\d/);
    expect(run.stderr).not.toContain('sk-test-not-used');
  });

  it('a missing session file is named', async () => {
    const run = await cli(['persona', 'run', '--session', join(dir, 'absent.jsonl'), '--target', 'sim:persona', '--judge', 'sim:judge', '--dry-run']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/sessions\.0: no such file: .*absent\.jsonl/);
  });
});
