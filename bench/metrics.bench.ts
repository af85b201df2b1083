/**
 * Benchmark: dtw + sriDrift (src/metrics) over seeded random symbol-sequence pairs,
 * against straightforward Python/numpy formulas run on the same pairs in the same command.
 *
 *   node --import tsx bench/metrics.bench.ts        # 1,000,000 pairs (Python: a prefix)
 *   BENCH_SMOKE=1 node --import tsx bench/metrics.bench.ts   # a few thousand pairs
 *
 * Pairs: lengths uniform in 5–15, symbols uniform over an 11-symbol Category/Subcategory
 * alphabet, mulberry32 seed 42. The machine is shared, so every variant runs several
 * interleaved rounds over all pairs and the best (least disturbed) and median rounds are printed.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { seededRandom } from '../src/core/random.js';
import { dtw, sriDrift } from '../src/metrics/index.js';

const SMOKE = Boolean(process.env.BENCH_SMOKE);
const PAIRS = SMOKE ? 3_000 : 1_000_000;
const ROUNDS = SMOKE ? 2 : 5;
/** Python is ~10⁴× slower per pair; it runs on this prefix of the same pairs. */
const PYTHON_PAIRS = SMOKE ? 200 : 20_000;
const PYTHON_ROUNDS = SMOKE ? 1 : 2;
const SEED = 42;

const ALPHABET = [
  'Recall/Fact',
  'Recall/Definition',
  'Compute/Arithmetic',
  'Compute/Algebra',
  'Infer/Deduction',
  'Infer/Analogy',
  'Plan/Decompose',
  'Plan/Order',
  'Verify/Check',
  'Conclude/Answer',
  'unmapped',
];

function makePairs(count: number): Array<[string[], string[]]> {
  const random = seededRandom(SEED);
  const sequence = (): string[] => {
    const length = 5 + Math.floor(random() * 11);
    const out = new Array<string>(length);
    for (let i = 0; i < length; i++) out[i] = ALPHABET[Math.floor(random() * ALPHABET.length)]!;
    return out;
  };
  const pairs = new Array<[string[], string[]]>(count);
  for (let k = 0; k < count; k++) pairs[k] = [sequence(), sequence()];
  return pairs;
}

interface Timing {
  /** pairs per second of wall-clock time: best round and median round */
  wallBest: number;
  wallMedian: number;
  /** pairs per second of this process's CPU time (user + system): best round */
  cpuBest: number;
  checksum: number;
}

/** One pass of `body` over all pairs: wall and CPU seconds. */
function timePass(pairs: Array<[string[], string[]]>, body: (a: string[], b: string[]) => number): { wall: number; cpu: number; checksum: number } {
  let sum = 0;
  const cpuStart = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let k = 0; k < pairs.length; k++) {
    const pair = pairs[k]!;
    sum += body(pair[0], pair[1]);
  }
  const wall = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpuStart);
  return { wall, cpu: (used.user + used.system) / 1e6, checksum: sum };
}

/**
 * Rounds are interleaved (round r runs every variant once before round r+1), so a burst of
 * load from other processes on the shared machine, or a late GC of the freshly built pairs,
 * falls on all variants alike instead of on whichever happens to run then.
 */
function timeInterleaved(pairs: Array<[string[], string[]]>, rounds: number, bodies: Array<(a: string[], b: string[]) => number>): Timing[] {
  const walls = bodies.map((): number[] => []);
  const cpus = bodies.map((): number[] => []);
  const checksums = bodies.map(() => 0);
  for (let round = 0; round < rounds; round++) {
    bodies.forEach((body, v) => {
      const pass = timePass(pairs, body);
      walls[v]!.push(pass.wall);
      cpus[v]!.push(pass.cpu);
      checksums[v] = pass.checksum;
    });
  }
  return bodies.map((_, v) => {
    const wall = walls[v]!.sort((x, y) => x - y);
    const cpu = cpus[v]!.sort((x, y) => x - y);
    return {
      wallBest: pairs.length / wall[0]!,
      wallMedian: pairs.length / wall[Math.floor(wall.length / 2)]!,
      cpuBest: pairs.length / cpu[0]!,
      checksum: checksums[v]!,
    };
  });
}

const PYTHON_BASELINE = String.raw`
import json, sys, time
import numpy as np

def dtw_normalized(a, b):
    cost = (a[:, None] != b[None, :]).astype(float)
    n, m = cost.shape
    acc = np.empty((n, m))
    for i in range(n):
        for j in range(m):
            if i == 0 and j == 0:
                best = 0.0
            elif i == 0:
                best = acc[0, j - 1]
            elif j == 0:
                best = acc[i - 1, 0]
            else:
                best = min(acc[i - 1, j - 1], acc[i - 1, j], acc[i, j - 1])
            acc[i, j] = cost[i, j] + best
    return acc[n - 1, m - 1] / max(n, m)

def levenshtein(a, b):
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
        prev = cur
    return prev[len(b)]

def js_distance(a, b, size):
    p = np.bincount(a, minlength=size) / len(a)
    q = np.bincount(b, minlength=size) / len(b)
    mid = (p + q) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        kl_p = np.sum(np.where(p > 0, p * np.log(p / mid), 0.0))
        kl_q = np.sum(np.where(q > 0, q * np.log(q / mid), 0.0))
    return np.sqrt(max(0.0, (kl_p + kl_q) / 2) / np.log(2))

def sri_drift(a, b, size, alpha=0.5):
    return alpha * levenshtein(a, b) / max(len(a), len(b)) + (1 - alpha) * js_distance(a, b, size)

path, rounds = sys.argv[1], int(sys.argv[2])
raw = [line.rstrip("\n").split("\t") for line in open(path, encoding="utf-8")]
ids = {}
def intern(text):
    return np.array([ids.setdefault(s, len(ids)) for s in text.split("|")], dtype=np.int64)
pairs = [(intern(x), intern(y)) for x, y in raw]
size = len(ids)
wall = cpu = None
for _ in range(rounds):
    start, cpu_start = time.perf_counter(), time.process_time()
    total_dtw = total_sri = 0.0
    for a, b in pairs:
        total_dtw += dtw_normalized(a, b)
        total_sri += sri_drift(a, b, size)
    elapsed, cpu_elapsed = time.perf_counter() - start, time.process_time() - cpu_start
    wall = elapsed if wall is None else min(wall, elapsed)
    cpu = cpu_elapsed if cpu is None else min(cpu, cpu_elapsed)
print(json.dumps({"pairs": len(pairs), "seconds": wall, "cpuSeconds": cpu, "dtw": total_dtw, "sri": total_sri, "numpy": np.__version__}))
`;

interface PythonResult {
  pairs: number;
  seconds: number;
  cpuSeconds: number;
  dtw: number;
  sri: number;
  numpy: string;
}

function runPython(pairs: Array<[string[], string[]]>): PythonResult | string {
  const directory = mkdtempSync(join(tmpdir(), 'echolens-bench-'));
  try {
    const file = join(directory, 'pairs.tsv');
    writeFileSync(file, pairs.map(([a, b]) => `${a.join('|')}\t${b.join('|')}\n`).join(''));
    const result = spawnSync('python3', ['-c', PYTHON_BASELINE, file, String(PYTHON_ROUNDS)], { encoding: 'utf8', maxBuffer: 1 << 20 });
    if (result.error) return `python3 not runnable (${result.error.message})`;
    if (result.status !== 0) return `python3 exited with ${result.status}: ${result.stderr.trim().split('\n').pop()}`;
    return JSON.parse(result.stdout) as PythonResult;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

const format = (rate: number) => `${Math.round(rate).toLocaleString('en-US')} pairs/s`;

function main(): void {
  console.log(
    `node ${process.version}, single JS thread; load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  console.log(`${PAIRS.toLocaleString('en-US')} seeded pairs (mulberry32 seed ${SEED}), lengths 5–15, 11-symbol alphabet; ${ROUNDS} interleaved rounds each`);
  const pairs = makePairs(PAIRS);

  const variants: Array<[string, (a: string[], b: string[]) => number]> = [
    ['dtw(a, b) [default, with path] + sriDrift(a, b)', (a, b) => dtw(a, b).normalized + sriDrift(a, b)],
    ['dtw(a, b, { path: false }) + sriDrift(a, b)', (a, b) => dtw(a, b, { path: false }).normalized + sriDrift(a, b)],
    ['dtw(a, b) alone [with path]', (a, b) => dtw(a, b).normalized],
    ['sriDrift(a, b) alone', (a, b) => sriDrift(a, b)],
  ];
  const timings = timeInterleaved(
    pairs,
    ROUNDS,
    variants.map(([, body]) => body),
  );
  const results = new Map<string, Timing>();
  variants.forEach(([label], v) => {
    const timing = timings[v]!;
    results.set(label, timing);
    console.log(
      `  ${label.padEnd(50)} CPU ${format(timing.cpuBest).padStart(19)} | wall best ${format(timing.wallBest).padStart(19)}, median ${format(timing.wallMedian).padStart(19)}`,
    );
  });

  const prefix = pairs.slice(0, Math.min(PYTHON_PAIRS, pairs.length));
  const python = runPython(prefix);
  if (typeof python === 'string') {
    console.log(`Python baseline skipped: ${python}`);
    return;
  }
  // Same formulas on the same prefix: the sums must agree (a correctness cross-check).
  let tsDtw = 0;
  let tsSri = 0;
  for (const [a, b] of prefix) {
    tsDtw += dtw(a, b).normalized;
    tsSri += sriDrift(a, b);
  }
  const agreement = Math.max(Math.abs(tsDtw - python.dtw), Math.abs(tsSri - python.sri));
  const pythonWall = python.pairs / python.seconds;
  const pythonCpu = python.pairs / python.cpuSeconds;
  console.log(
    `Python/numpy ${python.numpy} baseline (exact DTW DP, Levenshtein DP, numpy JS) on the first ${python.pairs.toLocaleString('en-US')} of the same pairs ` +
      `(a prefix: all ${PAIRS.toLocaleString('en-US')} would take ~${Math.round(PAIRS / pythonCpu)} CPU-s), best of ${PYTHON_ROUNDS}: ` +
      `CPU ${format(pythonCpu)} | wall ${format(pythonWall)}`,
  );
  console.log(`  checksums on that prefix agree to ${agreement.toExponential(1)} (sums of normalized DTW and of SRI drift)`);
  const defaultTiming = results.get(variants[0]![0])!;
  const noPathTiming = results.get(variants[1]![0])!;
  console.log('ratio vs Python, per-pair rates (TypeScript over all pairs, Python over the prefix):');
  for (const [label, timing] of [
    ['default (with path)', defaultTiming],
    ['{ path: false }    ', noPathTiming],
  ] as const) {
    console.log(
      `  ${label}: CPU ${(timing.cpuBest / pythonCpu).toFixed(0)}×, wall best ${(timing.wallBest / pythonWall).toFixed(0)}×, wall median ${(timing.wallMedian / pythonWall).toFixed(0)}×`,
    );
  }
  if (SMOKE) {
    console.log('smoke mode: sizes too small (and JIT too cold) to judge the targets; run without BENCH_SMOKE');
    return;
  }
  const target = 1_000_000;
  const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
  console.log(
    `targets (CPU-time rates; wall-clock rates depend on the machine's load): ≥ ${format(target)} — ` +
      `default ${verdict(defaultTiming.cpuBest >= target)}, path:false ${verdict(noPathTiming.cpuBest >= target)}; ` +
      `≥ 100× Python — default ${verdict(defaultTiming.cpuBest / pythonCpu >= 100)}, path:false ${verdict(noPathTiming.cpuBest / pythonCpu >= 100)}`,
  );
}

main();
