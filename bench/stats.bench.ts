// Benchmark: dRel (question-level cluster bootstrap of d_rel, DriftLens §2.5) against the same
// resampling written in vectorized numpy, run in the same command on the same data.
// Full size: 1,000 questions × 27 rows (9 treat + 18 noise) = 27,000 observations, B = 10,000.
// BENCH_SMOKE=1: 50 questions, B = 200.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ClusteredValue, dRel } from '../src/stats/d-rel.js';
import { rng } from '../src/stats/rng.js';

const smoke = Boolean(process.env.BENCH_SMOKE);
const QUESTIONS = smoke ? 50 : 1000;
const TREAT_PER_QUESTION = 9;
const NOISE_PER_QUESTION = 18;
const B = smoke ? 200 : 10_000;
const RUNS = smoke ? 1 : 3;

function makeData() {
  const r = rng(1);
  const normal = () => {
    let u = 0;
    while (u === 0) u = r.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r.next());
  };
  const treat: ClusteredValue[] = [];
  const noise: ClusteredValue[] = [];
  for (let q = 0; q < QUESTIONS; q++) {
    const intercept = 0.05 * normal();
    for (let i = 0; i < TREAT_PER_QUESTION; i++) treat.push({ value: 0.35 + intercept + 0.1 * normal(), cluster: q });
    for (let i = 0; i < NOISE_PER_QUESTION; i++) noise.push({ value: 0.3 + intercept + 0.1 * normal(), cluster: q });
  }
  return { treat, noise };
}

// Vectorized numpy: per-question sufficient statistics (n, Σx, Σx²) per arm, then every
// replicate's question draw as one row of a (chunk × K) index matrix — the same algorithm
// as dRel. A row-level variant (concatenate the drawn questions' rows, then mean and std,
// as a direct transcription of the paper would) is timed on fewer replicates and scaled.
const PYTHON = `
import sys, time, json
import numpy as np
folder, B, row_B = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
values = np.fromfile(folder + '/values.f64', dtype=np.float64)
cluster = np.fromfile(folder + '/cluster.i32', dtype=np.int32)
arm = np.fromfile(folder + '/arm.u8', dtype=np.uint8)   # 1 = treat, 0 = noise
K = int(cluster.max()) + 1

def summarize(d):
    lo, hi = np.percentile(d, [2.5, 97.5])
    return [float(lo), float(hi)]

t0 = time.perf_counter()
t_mask, n_mask = arm == 1, arm == 0
shift = values[n_mask].mean()
x = values - shift
tn = np.bincount(cluster[t_mask], minlength=K).astype(float)
ts = np.bincount(cluster[t_mask], weights=x[t_mask], minlength=K)
nn = np.bincount(cluster[n_mask], minlength=K).astype(float)
ns = np.bincount(cluster[n_mask], weights=x[n_mask], minlength=K)
nq = np.bincount(cluster[n_mask], weights=x[n_mask] ** 2, minlength=K)
rng = np.random.default_rng(42)
out = np.empty(B)
chunk = 1000
for start in range(0, B, chunk):
    m = min(chunk, B - start)
    idx = rng.integers(0, K, size=(m, K))
    TN, TS = tn[idx].sum(1), ts[idx].sum(1)
    NN, NS, NQ = nn[idx].sum(1), ns[idx].sum(1), nq[idx].sum(1)
    sd = np.sqrt((NQ - NS * NS / NN) / (NN - 1))
    out[start:start + m] = (TS / TN - NS / NN) / sd
ci = summarize(out)
sufficient_seconds = time.perf_counter() - t0

t0 = time.perf_counter()
order = np.argsort(cluster, kind='stable')
starts = np.searchsorted(cluster[order], np.arange(K + 1))
rows_of = [order[starts[k]:starts[k + 1]] for k in range(K)]
rng = np.random.default_rng(42)
row_out = np.empty(row_B)
for b in range(row_B):
    drawn = np.concatenate([rows_of[k] for k in rng.integers(0, K, size=K)])
    v, a = values[drawn], arm[drawn]
    noise = v[a == 0]
    row_out[b] = (v[a == 1].mean() - noise.mean()) / noise.std(ddof=1)
row_seconds = (time.perf_counter() - t0) * B / row_B
print(json.dumps({"numpy": np.__version__, "sufficient_seconds": sufficient_seconds, "ci": ci,
                  "row_seconds_scaled": row_seconds, "row_B": row_B}))
`;

function runNumpy(data: ReturnType<typeof makeData>): Record<string, unknown> | string {
  const folder = mkdtempSync(join(tmpdir(), 'echolens-bench-'));
  try {
    const rows = [...data.treat.map((r) => [r, 1] as const), ...data.noise.map((r) => [r, 0] as const)];
    writeFileSync(join(folder, 'values.f64'), Buffer.from(Float64Array.from(rows, ([r]) => r.value).buffer));
    writeFileSync(join(folder, 'cluster.i32'), Buffer.from(Int32Array.from(rows, ([r]) => Number(r.cluster)).buffer));
    writeFileSync(join(folder, 'arm.u8'), Buffer.from(Uint8Array.from(rows, ([, arm]) => arm).buffer));
    const script = join(folder, 'baseline.py');
    writeFileSync(script, PYTHON);
    const rowB = smoke ? 50 : 500;
    const run = spawnSync('python3', [script, folder, String(B), String(rowB)], { encoding: 'utf8' });
    if (run.error || run.status !== 0) {
      return `numpy baseline unavailable (${run.error?.message ?? run.stderr.trim().split('\n').pop()})`;
    }
    return JSON.parse(run.stdout.trim().split('\n').pop() as string) as Record<string, unknown>;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

const data = makeData();
console.log(
  `dRel: ${QUESTIONS} questions, ${data.treat.length + data.noise.length} observations ` +
    `(${data.treat.length} treat + ${data.noise.length} noise), B = ${B}`,
);
dRel(data, { B: Math.min(B, 500), seed: 7 }); // warm-up (JIT)
let best = Number.POSITIVE_INFINITY;
let result = dRel(data, { B, seed: 42 });
for (let i = 0; i < RUNS; i++) {
  const start = performance.now();
  result = dRel(data, { B, seed: 42 });
  best = Math.min(best, (performance.now() - start) / 1000);
}
const fmt = (x: number) => x.toFixed(3);
console.log(`echolens dRel: ${fmt(best)} s (best of ${RUNS}); d_rel = ${fmt(result.dRel)} ` + `[${fmt(result.ci[0])}, ${fmt(result.ci[1])}]`);
const numpy = runNumpy(data);
if (typeof numpy === 'string') {
  console.log(numpy);
} else {
  const sufficient = numpy.sufficient_seconds as number;
  const rowLevel = numpy.row_seconds_scaled as number;
  const ci = numpy.ci as [number, number];
  console.log(
    `numpy ${String(numpy.numpy)} sufficient statistics, vectorized: ${fmt(sufficient)} s; CI [${fmt(ci[0])}, ${fmt(ci[1])}] ` +
      `→ echolens is ${(sufficient / best).toFixed(1)}× faster`,
  );
  console.log(
    `numpy row-level (concatenate drawn questions' rows each replicate; ${String(numpy.row_B)} replicates timed, ` +
      `scaled to B = ${B}): ${fmt(rowLevel)} s → echolens is ${(rowLevel / best).toFixed(0)}× faster`,
  );
}
const ratios =
  typeof numpy === 'string'
    ? 'ratio not measured'
    : [
        `≥ 10× sufficient-statistics numpy ${(numpy.sufficient_seconds as number) / best >= 10 ? 'met' : 'NOT met'}`,
        `≥ 10× row-level numpy ${(numpy.row_seconds_scaled as number) / best >= 10 ? 'met' : 'NOT met'}`,
      ].join('; ');
console.log(`target: < 1 s ${best < 1 ? 'met' : 'NOT met'}; ${ratios}`);
