/**
 * Report speed on the paper-scale persona store (issue #44: `persona report` within 2× a minimal
 * script that reads every verdict and runs the bootstrap; the same for `gate` and `report`).
 *
 * The store is the one bench/scale-memory.bench.ts's run phase writes (28,800 cells: 12 targets ×
 * 1,200 target cells, each judged once), built once and kept at $ECHOLENS_PAPER_STORE (default
 * <tmpdir>/echolens-paper-store/paper.db; smoke: a small grid). The CLI is the built one (the build
 * is refreshed first). Each command runs as its own process, interleaved with the baseline
 * (bench/report-minimal.mjs under plain node) so machine load hits all alike; the table gives the
 * median wall time and the median CPU time (user + system, the fairer figure on a busy machine)
 * with their ratios to the baseline, and the peak RSS. The viewer's case starts `echolens view` on
 * the store (port 0), fetches the latest run's page (`/run`) once and stops it with SIGTERM: its
 * figures are the viewer process's whole life (start-up, run index, analysis, page). BENCH_SMOKE=1:
 * a small store, 2 rounds.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const smoke = process.env.BENCH_SMOKE === '1' || process.env.BENCH_SMOKE === 'true';
const ROUNDS = smoke ? 2 : 5;
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist', 'cli', 'main.js');
const store = process.env.ECHOLENS_PAPER_STORE ?? join(tmpdir(), 'echolens-paper-store', smoke ? 'smoke.db' : 'paper.db');

const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) {
  console.log('report-speed bench: the build failed, nothing measured');
  process.exit(1);
}
if (!existsSync(store)) {
  mkdirSync(dirname(store), { recursive: true });
  console.log(`building the store once: ${store}`);
  const made = spawnSync(
    process.execPath,
    ['--max-old-space-size=4096', '--import', 'tsx', join(root, 'bench', 'scale-memory.bench.ts'), 'run', store, join(dirname(store), 'unused.html')],
    { cwd: root, stdio: 'inherit' },
  );
  if (made.status !== 0 || !existsSync(store)) {
    rmSync(store, { force: true });
    console.log('report-speed bench: building the store failed');
    process.exit(1);
  }
}

/** Reports the child's own CPU time and peak RSS on stderr as it exits. */
const CPU_HOOK = `data:text/javascript,process.on('exit',()=>{const u=process.cpuUsage();process.stderr.write('\\nBENCH-CPU '+(u.user+u.system)/1000+' '+process.resourceUsage().maxRSS/1024+'\\n')})`;
const out = mkdtempSync(join(tmpdir(), 'echolens-report-speed-'));
const VIEWER = 'viewer';
const cases: Array<{ name: string; args: string[] }> = [
  { name: 'baseline: bench/report-minimal.mjs', args: [join(root, 'bench', 'report-minimal.mjs'), store] },
  { name: 'echolens persona report', args: [cli, 'persona', 'report', store, '-o', join(out, 'persona.md')] },
  { name: 'echolens gate', args: [cli, 'gate', store] },
  { name: 'echolens report (HTML)', args: [cli, 'report', store, '-o', join(out, 'report.html')] },
  { name: "echolens view: the run's page", args: [VIEWER] },
];

interface Sample {
  wallMs: number;
  cpuMs: number;
  rssMb: number;
}

/** The latest run's id (the one the reports and the viewer's run page read). */
const latestRun = (() => {
  const listed = spawnSync(process.execPath, [cli, 'runs', 'list', store, '--format', 'json'], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  const runs = JSON.parse(listed.stdout) as Array<{ id: string; startedAt?: string }>;
  return runs[0]?.id ?? '';
})();

/** `echolens view <store>`: start, GET the run page once, SIGTERM; the viewer's own CPU time and peak RSS. */
async function viewerOnce(): Promise<Sample> {
  const start = performance.now();
  const child = spawn(process.execPath, ['--import', CPU_HOOK, cli, 'view', store, '--port', '0', '--open-browser', 'never'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const found = /echolens viewer: (\S+)/u.exec(stdout);
      if (found) resolve(found[1] as string);
    });
    child.on('exit', (code) => reject(new Error(`echolens view exited with ${code} before serving: ${stderr}`)));
  });
  const response = await fetch(new URL(`run?s=0&r=${encodeURIComponent(latestRun)}`, url));
  const page = await response.text();
  if (response.status !== 200 || !page.includes(latestRun)) throw new Error(`the run page answered ${response.status}`);
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  child.kill('SIGTERM');
  await exited;
  const wallMs = performance.now() - start;
  const match = /BENCH-CPU (\S+) (\S+)/u.exec(stderr);
  if (match === null) throw new Error(`no CPU figure from echolens view: ${stderr}`);
  return { wallMs, cpuMs: Number(match[1]), rssMb: Number(match[2]) };
}

async function measure(args: string[]): Promise<Sample> {
  return args[0] === VIEWER ? viewerOnce() : runOnce(args);
}

function runOnce(args: string[]): Sample {
  const start = performance.now();
  const result = spawnSync(process.execPath, ['--import', CPU_HOOK, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const wallMs = performance.now() - start;
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited with ${result.status}: ${result.stderr}`);
  const match = /BENCH-CPU (\S+) (\S+)/u.exec(result.stderr);
  if (match === null) throw new Error(`no CPU figure from node ${args.join(' ')}`);
  return { wallMs, cpuMs: Number(match[1]), rssMb: Number(match[2]) };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

for (const c of cases) await measure(c.args); // warm the file cache
const samples = cases.map(() => [] as Sample[]);
for (let round = 0; round < ROUNDS; round++) {
  for (const [i, c] of cases.entries()) samples[i]?.push(await measure(c.args));
}
rmSync(out, { recursive: true, force: true });

const base = samples[0] as Sample[];
const baseWall = median(base.map((s) => s.wallMs));
const baseCpu = median(base.map((s) => s.cpuMs));
console.log(
  `store ${store}; node ${process.version}, ${ROUNDS} interleaved rounds; ${cpus().length} × ${cpus()[0]?.model ?? '?'}; load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
console.log('| command | median wall ms | wall ratio | median CPU ms | CPU ratio | peak RSS MB |');
console.log('|---|---|---|---|---|---|');
cases.forEach((c, i) => {
  const s = samples[i] as Sample[];
  const wall = median(s.map((x) => x.wallMs));
  const cpu = median(s.map((x) => x.cpuMs));
  console.log(
    `| ${c.name} | ${wall.toFixed(0)} | ${(wall / baseWall).toFixed(2)}× | ${cpu.toFixed(0)} | ${(cpu / baseCpu).toFixed(2)}× | ${Math.max(...s.map((x) => x.rssMb)).toFixed(0)} |`,
  );
});
