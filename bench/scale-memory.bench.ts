/**
 * Bounded memory at paper scale (issue: a 12-target × 1,200-cell grid at about 80k tokens a
 * cell ran out of a 4 GB heap before its first call).
 *
 * Builds the grid through the persona audit's real planning code (`planTargetCells`, the
 * default config's 25 probes, real + filler arms, 12 positions, 2 samples) over synthetic
 * 80k-token session contexts (about 320,000 characters each, one per position and arm), and
 * runs it through the real run lifecycle (`runAudit` with the persona runner: target stage,
 * then a judge stage) against an in-process endpoint with zero latency. Each phase runs in its
 * own child process with a 4 GB heap (`--max-old-space-size=4096`), so every peak RSS is that
 * phase's own:
 *   run     time to first call (since planning began, and since process start), peak RSS,
 *           wall time, store bytes, blob bytes, store bytes per long cell beyond the unique prefixes;
 *   report  `echolens report` HTML of that store (collectReports + renderHtmlReport): peak RSS, wall;
 *   http    the same grid over HTTP, as a user's run goes: the real AI SDK adapters (half the
 *           targets Anthropic, half OpenAI, an OpenAI judge) against the fake servers of
 *           bench/wire-server.ts at concurrency 64, under plain node on dist/
 *           (bench/scale-http.child.mjs; needs `npm run build`): calls/s, CPU per call, peak RSS;
 *   old     the old path's first step, in the same command: the canonical request JSON of every
 *           cell built up front (what runCells did before it registered the plan), with its
 *           bytes per cell (what the old store wrote per cell); at full size it is expected to
 *           run out of heap, and the phase reports that.
 * Targets: first call ≤ 60 s, run peak RSS ≤ 1.5 GB, ≤ 20 KB per long cell beyond the unique
 * prefixes, report peak RSS ≤ 500 MB, HTTP run peak RSS ≤ 600 MB. BENCH_SMOKE=1: 2 targets × 30 cells of 20,000 characters.
 * BENCH_SKIP_OLD=1 skips the old-path phase.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { planGrid as planGridWith, SIZE } from './scale-grid.mjs';

const here = fileURLToPath(import.meta.url);
const smoke = process.env.BENCH_SMOKE === '1' || process.env.BENCH_SMOKE === 'true';
const TARGETS = { firstCallS: 60, runRssMb: 1536, httpRssMb: 600, perCellKb: 20, reportRssMb: 500 };

type Phase = 'run' | 'report' | 'old';

const mb = (bytes: number) => bytes / (1024 * 1024);
const peakRssMb = () => process.resourceUsage().maxRSS / 1024;

/** The grid from src/ (the run, report and old phases run under tsx). */
async function planGrid(targets?: string[], judge = 'sim:bench-judge') {
  const modules = {
    ...(await import('../src/persona-drift/config.js')),
    ...(await import('../src/persona-drift/materials.js')),
    ...(await import('../src/persona-drift/plan.js')),
  };
  return planGridWith(modules, targets ?? Array.from({ length: SIZE.targets }, (_, i) => `sim:bench-target-${String(i + 1).padStart(2, '0')}`), judge);
}

async function runPhase(db: string): Promise<Record<string, unknown>> {
  const { personaRunner } = await import('../src/persona-drift/run.js');
  const { runAudit } = await import('../src/experiment/run-audit.js');
  const { SqliteRunStore } = await import('../src/store/run-store.js');
  type ModelAdapter = import('../src/models/types.js').ModelAdapter;
  const { config, specs, planStart, planMs, uniquePrefixes } = await planGrid();
  let firstCallAt: number | undefined;
  let firstCallCpuS: number | undefined;
  const cpuStart = process.cpuUsage();
  const cpuSince = () => {
    const used = process.cpuUsage(cpuStart);
    return (used.user + used.system) / 1e6;
  };
  let calls = 0;
  const answer = 'I am a coding assistant. '.repeat(12);
  const verdict = JSON.stringify({ score: 2, label: 'mostly_assistant', reason: 'answers as an assistant' });
  const adapterFor = (ref: string): ModelAdapter => ({
    ref,
    provider: 'bench',
    modelId: ref.slice(4),
    generate: async () => {
      if (firstCallAt === undefined) {
        firstCallAt = performance.now();
        firstCallCpuS = cpuSince();
      }
      calls += 1;
      return {
        text: ref === 'sim:bench-judge' ? verdict : `${answer}(answer ${calls})`,
        finishReason: 'stop',
        usage: { inputTokens: 80_000, outputTokens: 60, cachedInputTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
        latencyMs: 0,
      };
    },
  });
  const runner = { ...personaRunner, plan: () => specs, manifestOptions: () => ({ bench: 'scale-memory' }) };
  const result = await runAudit(runner, config, db, {
    input: [],
    runtime: { adapterFor, progress: false, signal: new AbortController().signal, concurrency: 8 },
  });
  const wallS = (performance.now() - planStart) / 1000;
  const store = SqliteRunStore.open(db, { readonly: true });
  const blobs = store.db.prepare('SELECT count(*) AS n, coalesce(sum(length(body)), 0) AS bytes FROM blobs').get() as { n: number; bytes: number };
  const cells = store.db.prepare('SELECT count(*) FROM cells').pluck().get() as number;
  const requestBytes = store.db.prepare('SELECT sum(length(request)) FROM cells').pluck().get() as number;
  await store.close();
  const fileBytes = statSync(db).size;
  return {
    targetCells: specs.length,
    cells,
    calls,
    uniquePrefixes,
    planS: planMs / 1000,
    firstCallS: firstCallAt === undefined ? null : (firstCallAt - planStart) / 1000,
    firstCallSinceProcessStartS: firstCallAt === undefined ? null : firstCallAt / 1000,
    firstCallCpuS: firstCallCpuS ?? null,
    runCpuS: cpuSince(),
    wallS,
    peakRssMb: peakRssMb(),
    storeMb: mb(fileBytes),
    blobs: blobs.n,
    blobMb: mb(blobs.bytes),
    requestColumnKbPerCell: requestBytes / cells / 1024,
    kbPerLongCellBeyondPrefixes: (fileBytes - blobs.bytes) / specs.length / 1024,
    status: result.interrupted ? 'stopped' : 'done',
  };
}

async function reportPhase(db: string, out: string): Promise<Record<string, unknown>> {
  const { SqliteRunStore } = await import('../src/store/run-store.js');
  const { collectReports, renderHtmlReport } = await import('../src/report/report.js');
  // Shared report code reads the registry; this child is an entry point, so it registers the audits.
  const { registerBuiltinAudits } = await import('../src/audits.js');
  registerBuiltinAudits();
  const start = performance.now();
  const store = SqliteRunStore.open(db, { readonly: true });
  const reports = await collectReports(store, undefined, { B: SIZE.B });
  const html = await renderHtmlReport(store, reports);
  await store.close();
  writeFileSync(out, html);
  const cpu = process.cpuUsage();
  return { wallS: (performance.now() - start) / 1000, cpuS: (cpu.user + cpu.system) / 1e6, peakRssMb: peakRssMb(), htmlMb: mb(Buffer.byteLength(html)) };
}

/** The old runner's first step: every cell's canonical request JSON, built and kept up front. */
async function oldPhase(): Promise<Record<string, unknown>> {
  const { cellIdentity } = await import('../src/store/keys.js');
  const { specs, planStart } = await planGrid();
  const perTarget = specs.filter((spec) => spec.request.model === specs[0]!.request.model);
  let sample = 0;
  for (const spec of perTarget) sample += cellIdentity(spec.request).json.length;
  const bytesPerCell = sample / perTarget.length;
  process.stdout.write(
    `${JSON.stringify({ partial: true, oldStoreKbPerCell: bytesPerCell / 1024, oldStoreGbForGrid: (bytesPerCell * specs.length) / 1024 ** 3 })}\n`,
  );
  const identities = specs.map((spec) => cellIdentity(spec.request));
  return {
    identities: identities.length,
    seconds: (performance.now() - planStart) / 1000,
    peakRssMb: peakRssMb(),
    oldStoreKbPerCell: bytesPerCell / 1024,
  };
}

async function child(phase: Phase, db: string, out: string): Promise<void> {
  const result = phase === 'run' ? await runPhase(db) : phase === 'report' ? await reportPhase(db, out) : await oldPhase();
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

function spawnPhase(phase: Phase, db: string, out: string): { ok: boolean; results: Array<Record<string, unknown>>; stderr: string; seconds: number } {
  const start = performance.now();
  const run = spawnSync(process.execPath, ['--max-old-space-size=4096', '--import', 'tsx', here, phase, db, out], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const results = run.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { ok: run.status === 0, results, stderr: run.stderr, seconds: (performance.now() - start) / 1000 };
}

/** The HTTP phase: bench/scale-http.child.mjs under plain node, on a dist/ built from the current src/. */
function httpPhase(db: string): { results: Array<Record<string, unknown>> } {
  const root = join(dirname(here), '..');
  const newest = (dir: string): number =>
    readdirSync(dir, { withFileTypes: true, recursive: true })
      .filter((entry) => entry.isFile() && /\.(ts|js)$/.test(entry.name) && !entry.name.endsWith('.test.ts'))
      .reduce((latest, entry) => Math.max(latest, statSync(join(entry.parentPath, entry.name)).mtimeMs), 0);
  if (!existsSync(join(root, 'dist')) || newest(join(root, 'src')) > newest(join(root, 'dist'))) {
    throw new Error(
      `the HTTP phase runs the built package: dist/ is missing or older than src/ — run \`npm run build\` (in ${relative(process.cwd(), root) || '.'})`,
    );
  }
  const run = spawnSync(process.execPath, [join(dirname(here), 'scale-http.child.mjs'), db], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`http phase failed:\n${run.stderr.slice(-2000)}`);
  const results = run.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { results };
}

const fmt = (value: unknown, digits = 1) => (typeof value === 'number' ? value.toFixed(digits) : String(value));
const row = (label: string, value: string, target: string) => console.log(`${label.padEnd(52)} ${value.padStart(12)}   ${target}`);

function main(): void {
  const dir = mkdtempSync(join(tmpdir(), 'echolens-scale-'));
  const db = join(dir, 'scale.db');
  const out = join(dir, 'report.html');
  try {
    console.log(
      `grid: ${SIZE.targets} targets × ${SIZE.positions} positions × 2 arms × ${SIZE.categories.length * 5} probes × ${SIZE.samples} samples, ${SIZE.chars.toLocaleString('en-US')}-character contexts${smoke ? ' (smoke)' : ''}`,
    );
    const run = spawnPhase('run', db, out);
    if (!run.ok) throw new Error(`run phase failed:\n${run.stderr.slice(-2000)}`);
    const r = run.results.at(-1)!;
    row('target cells / all cells / calls', `${r.targetCells} / ${r.cells} / ${r.calls}`, '');
    row('time to first call, since planning began (s)', fmt(r.firstCallS), `target ≤ ${TARGETS.firstCallS}`);
    row('time to first call, since process start (s)', fmt(r.firstCallSinceProcessStartS), '');
    row('CPU time to first call, since planning began (s)', fmt(r.firstCallCpuS), 'wall time above is this on a busy machine');
    row('run wall time, plan + every cell (s)', fmt(r.wallS), '');
    row('run CPU time, plan + every cell (s)', fmt(r.runCpuS), '');
    row('run peak RSS (MB)', fmt(r.peakRssMb, 0), `target ≤ ${TARGETS.runRssMb}`);
    row('store file (MB)', fmt(r.storeMb), '');
    row(`blobs (${r.blobs}; ${r.uniquePrefixes} unique prefixes) (MB)`, fmt(r.blobMb), '');
    row('request column per cell (KB)', fmt(r.requestColumnKbPerCell, 2), '');
    row('store per long cell beyond unique prefixes (KB)', fmt(r.kbPerLongCellBeyondPrefixes, 2), `target ≤ ${TARGETS.perCellKb}`);

    const report = spawnPhase('report', db, out);
    if (!report.ok) throw new Error(`report phase failed:\n${report.stderr.slice(-2000)}`);
    const p = report.results.at(-1)!;
    row('HTML report peak RSS (MB)', fmt(p.peakRssMb, 0), `target ≤ ${TARGETS.reportRssMb}`);
    row('HTML report wall / CPU time (s), size (MB)', `${fmt(p.wallS)} / ${fmt(p.cpuS)}, ${fmt(p.htmlMb)}`, '');

    const http = httpPhase(join(dir, 'scale-http.db'));
    const h = http.results.at(-1)!;
    row('over HTTP (AI SDK adapters, fake servers): cells done', `${h.done} / ${Number(h.targetCells) * 2}`, 'plain node on dist/, as the CLI');
    row('over HTTP: calls/s, CPU ms per call', `${fmt(h.callsPerS, 0)}, ${fmt(h.cpuMsPerCall, 2)}`, '');
    row('over HTTP: peak RSS (MB)', fmt(h.peakRssMb, 0), `target ≤ ${TARGETS.httpRssMb}`);

    if (process.env.BENCH_SKIP_OLD !== '1') {
      const old = spawnPhase('old', db, out);
      const partial = old.results.find((x) => x.partial);
      if (partial) {
        row('old path: store per long cell, full request JSON (KB)', fmt(partial.oldStoreKbPerCell), '');
        row('old path: request JSON for the grid (GB)', fmt(partial.oldStoreGbForGrid, 2), '');
      }
      if (old.ok) {
        const o = old.results.at(-1)!;
        row('old path: all request JSON up front (s)', fmt(o.seconds), '');
        row('old path: peak RSS before the first call (MB)', fmt(o.peakRssMb, 0), '');
      } else {
        const oom = /heap out of memory|Allocation failed/i.test(old.stderr);
        row('old path: all request JSON up front', oom ? 'OUT OF HEAP' : 'FAILED', `after ${fmt(old.seconds)} s, 4 GB heap, before any call`);
        if (!oom) console.log(old.stderr.slice(-1000));
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const [phase, db, out] = process.argv.slice(2);
if (phase === 'run' || phase === 'report' || phase === 'old') {
  child(phase, db!, out!).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
} else {
  main();
}
