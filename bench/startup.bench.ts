/**
 * CLI start-up cost: `echolens --version` and `echolens --help` against a bare
 * `node -e 0`, run interleaved in the same command so machine load hits all three
 * alike. The CLI is the built one (`dist/cli/main.js`, as installed users run
 * it); the build is refreshed first. Commands load lazily, so `--version`
 * should cost a small multiple of Node's own start (issue target: within 4×), and every
 * command's `--help` (each command of the built tree, read from its help snapshot) within 3×
 * (issue #44); the table adds the .js files each one opens (strace), the last line the worst ratio.
 * BENCH_SMOKE=1: a few rounds only.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const smoke = process.env.BENCH_SMOKE === '1' || process.env.BENCH_SMOKE === 'true';
const ROUNDS = smoke ? 3 : 40;
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist', 'cli', 'main.js');

const build = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')], {
  stdio: 'inherit',
});
const snapshot = build.status === 0 ? spawnSync(process.execPath, [join(root, 'tools', 'help-snapshot.mjs')], { stdio: 'inherit' }) : build;
if (build.status !== 0 || snapshot.status !== 0) {
  console.log('startup bench: the build failed, nothing measured');
  process.exit(1);
}

interface SnapshotNode {
  fields: { _name?: string };
  commands: SnapshotNode[];
}
/** Every command of the built CLI (from the build's command-tree snapshot), parents first. */
function commandPaths(node: SnapshotNode, prefix: string[] = []): string[][] {
  return node.commands
    .filter((c) => c.fields._name !== 'help')
    .flatMap((c) => {
      const path = [...prefix, c.fields._name ?? ''];
      return [path, ...commandPaths(c, path)];
    });
}
const tree = JSON.parse(readFileSync(join(root, 'dist', 'cli', 'help-snapshot.json'), 'utf8')) as SnapshotNode;
const HELP_COMMANDS = [[], ...commandPaths(tree)];
const cases: Array<{ name: string; args: string[] }> = [
  { name: 'node -e 0', args: ['-e', '0'] },
  { name: 'echolens --version', args: [cli, '--version'] },
  ...(smoke ? [[], ['persona', 'run']] : HELP_COMMANDS).map((words) => ({
    name: `echolens ${[...words, '--help'].join(' ')}`,
    args: [cli, ...words, '--help'],
  })),
];
const rounds = smoke ? ROUNDS : Math.min(ROUNDS, 5);

/** Reports the child's own CPU time (user + system) on stderr as it exits: steadier than wall time on a busy machine. */
const CPU_HOOK = `data:text/javascript,process.on('exit',()=>{const u=process.cpuUsage();process.stderr.write('\\nBENCH-CPU '+(u.user+u.system)/1000+'\\n')})`;

function timeOnce(args: string[]): { wall: number; cpu: number } {
  const start = performance.now();
  const result = spawnSync(process.execPath, ['--import', CPU_HOOK, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const wall = performance.now() - start;
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited with ${result.status}: ${result.stderr}`);
  const cpu = /BENCH-CPU (\S+)/u.exec(String(result.stderr))?.[1];
  if (cpu === undefined) throw new Error(`no CPU figure from node ${args.join(' ')}`);
  return { wall, cpu: Number(cpu) };
}

/** JavaScript files the process opened (strace), or null without strace. */
function openedScripts(args: string[]): number | null {
  const trace = join(tmpdir(), `echolens-startup-${process.pid}.strace`);
  const result = spawnSync('strace', ['-f', '-qq', '-e', 'trace=openat', '-o', trace, process.execPath, ...args], { stdio: 'ignore' });
  if (result.error !== undefined || !existsSync(trace)) return null;
  const lines = readFileSync(trace, 'utf8').split('\n');
  rmSync(trace, { force: true });
  return lines.filter((line) => /\.(?:m|c)?js", /u.test(line) && !/= -1 /u.test(line)).length;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

// One warm-up each so the first round does not pay for a cold file cache.
for (const c of cases) timeOnce(c.args);
const samples = cases.map(() => [] as number[]);
const cpuSamples = cases.map(() => [] as number[]);
for (let round = 0; round < rounds; round++) {
  cases.forEach((c, i) => {
    const t = timeOnce(c.args);
    samples[i]?.push(t.wall);
    cpuSamples[i]?.push(t.cpu);
  });
}

const baseline = median(samples[0] as number[]);
const cpuBaseline = median(cpuSamples[0] as number[]);
console.log(
  `node ${process.version}, ${rounds} interleaved rounds; ${cpus().length} × ${cpus()[0]?.model ?? '?'}; load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
console.log('| command | median ms | ratio to node -e 0 | median CPU ms | CPU ratio | .js files opened |');
console.log('|---|---|---|---|---|---|');
cases.forEach((c, i) => {
  const m = median(samples[i] as number[]);
  const cpu = median(cpuSamples[i] as number[]);
  const files = openedScripts(c.args);
  console.log(`| ${c.name} | ${m.toFixed(1)} | ${(m / baseline).toFixed(2)}× | ${cpu.toFixed(0)} | ${(cpu / cpuBaseline).toFixed(2)}× | ${files ?? 'n/a'} |`);
});
const helpRatios = cases.slice(2).map((c, i) => ({
  name: c.name,
  ratio: median(samples[i + 2] as number[]) / baseline,
  cpuRatio: median(cpuSamples[i + 2] as number[]) / cpuBaseline,
}));
const worst = helpRatios.reduce((a, b) => (b.ratio > a.ratio ? b : a));
const worstCpu = helpRatios.reduce((a, b) => (b.cpuRatio > a.cpuRatio ? b : a));
console.log(
  `${helpRatios.length} help texts: worst wall ${worst.ratio.toFixed(2)}× (${worst.name}), ${helpRatios.filter((r) => r.ratio > 3).length} above 3×; worst CPU ${worstCpu.cpuRatio.toFixed(2)}× (${worstCpu.name}), ${helpRatios.filter((r) => r.cpuRatio > 3).length} above 3×`,
);
