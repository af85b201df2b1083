import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../core/version.js';

function cli(args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: packageRoot(),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const dir = mkdtempSync(join(tmpdir(), 'echolens-persona-calibrate-'));
const config = join(dir, 'persona.yaml');
writeFileSync(
  config,
  ['sessions: [a.jsonl]', 'positions: [{ uniform: 8 }]', 'targets: [openai:gpt-x]', 'judges: [openai:judge-x]', 'mitigations: [none, a-anchor]', ''].join('\n'),
);

// Spawns the CLI (seconds of start-up on a loaded machine).
describe('echolens persona calibrate', { timeout: 600_000 }, () => {
  it('documents its knobs in --help', () => {
    const help = cli(['persona', 'calibrate', '--help']);
    expect(help.code).toBe(0);
    for (const flag of ['--replicates', '--seed', '--between-session', '--between-position', '--within-cell', '--format']) expect(help.stdout).toContain(flag);
  });

  it('prints FPR, coverage, power and MDE per test, as text and JSON, for the config design', () => {
    const text = cli(['persona', 'calibrate', config, '--replicates', '20']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/SIMULATED/);
    expect(text.stdout).toMatch(/1 session\(s\) × 8 position\(s\)/);
    expect(text.stdout).toMatch(/FPR 0\.\d{3} ± 0\.\d{3}/);
    const json = cli(['persona', 'calibrate', config, '--replicates', '10', '--sessions', '3', '--format', 'json']);
    expect(json.code).toBe(0);
    const result = JSON.parse(json.stdout);
    expect(result.schema).toBe('echolens.persona-calibration/1');
    expect(result.design.sessions).toBe(3);
    const tests = result.tests.map((t: { test: string }) => t.test);
    expect(tests.some((t: string) => t.startsWith('mitigation ') && t.includes('mitigation=a-anchor'))).toBe(true);
    const bad = cli(['persona', 'calibrate', config, '--within-cell', '-1']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--within-cell/);
  });
});
