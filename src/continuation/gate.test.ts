import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { runCliInProcess } from '../cli/testing/run-cli.js';
import { packageRoot } from '../core/version.js';
import { registerBuiltinAudits } from '../audits.js';
import { resolveRegisteredGate as resolveGate } from '../gate/registered.js';
import { gatedRuns, gateInput } from '../gate/collect.js';
import { evaluateGate } from '../gate/evaluate.js';
import { collectReports, verdictOfReport } from '../report/report.js';
import { openStore } from '../store/run-store.js';
import type { PairedEstimate } from './analysis.js';
import { continuationConfigSchema } from './config.js';
import { type ContinuationGateThresholds, continuationGateChecks as checksOf } from './gate.js';
import { runContinuation, type ContinuationReport } from './run.js';

registerBuiltinSimProfiles();

const DEMO = join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');
const CODEX = join(packageRoot(), 'src', 'continuation', '__fixtures__', 'codex-ledger.jsonl');

let dir: string;
let db: string;
let gainRun: string;
let nullRun: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'echolens-continuation-gate-'));
  db = join(dir, 'run.db');
  const run = async (target: string) =>
    (
      await runContinuation(
        // The run's own gate section: a change of the next call's fidelity above 0.05 in size fails.
        continuationConfigSchema.parse({ session: DEMO, crossSession: CODEX, targets: [target], decoding: { seed: 1 }, gate: { maxActionChange: 0.05 } }),
        db,
        { progress: false },
      )
    ).runId;
  gainRun = await run('sim:continuation');
  nullRun = await run('sim:continuation-null');
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

registerBuiltinAudits();
const continuationGateChecks = (report: Parameters<typeof checksOf>[0], t: ReturnType<typeof resolveGate>, runId: string) =>
  checksOf(report, t as unknown as ContinuationGateThresholds, runId);

describe('gating continuation runs through the registry', () => {
  it('checks the recent − cross difference of each run; the planted gain is above the run limit, the null one within it', async () => {
    const store = openStore(db, { readonly: true });
    try {
      const runs = await gatedRuns(store);
      expect(runs.map((r) => r.id).sort()).toEqual([gainRun, nullRun].sort());
      const result = evaluateGate(await Promise.all(runs.map((r) => gateInput(store, r))), resolveGate({ maxActionChange: 0.05 }));
      const check = (runId: string, name: string) => result.checks.find((c) => c.run === runId && c.name === name);
      // 25 cutpoints of the demo are too few for the planted gain to be significant; the size limit catches it.
      const significant = check(gainRun, 'significant-action-change')!;
      expect(significant).toMatchObject({ audit: 'continuation', subject: 'sim:continuation', status: 'pass' });
      expect(significant.message).toMatch(/recent − cross argument fidelity \(ITT\) \+0\.\d+ \[95% CI .*\], p = 0\.\d+, n = 25: no significant change/);
      expect(check(gainRun, 'max-action-change')).toMatchObject({ status: 'fail' });
      expect(check(nullRun, 'max-action-change')).toMatchObject({ subject: 'sim:continuation-null', status: 'pass' });
      expect(result.verdict).toBe('fail');
      expect(result.simulated).toBe(true);
      // The verdict every report carries goes through the same audit checks.
      const reports = await collectReports(store, [gainRun, nullRun]);
      expect(reports.map((r) => verdictOfReport(r).verdict)).toEqual(reports.map((r) => (r.run.id === gainRun ? 'fail' : 'pass')));
    } finally {
      await store.close();
    }
  });

  it('echolens gate exits 1 on the planted gain under the gate section of its config, 0 when a flag relaxes it', async () => {
    const failing = await runCliInProcess(['gate', db, '--run', gainRun]);
    expect(failing.code).toBe(1);
    expect(failing.stdout).toMatch(/FAIL \S+ continuation sim:continuation max-action-change: recent − cross argument fidelity \(ITT\) \+/);
    const relaxed = await runCliInProcess(['gate', db, '--run', gainRun, '--max-action-change', '0.9', '--no-significant-action-change', '--format', 'json']);
    expect(relaxed.code).toBe(0);
    const json = JSON.parse(relaxed.stdout);
    expect(json.thresholds).toMatchObject({ significantActionChange: false, maxActionChange: 0.9 });
    expect(json.checks.map((c: { name: string }) => c.name)).toEqual(['max-failed-cells', 'max-action-change']);
  });
});

describe('echolens continuation report', () => {
  it('carries the verdict envelope of every single-audit report (verdict, gate, manifest) in JSON and Markdown', async () => {
    const json = await runCliInProcess(['continuation', 'report', db, '--run', gainRun, '--format', 'json', '--resamples', '200']);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout);
    // The run's gate section fails the planted gain (as `echolens gate` does above).
    expect(report.verdict).toBe('fail');
    expect(report.gate).toMatchObject({ verdict: 'fail', simulated: true, skipped: [] });
    expect(report.gate.checks).toBe(3);
    expect(report.gate.failed.map((c: { name: string }) => c.name)).toEqual(['max-action-change']);
    expect(report.manifest).toMatchObject({ seed: expect.any(Number), config: expect.any(Object) });
    // The continuation report's own keys are all still there.
    expect(report).toMatchObject({ experiment: 'continuation', runId: gainRun, simulated: true });
    expect(report.analysis.primary).toEqual({ a: 'recent', b: 'cross' });
    expect(report.cutpoints).toHaveLength(25);
    const passing = JSON.parse((await runCliInProcess(['continuation', 'report', db, '--run', nullRun, '--format', 'json', '--resamples', '200'])).stdout);
    expect(passing.verdict).toBe('pass');
    const markdown = await runCliInProcess(['continuation', 'report', db, '--run', gainRun, '--resamples', '200']);
    expect(markdown.stdout).toMatch(/^# .*\n\n\*\*Verdict: FAIL\*\* \(1 of 3 gate checks failed/u);
    expect(markdown.stdout).toContain(`Manifest: run \`${gainRun}\``);
  });
});

describe('continuationGateChecks', () => {
  const estimate = (over: Partial<PairedEstimate>): PairedEstimate => ({
    n: 20,
    mean: 0.1,
    ci: [0.02, 0.18],
    standardError: 0.04,
    p: 0.01,
    method: 'monte-carlo',
    resamples: 20_000,
    nonZero: 15,
    role: 'primary',
    minAttainableP: 1 / 20_001,
    ...over,
  });
  const report = (itt: PairedEstimate | null): ContinuationReport =>
    ({
      analysis: {
        primary: { a: 'recent', b: 'cross' },
        alpha: 0.05,
        targets: [{ target: 't', contrasts: itt === null ? [] : [{ a: 'recent', b: 'cross', primary: true, itt, completeCase: itt }] }],
      },
    }) as unknown as ContinuationReport;

  it('fails a significant drop as well as a gain (either sign changes the next action)', () => {
    const checks = continuationGateChecks(report(estimate({ mean: -0.2, ci: [-0.3, -0.1], p: 0.002 })), resolveGate(), 'r');
    expect(checks).toEqual([expect.objectContaining({ name: 'significant-action-change', status: 'fail' })]);
    expect(continuationGateChecks(report(estimate({ p: 0.2 })), resolveGate(), 'r')[0]!.status).toBe('pass');
  });

  it('skips, with the reason, a difference that could not be computed or a run without the primary arms', () => {
    const none = continuationGateChecks(report(estimate({ mean: null, ci: null, p: null, n: 0, reason: 'no pairs' })), resolveGate(), 'r');
    expect(none).toEqual([expect.objectContaining({ name: 'action-change', status: 'skipped', message: expect.stringContaining('no pairs') })]);
    const missing = continuationGateChecks(report(null), resolveGate(), 'r');
    expect(missing[0]!.message).toContain('no recent and cross arms');
    expect(continuationGateChecks(report(null), resolveGate({ significantActionChange: false }), 'r')).toEqual([]);
  });
});
