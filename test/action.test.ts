import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runCliInProcess } from '../src/cli/testing/run-cli.js';
import { packageRoot } from '../src/core/version.js';

/** The composite action at the repository root (action.yml) and the example workflow that uses it. */

interface Step {
  id?: string;
  name?: string;
  uses?: string;
  shell?: string;
  run?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
}
interface Action {
  name: string;
  inputs: Record<string, { description: string; required?: boolean; default?: string }>;
  outputs?: Record<string, { value: string }>;
  runs: { using: string; steps: Step[] };
}

const root = packageRoot();
const action = parse(readFileSync(join(root, 'action.yml'), 'utf8')) as Action;
const INPUTS = [
  'store',
  'config',
  'max-drift',
  'max-elevation',
  'max-action-change',
  'max-failed-cells',
  'baseline',
  'max-change',
  'junit',
  'node-version',
  'echolens',
];

async function gateFlags(): Promise<Set<string>> {
  const help = await runCliInProcess(['gate', '--help']);
  expect(help.code).toBe(0);
  return new Set([...help.stdout.matchAll(/^\s+(?:-\w, )?(--[a-z][a-z-]*)/gmu)].map((m) => m[1] as string));
}

describe('action.yml', () => {
  it('is a composite action with the documented inputs; store is required; Node comes from actions/setup-node', () => {
    expect(action.runs.using).toBe('composite');
    expect(Object.keys(action.inputs).sort()).toEqual([...INPUTS].sort());
    expect(action.inputs.store?.required).toBe(true);
    expect(action.inputs.junit?.default).toBe('echolens-gate.xml');
    expect(['20', '22', '24']).toContain(action.inputs['node-version']?.default);
    const setup = action.runs.steps.find((s) => s.uses?.startsWith('actions/setup-node@'));
    expect(setup?.with?.['node-version']).toMatch(/^\$\{\{ inputs\.node-version \}\}$/u);
    for (const step of action.runs.steps.filter((s) => s.run !== undefined)) expect(step.shell).toBe('bash');
  });

  it('every input it reads is declared, every declared input is read, and none is pasted into a script', () => {
    const text = readFileSync(join(root, 'action.yml'), 'utf8');
    const used = new Set([...text.matchAll(/\$\{\{\s*inputs\.([a-z-]+)\s*\}\}/gu)].map((m) => m[1]));
    expect([...used].sort()).toEqual([...INPUTS].sort());
    for (const step of action.runs.steps) expect(step.run ?? '').not.toMatch(/\$\{\{/u);
  });

  it('the gate step uses only flags `echolens gate --help` lists, and writes the JUnit file and the step summary', async () => {
    const flags = await gateFlags();
    expect(flags.has('--junit')).toBe(true);
    const gate = action.runs.steps.find((s) => s.id === 'gate');
    const script = gate?.run ?? '';
    expect(script).toMatch(/args=\(gate "\$STORE"/u);
    const used = [...script.matchAll(/(--[a-z][a-z-]*)/gu)].map((m) => m[1] as string);
    expect(used.length).toBeGreaterThanOrEqual(6);
    for (const flag of used) expect(flags, `${flag} is a gate flag`).toContain(flag);
    expect(used).toContain('--junit');
    expect(used).toContain('--summary');
  });

  it('the gate step script, run by bash on a demo store, writes the JUnit file and appends the step summary', { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-action-'));
    expect((await runCliInProcess(['demo', '--out-dir', dir])).code).toBe(0);
    const store = join(dir, readdirSync(dir).find((f) => f.endsWith('.db')) as string);
    const summary = join(dir, 'summary.md');
    const junit = join(dir, 'gate.xml');
    const script = action.runs.steps.find((s) => s.id === 'gate')?.run as string;
    const run = spawnSync('bash', ['-c', script], {
      cwd: root,
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        CLI: `${process.execPath} --import tsx src/cli/main.ts`,
        STORE: store,
        CONFIG: '',
        MAX_DRIFT: '0.3',
        MAX_ELEVATION: '',
        MAX_ACTION_CHANGE: '',
        MAX_FAILED_CELLS: '',
        BASELINE: '',
        MAX_CHANGE: '',
        JUNIT: junit,
        GITHUB_STEP_SUMMARY: summary,
      },
    });
    // 0 = every check passed, 1 = a check failed (the demo plants drift); never a usage error.
    expect([0, 1], run.stderr).toContain(run.status);
    expect(existsSync(junit)).toBe(true);
    expect(readFileSync(junit, 'utf8')).toMatch(/<testsuites?[\s>]/u);
    expect(readFileSync(summary, 'utf8')).toMatch(/\S/u);
    // baseline: first on a store measured once: the change is skipped (a scheduled job's first run), exit 0.
    const baseline = spawnSync('bash', ['-c', script], {
      cwd: root,
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        CLI: `${process.execPath} --import tsx src/cli/main.ts`,
        STORE: store,
        CONFIG: '',
        MAX_DRIFT: '',
        MAX_ELEVATION: '',
        MAX_ACTION_CHANGE: '',
        MAX_FAILED_CELLS: '',
        BASELINE: 'first',
        MAX_CHANGE: '0.3',
        JUNIT: junit,
        GITHUB_STEP_SUMMARY: summary,
      },
    });
    expect(baseline.status, baseline.stderr).toBe(0);
    expect(readFileSync(junit, 'utf8')).toContain('max-change');
  });
});

describe('examples/github-action.yml', () => {
  it('uses the action with declared inputs only, giving the store', () => {
    const workflow = parse(readFileSync(join(root, 'examples', 'github-action.yml'), 'utf8')) as { jobs: Record<string, { steps: Step[] }> };
    const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);
    const uses = steps.filter((s) => s.uses !== undefined && /echolens@/u.test(s.uses));
    expect(uses.length).toBe(1);
    const given = Object.keys(uses[0]?.with ?? {});
    expect(given).toContain('store');
    for (const key of given) expect(INPUTS).toContain(key);
  });
});
