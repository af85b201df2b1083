import { describe, expect, it } from 'vitest';
import { runCliInProcess } from '../cli/testing/run-cli.js';
import { InvalidArgumentError } from '../core/errors.js';
import { packageRoot } from '../core/version.js';
import { join } from 'node:path';
import { type CalibrationDesign, calibratePersona, simulatedHarnesses } from './calibrate.js';
import { renderCalibrationText } from './calibrate-text.js';
import { BASE_DESIGN } from './calibrate-designs.js';

/**
 * `persona calibrate` simulates the departures of issue #39 (seeded, small replicate counts; the
 * measured tables are in docs/statistics.md, from tools/calibration/verdict-designs.ts): unequal
 * harness groups and spreads, and one judge noisier than the others. Both are nulls by
 * construction (no harness difference, no judge × arm interaction is planted).
 */

const find = (tests: ReturnType<typeof calibratePersona>['tests'], prefix: string) => {
  const row = tests.find((t) => t.test.startsWith(prefix));
  if (!row) throw new Error(`no test starting with "${prefix}"; have ${tests.map((t) => t.test).join(' | ')}`);
  return row;
};

const harnessDesign: CalibrationDesign = {
  ...BASE_DESIGN,
  sessions: 12,
  positionsPerSession: 3,
  harnessGroups: [3, 9],
  harnessSpread: 4,
  judges: ['j1', 'j2', 'j3'],
  judgeNoise: [0.2, 0.2, 1.0],
};

describe('persona calibrate: departures from the tests’ assumptions', () => {
  it('unequal harness groups and spreads: the harness contrast is tested on every replicate and holds its level', () => {
    const result = calibratePersona(harnessDesign, { replicates: 120, worlds: ['null'], seed: 11, variance: { betweenSession: 0.3 } });
    const harness = find(result.tests, 'harness contrast claude-code − codex');
    // One harness row per judge and replicate, all nulls (no harness difference is planted).
    expect(harness.nullReplicates).toBe(3 * 120);
    expect(harness.refused).toBe(0);
    expect(harness.fpr!.rate).toBeLessThanOrEqual(0.05 + 3 * Math.max(harness.fpr!.mcSE, 0.0115));
    expect(harness.coverage!.rate).toBeGreaterThanOrEqual(0.92);
    const judge = find(result.tests, 'judge effect F (Greenhouse–Geisser)');
    expect(judge.nullReplicates).toBe(120);
    expect(judge.fpr!.rate).toBeLessThanOrEqual(0.05 + 3 * Math.max(judge.fpr!.mcSE, 0.02));
    const consensus = find(result.tests, 'consensus pooled Δ over judges');
    expect(consensus.nullReplicates).toBe(120);
    const text = renderCalibrationText(result);
    expect(text).toContain('harnesses: 3 Claude Code + 9 Codex session(s), Codex session effects 4× as spread');
    expect(text).toContain('judge noise SD per response: j1 0.2, j2 0.2, j3 1');
    expect(text).toContain('(nominal 0.050;');
    expect(text).toContain('(nominal 0.950)');
  });

  it('the first group of sessions is recorded as Claude Code, the rest as Codex', () => {
    const result = calibratePersona(
      { ...harnessDesign, judges: ['j1'], judgeNoise: [0.2], harnessGroups: [6, 6], positionsPerSession: 6 },
      {
        replicates: 1,
        worlds: ['null'],
        seed: 3,
      },
    );
    expect(result.design.harnessSpread).toBe(4);
    const harnesses = simulatedHarnesses(result.design)!;
    expect(Object.values(harnesses).filter((h) => h === 'codex')).toHaveLength(6);
    expect(harnesses['session-01']).toBe('claude-code');
    expect(harnesses['session-12']).toBe('codex');
  });

  it('refuses inconsistent departures', () => {
    expect(() => calibratePersona({ ...harnessDesign, harnessGroups: [3, 8] }, { replicates: 1 })).toThrow(InvalidArgumentError);
    expect(() => calibratePersona({ ...harnessDesign, judgeNoise: [0.2, 1] }, { replicates: 1 })).toThrow(/one SD per judge/u);
    const { harnessGroups: _, ...noGroups } = harnessDesign;
    expect(() => calibratePersona(noGroups, { replicates: 1 })).toThrow(/needs harnessGroups/u);
  });

  it('CLI: --harness-groups, --harness-spread and --judge-noise set the design; bad values exit 2 naming the flag', async () => {
    const session = join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');
    const base = ['persona', 'calibrate', '--session', session, '--positions', '2', '--replicates', '2', '--set', 'mitigations=["none"]', '--format', 'json'];
    const ok = await runCliInProcess([...base, '--harness-groups', '3,4', '--harness-spread', '4', '--judge-noise', '0.2,0.2,1.0']);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    const json = JSON.parse(ok.stdout) as { design: CalibrationDesign; tests: Array<{ test: string }> };
    expect(json.design).toMatchObject({
      sessions: 7,
      harnessGroups: [3, 4],
      harnessSpread: 4,
      judgeNoise: [0.2, 0.2, 1],
      judges: ['judge-1', 'judge-2', 'judge-3'],
    });
    expect(json.tests.some((t) => t.test.startsWith('harness contrast'))).toBe(true);
    expect(json.tests.some((t) => t.test.startsWith('judge effect F'))).toBe(true);
    const bad = await runCliInProcess([...base, '--harness-groups', '3']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--harness-groups');
    const noise = await runCliInProcess([...base, '--judge-noise', '0.2,x']);
    expect(noise.code).toBe(2);
    expect(noise.stderr).toContain('--judge-noise');
    const spread = await runCliInProcess([...base, '--harness-spread', '4']);
    expect(spread.code).toBe(2);
    expect(spread.stderr).toContain('needs --harness-groups');
  });
});
