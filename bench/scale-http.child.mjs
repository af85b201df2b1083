// The HTTP phase of bench/scale-memory.bench.ts, under plain node on the built package (dist/),
// as `echolens persona run` runs: tsx alone would add about 70 MB to the peak measured here.
// The paper-scale grid (bench/scale-grid.mjs) with half the targets Anthropic, half OpenAI and
// an OpenAI judge, all through the real AI SDK adapters against the fake servers of
// bench/wire-server.ts (a child process of their own), at concurrency 64 with zero latency.
// Prints one JSON line: cells done, wall time, calls/s, CPU ms per call, peak RSS.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { planGrid, SIZE } from './scale-grid.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, '..', 'dist');
const db = process.argv[2];
process.env.ANTHROPIC_API_KEY ??= 'bench-key';
process.env.OPENAI_API_KEY ??= 'bench-key';

const server = spawn(process.execPath, ['--import', 'tsx', join(here, 'wire-server.ts')], { stdio: ['pipe', 'pipe', 'inherit'] });
try {
  const urls = await new Promise((resolve, reject) => {
    server.once('error', reject);
    createInterface({ input: server.stdout }).once('line', (line) => resolve(JSON.parse(line)));
  });
  const modules = {
    ...(await import(join(dist, 'persona-drift/config.js'))),
    ...(await import(join(dist, 'persona-drift/materials.js'))),
    ...(await import(join(dist, 'persona-drift/plan.js'))),
  };
  const { personaRunner } = await import(join(dist, 'persona-drift/run.js'));
  const { runAudit } = await import(join(dist, 'experiment/run-audit.js'));
  const { SqliteRunStore } = await import(join(dist, 'store/run-store.js'));
  const targets = Array.from({ length: SIZE.targets }, (_, i) =>
    i % 2 === 0 ? `anthropic:claude-bench-${i + 1}-0ms@${urls.anthropic}` : `openai:gpt-bench-${i + 1}-0ms@${urls.openai}`,
  );
  const { config, specs, planStart } = planGrid(modules, targets, `openai:gpt-bench-judge-0ms@${urls.openai}`);
  const cpuStart = process.cpuUsage();
  const runner = { ...personaRunner, plan: () => specs, manifestOptions: () => ({ bench: 'scale-memory-http' }) };
  await runAudit(runner, config, db, { input: [], runtime: { progress: false, signal: new AbortController().signal, concurrency: 64 } });
  const wallS = (performance.now() - planStart) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  const store = SqliteRunStore.open(db, { readonly: true });
  const done = store.db.prepare("SELECT count(*) FROM cells WHERE status = 'done'").pluck().get();
  store.close();
  const result = { targetCells: specs.length, done, wallS, callsPerS: done / wallS, cpuMsPerCall: (cpu.user + cpu.system) / 1000 / done };
  process.stdout.write(`${JSON.stringify({ ...result, peakRssMb: process.resourceUsage().maxRSS / 1024 })}\n`);
} finally {
  server.stdin.end();
  server.kill();
}
