/**
 * Issue #39's done-when designs measured end to end through the calibrations the CLI runs
 * (`persona calibrate`, `continuation calibrate`): simulated runs analysed by the report's own
 * code, seeded. Prints a Markdown table (copied to docs/statistics.md, "Verdict calibration").
 *
 *   nice -n 10 npx tsx tools/calibration/verdict-designs.ts [replicates] [design filter] [seed offset]   (default 400, all, 0)
 *
 * Rows are printed as each design finishes; the filter keeps the designs whose label contains it
 * ("" for all). A seed offset adds to every design's seed: a second, independent batch of
 * replicates to pool with the first (docs/statistics.md pools the harness designs' two batches).
 *
 * The cheap direct checks (≥ 2,000 replicates of the tests alone) are in the slow-tier tests:
 * consensus-harness.test.ts, verdicts.slow.test.ts, dependence.slow.test.ts; the test-level
 * comparison for the rare dominant session is tools/calibration/dominant_session.py.
 */
import { calibrateContinuation } from '../../src/continuation/calibrate.js';
import { CONTINUATION_NULL_SIM, CONTINUATION_SIM } from '../../src/continuation/sim.js';
import { type CalibrationDesign, calibratePersona, type SessionEffectShape, type TestOperatingCharacteristics } from '../../src/persona-drift/calibrate.js';
import { BASE_DESIGN } from '../../src/persona-drift/calibrate-designs.js';

const replicates = Number(process.argv[2] ?? 400);
const only = process.argv[3];
const seedOffset = Number(process.argv[4] ?? 0);
const wanted = (label: string) => only === undefined || label.includes(only);
const rows = { push: (line: string) => process.stdout.write(`${line}\n`) };
process.stdout.write(
  `${replicates} seeded replicates per world (seed offset ${seedOffset}); nominal FPR 0.05, coverage 0.95; ± Monte Carlo SE; (n) null replicates\n\n| design | test | FPR (nulls) | 95% coverage | power |\n| --- | --- | --- | --- | --- |\n`,
);
const rate = (r: { rate: number; mcSE: number } | null | undefined) => (r ? `${r.rate.toFixed(4)} ± ${r.mcSE.toFixed(4)}` : '—');
const row = (design: string, test: string, t: Pick<TestOperatingCharacteristics, 'fpr' | 'coverage' | 'power' | 'nullReplicates'> | undefined) => {
  if (!t) throw new Error(`${design}: no ${test}`);
  rows.push(`| ${design} | ${test} | ${rate(t.fpr)} (${t.nullReplicates}) | ${rate(t.coverage)} | ${rate(t.power)} |`);
};
const find = (tests: readonly TestOperatingCharacteristics[], prefix: string) => tests.find((t) => t.test.startsWith(prefix));

function persona(label: string, design: CalibrationDesign, shape: SessionEffectShape, worlds: Array<'null' | 'drift'>, seed: number) {
  if (!wanted(label)) return;
  const started = Date.now();
  const result = calibratePersona(design, { replicates, worlds, seed: seed + seedOffset, sessionEffects: shape, variance: { betweenSession: 0.3 } });
  const t = result.tests;
  row(label, 'headline drift: sign-flip p, its interval', find(t, 'drift target='));
  row(label, 'drift verdict (Holm; fragile = not significant)', find(t, 'drift verdict'));
  if (design.harnessGroups) row(label, 'harness contrast (Welch, ν − 1)', find(t, 'harness contrast'));
  if (design.judges.length > 1) {
    row(label, 'judge effect F (Greenhouse–Geisser)', find(t, 'judge effect F'));
    row(label, 'consensus pooled Δ', find(t, 'consensus pooled'));
  }
  process.stderr.write(`${label}: ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}

const eight: CalibrationDesign = { ...BASE_DESIGN, sessions: 8, positionsPerSession: 4 };
persona('persona 8 sessions × 4, normal session effects', eight, 'normal', ['null', 'drift'], 3911);
persona('persona 8 sessions × 4, rare dominant session', eight, 'dominant', ['null'], 3912);
persona('persona 8 sessions × 4, one dominant session (+1.4, seven at −0.2)', eight, 'one-dominant', ['null'], 3915);
persona(
  'harness 3 + 9, Codex 4× spread; judges 0.2, 0.2, 1.0',
  { ...BASE_DESIGN, sessions: 12, positionsPerSession: 3, harnessGroups: [3, 9], harnessSpread: 4, judges: ['j1', 'j2', 'j3'], judgeNoise: [0.2, 0.2, 1.0] },
  'normal',
  ['null'],
  3913,
);
persona('harness 5 + 5, equal spread', { ...BASE_DESIGN, sessions: 10, positionsPerSession: 3, harnessGroups: [5, 5] }, 'normal', ['null'], 3914);

for (const [label, params, declared, seed] of [
  ['continuation 50 cutpoints, runs of 5 repeating at 0.6, declared', CONTINUATION_NULL_SIM, true, 3921],
  ['continuation 50 cutpoints, runs of 5 repeating at 0.6, declared (planted)', CONTINUATION_SIM, true, 3922],
  ['continuation 50 cutpoints, independent (today’s design, planted)', CONTINUATION_SIM, null, 3923],
] as const) {
  if (!wanted(label)) continue;
  const started = Date.now();
  const result = calibrateContinuation(params, {
    cutpoints: 50,
    replicates,
    seed: seed + seedOffset,
    ...(declared === null ? {} : { blocks: { size: 5, repeat: 0.6, declared } }),
  });
  for (const t of result.tests) {
    const planted = params === CONTINUATION_SIM;
    rows.push(
      `| ${label} | ${t.test} | ${planted ? '—' : `${rate(t.rejection)} (${replicates})`} | ${rate(t.coverage)} | ${planted ? rate(t.rejection) : '—'} |`,
    );
  }
  process.stderr.write(`${label}: ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}
