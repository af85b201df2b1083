/**
 * `echolens sessions list` as a user runs it (the built CLI, a process per call) over 123
 * Claude Code transcripts: warm (the summary cache holds every file: stat + lookup), cold
 * (`--no-cache`: every file re-read and re-counted by echolens), and a minimal script that
 * lists, reads and JSON-parses every transcript line (the floor of a full re-parse), interleaved
 * so machine load hits all alike. Issue #44: warm ≤ a full re-parse. BENCH_SMOKE=1: 12 files, 2 rounds.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const smoke = process.env.BENCH_SMOKE === '1' || process.env.BENCH_SMOKE === 'true';
const FILES = smoke ? 12 : 123;
const ROUNDS = smoke ? 2 : 9;
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist', 'cli', 'main.js');

// Transcripts: the demo session, each copy with its own session id and message uuids.
const home = mkdtempSync(join(tmpdir(), 'echolens-sessions-bench-'));
const projects = join(home, '.claude', 'projects', 'bench');
mkdirSync(projects, { recursive: true });
const demo = readFileSync(join(root, 'data', 'demo', 'claude-session.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l !== '');
for (let i = 1; i <= FILES; i++) {
  const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  const suffix = String(i).padStart(4, '0');
  const lines = demo.map((line) => {
    const record = JSON.parse(line) as Record<string, unknown>;
    if ('sessionId' in record) record.sessionId = id;
    if (typeof record.uuid === 'string') record.uuid = `${record.uuid.slice(0, -4)}${suffix}`;
    if (typeof record.parentUuid === 'string') record.parentUuid = `${record.parentUuid.slice(0, -4)}${suffix}`;
    return JSON.stringify(record);
  });
  writeFileSync(join(projects, `${id}.jsonl`), `${lines.join('\n')}\n`);
}
const reparse = join(home, 'reparse.mjs');
writeFileSync(
  reparse,
  `import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
const root = join(process.env.HOME, '.claude', 'projects');
let messages = 0;
for (const project of readdirSync(root))
  for (const name of readdirSync(join(root, project)))
    if (name.endsWith('.jsonl'))
      for (const line of readFileSync(join(root, project, name), 'utf8').split('\\n')) {
        if (line === '') continue;
        try { const r = JSON.parse(line); if (r.type === 'user' || r.type === 'assistant') messages++; } catch {}
      }
console.log(messages);
`,
);
const env = { PATH: process.env.PATH ?? '', HOME: home, ECHOLENS_CACHE_DIR: join(home, 'cache') };
const cases = [
  { name: 'minimal re-parse script', args: [reparse] },
  { name: 'echolens sessions list (warm cache)', args: [cli, 'sessions', 'list'] },
  { name: 'echolens sessions list --no-cache', args: [cli, 'sessions', 'list', '--no-cache'] },
];
/** Reports the child's own CPU time (user + system) on stderr as it exits: the fairer figure on a busy machine. */
const CPU_HOOK = `data:text/javascript,process.on('exit',()=>{const u=process.cpuUsage();process.stderr.write('\\nBENCH-CPU '+(u.user+u.system)/1000+'\\n')})`;
const run = (args: string[]) => {
  const start = performance.now();
  const result = spawnSync(process.execPath, ['--import', CPU_HOOK, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  const wall = performance.now() - start;
  if (result.status !== 0) throw new Error(`${args.join(' ')}: exit ${result.status}: ${result.stderr}`);
  const cpu = /BENCH-CPU (\S+)/u.exec(result.stderr);
  if (cpu === null) throw new Error(`no CPU figure from ${args.join(' ')}`);
  return { wall, cpu: Number(cpu[1]) };
};
for (const c of cases) run(c.args); // warm-up; the first sessions list writes the cache
const samples = cases.map(() => [] as Array<{ wall: number; cpu: number }>);
for (let r = 0; r < ROUNDS; r++) {
  cases.forEach((c, i) => {
    samples[i]?.push(run(c.args));
  });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
const base = median((samples[0] ?? []).map((s) => s.wall));
const baseCpu = median((samples[0] ?? []).map((s) => s.cpu));
console.log(
  `${FILES} transcripts, ${ROUNDS} interleaved rounds; node ${process.version}; ${cpus().length} × ${cpus()[0]?.model ?? '?'}; load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
console.log('| command | median wall ms | wall ratio to the re-parse script | median CPU ms | CPU ratio |');
console.log('|---|---|---|---|---|');
cases.forEach((c, i) => {
  const m = median((samples[i] ?? []).map((s) => s.wall));
  const cpu = median((samples[i] ?? []).map((s) => s.cpu));
  console.log(`| ${c.name} | ${m.toFixed(1)} | ${(m / base).toFixed(2)}× | ${cpu.toFixed(0)} | ${(cpu / baseCpu).toFixed(2)}× |`);
});
