// One phase of bench/batch-memory.bench.ts under plain node on dist/ (as the CLI runs): one persona
// target of CELLS cells of the paper-scale grid (bench/scale-grid.mjs, ~320,000-character contexts)
// and its judge stage — or, with CELLS = `paper`, the whole grid (12 targets, half Anthropic, half
// OpenAI, as bench/scale-http.child.mjs runs it online) — through `runAudit` online or with `--batch`, against the fake batch servers
// of bench/batch-server.child.ts. Prints one JSON line: cells done, wall time, peak RSS.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { planGrid, SIZE } from './scale-grid.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, '..', 'dist');
const [db, mode, cellsArg] = process.argv.slice(2);
const paper = cellsArg === 'paper';
const CELLS = paper ? Number.POSITIVE_INFINITY : Number(cellsArg ?? 600);
process.env.ANTHROPIC_API_KEY ??= 'bench-key';
process.env.OPENAI_API_KEY ??= 'bench-key';

const server = spawn(process.execPath, ['--import', 'tsx', join(here, 'batch-server.child.ts')], { stdio: ['pipe', 'pipe', 'inherit'] });
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
  const targets = paper
    ? Array.from({ length: SIZE.targets }, (_, i) =>
        i % 2 === 0 ? `anthropic:claude-bench-${i + 1}@${urls.anthropic}` : `openai:gpt-bench-${i + 1}@${urls.openai}`,
      )
    : [`anthropic:claude-sonnet-4-5@${urls.anthropic}`];
  const { config, specs, planStart } = planGrid(modules, targets, `openai:gpt-4.1-judge@${urls.openai}`);
  const planned = specs.slice(0, CELLS);
  const runner = { ...personaRunner, plan: () => planned, manifestOptions: () => ({ bench: `batch-memory-${mode}` }) };
  const runtime = { progress: false, signal: new AbortController().signal, concurrency: 16, ...(mode === 'batch' ? { batch: true, pollIntervalMs: 0 } : {}) };
  // The --batch notices go to stderr; the parent shows only the last lines of a failure.
  await runAudit(runner, config, db, { input: [], runtime });
  const wallS = (performance.now() - planStart) / 1000;
  const store = SqliteRunStore.open(db, { readonly: true });
  const done = store.db.prepare("SELECT count(*) FROM cells WHERE status = 'done'").pluck().get();
  await store.close();
  process.stdout.write(`${JSON.stringify({ mode, targetCells: planned.length, done, wallS, peakRssMb: process.resourceUsage().maxRSS / 1024 })}\n`);
} finally {
  server.stdin.end();
  server.kill();
}
