import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

function cli(...args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { encoding: 'utf8' });
}

describe('echolens CLI', () => {
  it('prints its version', () => {
    const run = cli('--version');
    expect(run.status).toBe(0);
    expect(run.stdout.trim()).toBe(pkg.version);
  });

  it('prints help naming both audits', () => {
    const run = cli('--help');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('Usage: echolens');
    expect(run.stdout).toMatch(/DriftLens/);
    expect(run.stdout).toMatch(/ContextEcho/);
  });

  it('rejects an unknown command with a non-zero exit and no stack trace', () => {
    const run = cli('no-such-command');
    expect(run.status).not.toBe(0);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});
