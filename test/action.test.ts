import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
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

  it('keeps its comment: Mondays, --fresh, the store restored before and kept after the measurement, the gate from the baseline with a JUnit file', () => {
    const workflow = parse(readFileSync(join(root, 'examples', 'github-action.yml'), 'utf8')) as {
      on: { schedule: Array<{ cron: string }> };
      jobs: Record<string, { steps: Array<Step & { if?: string }> }>;
    };
    expect(workflow.on.schedule[0]?.cron.split(/\s+/u)[4]).toBe('1');
    const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);
    const index = (test: (s: Step) => boolean) => steps.findIndex(test);
    const restore = index((s) => s.uses?.startsWith('actions/cache/restore') === true);
    const measure = index((s) => /echolens persona run .*--fresh/u.test(s.run ?? ''));
    const save = index((s) => s.uses?.startsWith('actions/cache/save') === true);
    const gate = index((s) => s.uses !== undefined && /echolens@/u.test(s.uses));
    expect(restore).toBeGreaterThanOrEqual(0);
    expect(restore).toBeLessThan(measure);
    expect(measure).toBeLessThan(save);
    expect(save).toBeLessThan(gate);
    expect(steps[save]?.if).toBe('always()');
    expect(steps[save]?.with?.path).toBe(steps[restore]?.with?.path);
    expect(steps[gate]?.with?.store?.startsWith(steps[restore]?.with?.path ?? '\0')).toBe(true);
    expect(steps[gate]?.with?.baseline).toBe('first');
    expect(steps[gate]?.with?.['max-change']).toMatch(/^\d/u);
    expect(steps[gate]?.with?.junit).toBe('gate.xml');
    // the action's gate step writes the step summary (checked by the action.yml tests above)
    expect(action.runs.steps.some((s) => /GITHUB_STEP_SUMMARY/u.test(s.run ?? ''))).toBe(true);
  });
});

describe('examples/github-workflow.yml', () => {
  const workflow = parse(readFileSync(join(root, 'examples', 'github-workflow.yml'), 'utf8')) as {
    on: { schedule: Array<{ cron: string }> };
    jobs: Record<string, { steps: Step[] }>;
  };
  const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);
  const index = (test: (s: Step) => boolean) => steps.findIndex(test);

  it('runs on Mondays, restores the store before measuring and keeps it (even on failure) before the gate', () => {
    expect(workflow.on.schedule[0]?.cron.split(/\s+/u)[4]).toBe('1');
    const restore = index((s) => s.uses?.startsWith('actions/cache/restore') === true);
    const measure = index((s) => /echolens persona run .*--fresh/u.test(s.run ?? ''));
    const save = index((s) => s.uses?.startsWith('actions/cache/save') === true);
    const gate = index((s) => /echolens gate .*--baseline first .*--max-change/u.test(s.run ?? ''));
    expect(restore).toBeGreaterThanOrEqual(0);
    expect(restore).toBeLessThan(measure);
    expect(measure).toBeLessThan(save);
    expect(save).toBeLessThan(gate);
    expect((steps[save] as Step & { if?: string }).if).toBe('always()');
    expect(steps[save]?.with?.path).toBe(steps[restore]?.with?.path);
    expect(steps[gate]?.run).toMatch(/--junit gate\.xml/u);
  });

  it('its echolens steps, run by bash week after week on a simulated design, keep the baseline, write the history, the summary and the JUnit file', {
    timeout: 600_000,
  }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-workflow-'));
    mkdirSync(join(dir, 'audit'));
    writeFileSync(
      join(dir, 'audit', 'persona.yaml'),
      `sessions: [${JSON.stringify(join(root, 'data', 'demo', 'claude-session.jsonl'))}]\npositions: [{ steps: [30, 50, 70] }]\nprobes: { categories: [coding_self], paraphrases: 1 }\nsamples: 2\ntargets: [sim:persona]\njudges: [sim:judge]\nanalysis: { B: 200 }\n`,
    );
    const scripts = steps.filter((s) => /^echolens /u.test(s.run ?? '')).map((s) => s.run as string);
    expect(scripts.map((s) => s.split(' ').slice(0, 2).join(' '))).toEqual(['echolens persona', 'echolens history', 'echolens gate']);
    const summary = join(dir, 'summary.md');
    const week = () =>
      scripts.map((script) =>
        spawnSync(
          'bash',
          [
            '-c',
            `echolens() { "${process.execPath}" --import "${pathToFileURL(join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href}" "${join(root, 'src', 'cli', 'main.ts')}" "$@"; }\n${script}`,
          ],
          {
            cwd: dir,
            encoding: 'utf8',
            env: { PATH: process.env.PATH ?? '', HOME: dir, GITHUB_STEP_SUMMARY: summary },
          },
        ),
      );
    const first = week();
    for (const r of first) expect(r.status, r.stderr).toBe(0);
    expect(first[2]?.stdout).toMatch(/max-change: one measurement .* so far: it is the baseline/u);
    const second = week();
    expect(second[0]?.status, second[0]?.stderr).toBe(0);
    expect(second[1]?.status).toBe(0);
    // 0 = no significant change above --max-change, 1 = one; never a usage error.
    expect([0, 1], second[2]?.stderr).toContain(second[2]?.status);
    const text = readFileSync(summary, 'utf8');
    expect(text).toMatch(/2 measurements/u);
    expect(text.match(/## echolens gate/gu)?.length).toBe(2);
    const junit = readFileSync(join(dir, 'gate.xml'), 'utf8');
    expect(junit).toMatch(/max-change/u);
    expect(junit).not.toMatch(/it is the baseline of the next/u);
  });
});
