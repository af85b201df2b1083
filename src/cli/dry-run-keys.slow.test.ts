import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../core/version.js';
import { spawnCli as cli } from './testing/spawn-cli.js';

// A grid can be priced before anyone has API keys: `--dry-run` prints the plan and the estimate,
// lists the missing keys as warnings and exits 0; the same command without --dry-run still stops.
const dir = mkdtempSync(join(tmpdir(), 'echolens-dry-keys-'));
const SESSION = join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');

describe('--dry-run without API keys', { timeout: 180_000 }, () => {
  it('persona: estimate, key warnings, exit 0; a real run still stops at preflight', async () => {
    const args = ['persona', 'run', '--session', SESSION, '--target', 'openai:gpt-4.1-mini', '--judge', 'anthropic:claude-sonnet-4-5'];
    const dry = await cli([...args, '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/\$\d/); // the estimate is printed
    expect(dry.stderr).toMatch(/warning: 2 API keys are missing/);
    expect(dry.stderr).toMatch(/targets\.0: .*OPENAI_API_KEY/);
    expect(dry.stderr).toMatch(/judges\.0: .*ANTHROPIC_API_KEY/);
    // The hint is one parenthesis, not two nested ones.
    expect(dry.stderr).not.toMatch(/\([^()]*\([^()]*\)\)/);
    const db = join(dir, 'persona.db');
    const real = await cli([...args, '--db', db]);
    expect(real.code).toBe(2);
    expect(real.stderr).toMatch(/preflight found 2 problems/);
    expect(existsSync(db)).toBe(false);
  });

  it('a dry run with another problem besides a missing key still exits 2 and names only that problem', async () => {
    const dry = await cli(['persona', 'run', '--session', SESSION, '--target', 'openai:gpt-4.1-mini', '--judge', 'sim:judgee', '--dry-run']);
    expect(dry.code).toBe(2);
    expect(dry.stderr).toMatch(/preflight found 1 problem;/);
    expect(dry.stderr).toMatch(/judges\.0: .*did you mean/);
  });

  it('memory: estimate, key warning, exit 0', async () => {
    const dry = await cli(['memory', 'run', 'examples/memory-sim.yaml', '--set', 'targets=["openai:gpt-4.1-mini"]', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/\$\d/);
    expect(dry.stderr).toMatch(/warning: 1 API key is missing/);
    expect(dry.stderr).toMatch(/targets\.0: .*OPENAI_API_KEY/);
    const db = join(dir, 'memory.db');
    const real = await cli(['memory', 'run', 'examples/memory-sim.yaml', '--set', 'targets=["openai:gpt-4.1-mini"]', '--db', db]);
    expect(real.code).toBe(2);
    expect(existsSync(db)).toBe(false);
  });

  it('continuation: estimate, key warning, exit 0; a real run stops at preflight with nothing recorded', async () => {
    const args = ['continuation', 'run', '--session', SESSION, '--target', 'openai:gpt-4.1-mini'];
    const dry = await cli([...args, '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/\$\d/);
    expect(dry.stderr).toMatch(/warning: 1 API key is missing/);
    expect(dry.stderr).toMatch(/targets\.0: .*OPENAI_API_KEY/);
    const db = join(dir, 'continuation.db');
    const real = await cli([...args, '--db', db]);
    expect(real.code).toBe(2);
    expect(real.stderr).toMatch(/preflight found 1 problem; nothing was called and no run was recorded/);
    expect(existsSync(db)).toBe(false);
  });
});
