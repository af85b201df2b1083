import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../../builtin-sims.js';
import { runDemo } from '../../demo/demo.js';
import { CLI_FROM_SOURCE, type SpawnedRun, spawnCaptured } from '../testing/spawn-cli.js';

/** Runs a shell line from the package root (the CLI as `$ECHOLENS`). */
function sh(line: string, env: Record<string, string> = {}): Promise<SpawnedRun> {
  return spawnCaptured('bash', ['-c', line], { ECHOLENS: [process.execPath, ...CLI_FROM_SOURCE].join(' '), ...env });
}

const dir = mkdtempSync(join(tmpdir(), 'echolens-gate-cli-'));
let db = '';

describe('echolens gate on the demo', { timeout: 300_000 }, () => {
  beforeAll(async () => {
    registerBuiltinSimProfiles();
    db = (await runDemo({ outDir: dir, fresh: true })).db;
  }, 600_000);

  it('fails on the planted drift: exit 1, JUnit with failures, step summary, SIMULATED flag', async () => {
    const junit = join(dir, 'junit.xml');
    const summary = join(dir, 'summary.md');
    writeFileSync(summary, '# earlier step\n');
    const run = await sh(`$ECHOLENS gate ${JSON.stringify(db)} --junit ${JSON.stringify(junit)} --bootstrap 300`, { GITHUB_STEP_SUMMARY: summary });
    expect(run.stderr).not.toMatch(/internal error/);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/FAIL persona-\S+ persona sim:persona \(judge sim:judge\) significant-drift/);
    expect(run.stdout).toMatch(/gate: FAIL .* SIMULATED/);
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toMatch(/<failure message="Δ = \+/);
    expect(Number(/<testsuites [^>]*failures="(\d+)"/.exec(xml)?.[1])).toBeGreaterThan(0);
    const md = readFileSync(summary, 'utf8');
    expect(md.startsWith('# earlier step\n## echolens gate: ❌ fail')).toBe(true);
  });

  it('passes when the thresholds allow the effects (flags, or a gate: section in --config)', async () => {
    const loose = await sh(
      `$ECHOLENS gate ${JSON.stringify(db)} --no-significant-drift --no-significant-elevation --max-drift 5 --bootstrap 300 --format json`,
    );
    expect(loose.code).toBe(0);
    const result = JSON.parse(loose.stdout);
    expect(result.verdict).toBe('pass');
    expect(result.simulated).toBe(true);
    const config = join(dir, 'gate.yaml');
    writeFileSync(config, 'gate:\n  significantDrift: false\n  significantElevation: false\n');
    expect((await sh(`$ECHOLENS gate ${JSON.stringify(db)} --config ${JSON.stringify(config)} --bootstrap 300`)).code).toBe(0);
    writeFileSync(config, 'gate:\n  maxDrif: 0.3\n');
    const typo = await sh(`$ECHOLENS gate ${JSON.stringify(db)} --config ${JSON.stringify(config)}`);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/gate\.yaml:2/);
  });

  it('piping into head prints no stack trace', async () => {
    const run = await sh(`set -o pipefail; $ECHOLENS report ${JSON.stringify(db)} --format json --bootstrap 200 | head -c 64 >/dev/null`);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  });
});
