/**
 * Issue #39: is the headline (and the pooled consensus) of the harness 3 + 9 design liberal? Its
 * end-to-end rows in verdict-designs.ts printed 0.0580 and 0.0640 (2,000 replicates each, seeds
 * 3913 and 103913) although the exact sign-flip test holds α for independent, symmetric session
 * values. This draws the same simulated runs as `persona calibrate` (simulateRun, the same design,
 * variances and seed, so its first 2,000 replicates at seed 3913 are verdict-designs.ts's) and
 * computes only those two claims with the report's own clusteredInference — the headline of the
 * first judge and the consensus (the judges' mean at each unit) — so it can afford 20,000
 * replicates. The headline p equals analyzePersonaInference's on the same observations.
 *
 *   nice -n 10 npx tsx tools/calibration/harness-headline.ts [replicates] [seed]   (default 20000 3913)
 */
import { DEFAULT_VARIANCE, simulateRun } from '../../src/persona-drift/calibrate.js';
import { BASE_DESIGN } from '../../src/persona-drift/calibrate-designs.js';
import { clusteredInference, type UnitValue } from '../../src/persona-drift/inference.js';
import { rng } from '../../src/stats/rng.js';

const replicates = Number(process.argv[2] ?? 20000);
const seed = Number(process.argv[3] ?? 3913);
const judges = ['j1', 'j2', 'j3'];
const design = {
  ...BASE_DESIGN,
  sessions: 12,
  positionsPerSession: 3,
  harnessGroups: [3, 9] as [number, number],
  harnessSpread: 4,
  judges,
  judgeNoise: [0.2, 0.2, 1.0],
};
const nullWorld = { fixed: () => 0, compactionShift: 0 };
const random = rng(seed);
const mean = (a: readonly number[]) => a.reduce((x, y) => x + y, 0) / a.length;
const count = { headline: 0, consensus: 0, headlineCovered: 0, consensusCovered: 0 };
const checkpoints: string[] = [];
for (let r = 0; r < replicates; r++) {
  const { observations } = simulateRun(design, { ...DEFAULT_VARIANCE, betweenSession: 0.3 }, nullWorld, random);
  const cells = new Map<string, { session: string; position: string; filler: number[][]; real: number[][] }>();
  for (const o of observations) {
    if (o.surface !== 'probe' || (o.arm !== 'filler' && o.arm !== 'real')) continue;
    const key = `${o.session}|${o.position}`;
    let cell = cells.get(key);
    if (!cell) {
      cell = { session: o.session, position: o.position, filler: judges.map(() => []), real: judges.map(() => []) };
      cells.set(key, cell);
    }
    for (const [j, judge] of judges.entries()) (cell[o.arm] as number[][])[j]?.push((o.scores as Record<string, number>)[judge] as number);
  }
  const gap = (c: { filler: number[][]; real: number[][] }, j: number) => mean(c.filler[j] as number[]) - mean(c.real[j] as number[]);
  const headline: UnitValue[] = [...cells.values()].map((c) => ({ session: c.session, position: c.position, value: gap(c, 0) }));
  const consensus: UnitValue[] = [...cells.values()].map((c) => ({ session: c.session, position: c.position, value: mean(judges.map((_, j) => gap(c, j))) }));
  const h = clusteredInference(headline, { seed: seed + r });
  const k = clusteredInference(consensus, { seed: seed + r });
  if (h.p < 0.05) count.headline++;
  if (k.p < 0.05) count.consensus++;
  if (h.claim.interval[0] <= 0 && h.claim.interval[1] >= 0) count.headlineCovered++;
  if (k.claim.interval[0] <= 0 && k.claim.interval[1] >= 0) count.consensusCovered++;
  if ((r + 1) % 2000 === 0) checkpoints.push(`${r + 1}: ${count.headline}, ${count.consensus}`);
}
const rate = (n: number) => {
  const p = n / replicates;
  return `${p.toFixed(4)} ± ${Math.sqrt((p * (1 - p)) / replicates).toFixed(4)}`;
};
console.log(`harness 3 + 9, Codex 4× spread, judges 0.2, 0.2, 1.0; ${replicates} replicates, seed ${seed}`);
console.log(`headline (first judge): FPR ${rate(count.headline)}, coverage ${(count.headlineCovered / replicates).toFixed(4)}`);
console.log(`consensus pooled Δ: FPR ${rate(count.consensus)}, coverage ${(count.consensusCovered / replicates).toFixed(4)}`);
console.log(`rejections after each 2,000 (headline, consensus): ${checkpoints.join('; ')}`);
