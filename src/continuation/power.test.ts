import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../core/version.js';
import { analyzeContinuation, type ContinuationObservation, pairedEstimate } from './analysis.js';
import type { ContinuationArm } from './arms.js';
import { cutpointsNeeded, DEFAULT_PLANNING_SD, designMde, designPower, designPowerLine, observedPower } from './power.js';
import { sectionsHtml } from '../report/document/render-html.js';
import { continuationSections, continuationVerdicts, primaryVerdict, renderContinuationMarkdown } from './document.js';
import type { ContinuationReport } from './run.js';

const golden = JSON.parse(readFileSync(join(packageRoot(), 'src', 'continuation', '__fixtures__', 'golden-power.json'), 'utf8')) as {
  mde: Array<{ n: number; sd: number; alpha: number; mde: number; powerAtMde: number; powerAt015: number }>;
  needed: Array<{ effect: number; sd: number; alpha: number; cutpoints: number }>;
};

const obs = (cutpoint: string, arm: ContinuationArm, fidelity: number, sameTask: boolean | null): ContinuationObservation => ({
  target: 't',
  cutpoint,
  arm,
  generated: true,
  status: 'call',
  fidelity,
  sameTask,
});

/** `n` cutpoints, four arms; recent beats cross by `gain` at alternate cutpoints (some ties), `same` of them same-task. */
function design(n: number, same: number, gain: number): ContinuationObservation[] {
  const out: ContinuationObservation[] = [];
  for (let c = 0; c < n; c += 1) {
    const id = `C${String(c + 1).padStart(3, '0')}`;
    const base = 0.2 + (0.6 * ((c * 7) % 10)) / 10;
    const sameTask = c < same;
    out.push(obs(id, 'recent', Math.min(1, base + (c % 2 === 0 ? 2 * gain : 0)), sameTask));
    out.push(obs(id, 'cross', base, sameTask));
    out.push(obs(id, 'filler', Math.max(0, base - 0.1 * (c % 3)), sameTask));
    out.push(obs(id, 'scratch', base * 0.5, sameTask));
  }
  return out;
}

describe('continuation power', () => {
  it('design MDE and cutpoints needed agree with scipy (t quantiles)', () => {
    for (const g of golden.mde) {
      const mine = designMde(g.n, g.sd, g.alpha);
      expect(mine).not.toBeNull();
      expect(mine!).toBeCloseTo(g.mde, 6);
    }
    for (const g of golden.needed) expect(cutpointsNeeded(g.effect, g.sd, g.alpha)).toBe(g.cutpoints);
    expect(designMde(1, 0.5)).toBeNull();
  });

  it('design power is within 0.01 of the exact noncentral t (scipy) from 6 cutpoints on', () => {
    let checked = 0;
    for (const g of golden.mde.filter((row) => row.n >= 6)) {
      expect(Math.abs((designPower(g.n, g.sd, 0.15, g.alpha) as number) - g.powerAt015), `n ${g.n} sd ${g.sd} α ${g.alpha} at 0.15`).toBeLessThan(0.01);
      expect(Math.abs((designPower(g.n, g.sd, g.mde, g.alpha) as number) - g.powerAtMde), `n ${g.n} sd ${g.sd} α ${g.alpha} at the MDE`).toBeLessThan(0.01);
      checked += 2;
    }
    expect(checked).toBe(48);
    expect(designPower(1, 0.5, 0.15)).toBeNull();
    expect(() => designPower(10, 0, 0.15)).toThrow(/planningSd/);
    expect(() => designMde(10, 0)).toThrow(/planningSd/);
  });

  it('the default design (25 cutpoints) prints its MDE ≈ 0.32 and says it is underpowered for Δ = 0.15', () => {
    const line = designPowerLine(25);
    expect(designMde(25, DEFAULT_PLANNING_SD)!).toBeCloseTo(0.321, 3);
    expect(line).toMatch(/25 cutpoints → minimum detectable \|Δ\| fidelity ≈ 0\.32 at 80% power, power 0\.26 at \|Δ\| = 0\.15 \(the effect of interest\)/);
    expect(line).toMatch(/; UNDERPOWERED — about 108 cutpoints would detect it$/);
    // the printed power is scipy's exact figure to two decimals
    expect(golden.mde.find((g) => g.n === 25 && g.sd === 0.55 && g.alpha === 0.05)?.powerAt015.toFixed(2)).toBe('0.26');
    expect(designPowerLine(120, { effectOfInterest: 0.15 })).toMatch(/power 0\.8\d at \|Δ\| = 0\.15 .*; adequately powered$/);
    expect(designPowerLine(25, { effectOfInterest: 0.3, planningSd: 0.3 })).toMatch(/adequately powered/);
  });

  it('a run whose interval covers 0 with an MDE above the effect of interest is "underpowered", not "no detectable"', () => {
    const e = pairedEstimate([0.3, -0.1, 0.4, 0, 0.2, -0.3, 0.5, 0.1]);
    expect(e.ci![0]).toBeLessThan(0);
    const power = observedPower(e, { effectOfInterest: 0.15 });
    expect(power.mde!).toBeGreaterThan(0.15);
    expect(primaryVerdict(e, power, 'recent', 'cross')).toMatch(
      /^underpowered: no recent − cross difference detected, but this run could only detect \|Δ\| ≥ 0\.\d\d \(effect of interest 0\.15\)/,
    );
    expect(primaryVerdict(e, observedPower(e, { effectOfInterest: 0.9 }), 'recent', 'cross')).toMatch(/^no detectable recent − cross difference/);
  });
});

describe('continuation rows: primary vs exploratory, unreachable strata', () => {
  const analysis = analyzeContinuation(design(16, 4, 0.1), { resamples: 20_000 });
  const target = analysis.targets[0]!;
  const rows = target.contrasts.flatMap((c) => [
    c.completeCase,
    c.itt,
    c.strata.sameTask.completeCase,
    c.strata.sameTask.itt,
    c.strata.crossTask.completeCase,
    c.strata.crossTask.itt,
  ]);

  it('labels exactly the two primary rows primary and every other row exploratory', () => {
    expect(rows).toHaveLength(36);
    const primary = target.contrasts.find((c) => c.primary)!;
    expect(rows.filter((r) => r.role === 'primary')).toEqual([primary.completeCase, primary.itt]);
    expect(rows.filter((r) => r.role === 'exploratory')).toHaveLength(34);
  });

  it('warns when a stratum is too small to reach p < 0.05, and says which rows cannot', () => {
    expect(target.sameTaskCutpoints).toBe(4);
    expect(target.warnings.join('\n')).toMatch(/same-task stratum: 4 cutpoint\(s\) — too few for its sign-flip tests to reach p < 0.05 \(at least 6 needed\)/);
    expect(target.warnings.join('\n')).not.toMatch(/cross-task stratum/);
    const same = target.contrasts[0]!.strata.sameTask.itt;
    expect(same.minAttainableP).toBeGreaterThanOrEqual(0.05);
    expect(same.warning).toMatch(/cannot reach p < 0.05/);
    expect(target.contrasts[0]!.itt.warning).toBeUndefined();
    // 2^(1−m) exactly: five non-zero pairs give 1/16, six give 1/32.
    expect(pairedEstimate([0.1, 0.2, 0.1, 0.3, 0.2]).minAttainableP).toBeCloseTo(1 / 16, 12);
    expect(pairedEstimate([0.1, 0.2, 0.1, 0.3, 0.2, 0.1]).warning).toBeUndefined();
  });

  it('every format says which rows are exploratory', async () => {
    const report = {
      experiment: 'continuation',
      runId: 'r1',
      simulated: true,
      session: 's.jsonl',
      crossSession: null,
      toolSource: 'reconstructed',
      tools: ['Bash'],
      taskSource: 'heuristic',
      notes: [],
      cutpoints: [],
      analysis,
      judge: null,
      reference: null,
      cells: [],
    } as unknown as ContinuationReport;
    const markdown = renderContinuationMarkdown(report);
    expect(markdown).toMatch(/\| contrast \| analysis \| stratum \| role \|/);
    expect(markdown).toMatch(/\| recent − cross \(primary\) \| complete case \| all \| primary \|/);
    expect(markdown).toMatch(/\| recent − cross \(primary\) \| ITT \| same-task \| exploratory \|/);
    expect(markdown).toMatch(/\| recent − filler \| ITT \| all \| exploratory \|/);
    expect(markdown).toMatch(/warning: same-task stratum/);
    const htmlText = String(await sectionsHtml(continuationSections(report)));
    expect(htmlText).toMatch(/Every other row is <strong>exploratory<\/strong>/);
    expect(htmlText).toMatch(/<li>warning: same-task stratum/);
    const json = JSON.parse(JSON.stringify(report)) as ContinuationReport;
    expect(json.analysis.targets[0]!.contrasts[1]!.itt.role).toBe('exploratory');
    expect(json.analysis.targets[0]!.power!.completeCase.mde).toBeGreaterThan(0);
    // This design detects its planted gain of +0.10 (MDE ≈ 0.08 < 0.15): the headline says so.
    expect(json.analysis.targets[0]!.power!.completeCase.underpowered).toBe(false);
    expect(continuationVerdicts(report)[0]!.verdict).toBe('recent context raises fidelity over cross');
    // Eight noisy cutpoints: no detection, and an MDE (≈ 0.6) above the effect of interest (0.15): underpowered.
    const swings = [0.3, -0.25, 0.2, -0.1, 0.35, -0.3, 0.05, 0];
    const noisyObservations = swings.flatMap((d, c) => [obs(`N${c}`, 'recent', 0.5 + d / 2, c < 4), obs(`N${c}`, 'cross', 0.5 - d / 2, c < 4)]);
    const noisy = analyzeContinuation(noisyObservations, { resamples: 20_000 });
    const noisyReport = { ...report, analysis: noisy } as ContinuationReport;
    expect(noisy.targets[0]!.power!.completeCase.underpowered).toBe(true);
    expect(continuationVerdicts(noisyReport)[0]!.verdict).toMatch(/^underpowered: no recent − cross difference detected/);
    expect(renderContinuationMarkdown(noisyReport)).toMatch(/Verdict \(ITT\): underpowered/);
  });
});
