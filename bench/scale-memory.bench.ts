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
 *   old     the old path's first step, in the same command: the canonical request JSON of every
 *           cell built up front (what runCells did before it registered the plan), with its
 *           bytes per cell (what the old store wrote per cell); at full size it is expected to
 *           run out of heap, and the phase reports that.
 * Targets: first call ≤ 60 s, run peak RSS ≤ 1.5 GB, ≤ 20 KB per long cell beyond the unique
 * prefixes, report peak RSS ≤ 500 MB. BENCH_SMOKE=1: 2 targets × 30 cells of 20,000 characters.
 * BENCH_SKIP_OLD=1 skips the old-path phase.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(import.meta.url);
const smoke = process.env.BENCH_SMOKE === '1' || process.env.BENCH_SMOKE === 'true';
const SIZE = smoke
  ? { targets: 2, positions: 3, categories: ['coding_self'], samples: 1, chars: 20_000, B: 50 }
  : { targets: 12, positions: 12, categories: ['identity', 'experience', 'preference', 'relational', 'coding_self'], samples: 2, chars: 320_000, B: 200 };
const TARGETS = { firstCallS: 60, runRssMb: 1536, httpRssMb: 600, perCellKb: 20, reportRssMb: 500 };

type Phase = 'run' | 'http' | 'report' | 'old';

const mb = (bytes: number) => bytes / (1024 * 1024);
const peakRssMb = () => process.resourceUsage().maxRSS / 1024;

/** Deterministic text that does not compress into a few repeated strings: words from a PRNG. */
function syntheticText(seed: number, chars: number): string {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const words = [
    'the',
    'tool',
    'call',
    'returned',
    'file',
    'src/index.ts',
    'error',
    'fix',
    'test',
    'passes',
    '"quoted"',
    'json',
    '{',
    '}',
    'user',
    'assistant',
    'npm',
    'run',
    'build',
  ];
  const parts: string[] = [];
  let length = 0;
  while (length < chars) {
    const word = next() < 0.05 ? '\n' : `${words[Math.floor(next() * words.length)]!} `;
    parts.push(word);
    length += word.length;
  }
  return parts.join('').slice(0, chars);
}

async function planGrid(targetRefs?: string[], judgeRef = 'sim:bench-judge') {
  const { personaConfigSchema } = await import('../src/persona-drift/config.js');
  const { loadPersonaMaterials } = await import('../src/persona-drift/materials.js');
  const { planTargetCells } = await import('../src/persona-drift/plan.js');
  type Input = import('../src/persona-drift/plan.js').SessionPlanInput;
  type ChatMessage = import('../src/models/types.js').ChatMessage;
  const targets = targetRefs ?? Array.from({ length: SIZE.targets }, (_, i) => `sim:bench-target-${String(i + 1).padStart(2, '0')}`);
  const config = personaConfigSchema.parse({
    sessions: ['synthetic-session.jsonl'],
    targets,
    judges: [judgeRef],
    positions: [{ uniform: SIZE.positions }],
    probes: { categories: SIZE.categories },
    samples: SIZE.samples,
    analysis: { B: SIZE.B },
  });
  const materials = loadPersonaMaterials(config.materials);
  // One synthetic session: each position's context is a distinct ~80k-token rendering (as a
  // flat prefix is), built once per position and arm as sessions-input.ts caches them.
  const contexts = new Map<string, ChatMessage[]>();
  const session: Input = {
    id: 'S1',
    positions: Array.from({ length: SIZE.positions }, (_, i) => ({ label: `U${String(i + 1).padStart(2, '0')}`, value: (i + 1) * 10 })),
    context(position, arm) {
      const id = `${position.label}/${arm}`;
      let messages = contexts.get(id);
      if (!messages) {
        messages = [
          { role: 'user', content: syntheticText(contexts.size + 1, SIZE.chars) },
          { role: 'assistant', content: materials.acknowledgement ?? 'Understood.' },
        ];
        contexts.set(id, messages);
      }
      return messages;
    },
    continuation: () => [],
  };
  const planStart = performance.now();
  const specs = planTargetCells(config, materials.stimuli, [session], { systemPrompts: materials.systemPrompts });
  return { config, specs, planStart, planMs: performance.now() - planStart, uniquePrefixes: contexts.size };
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
  store.close();
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

/**
 * The same grid over HTTP: half the targets Anthropic, half OpenAI, and an OpenAI judge, all
 * through the real AI SDK adapters against the fake servers of bench/wire-server.ts (in a child
 * process of their own, so their memory is not counted here), at concurrency 64 with zero
 * latency. Peak RSS of this process is the figure (target ≤ 600 MB).
 */
async function httpPhase(db: string): Promise<Record<string, unknown>> {
  const { spawn } = await import('node:child_process');
  const { createInterface } = await import('node:readline');
  const { personaRunner } = await import('../src/persona-drift/run.js');
  const { runAudit } = await import('../src/experiment/run-audit.js');
  const { SqliteRunStore } = await import('../src/store/run-store.js');
  process.env.ANTHROPIC_API_KEY ??= 'bench-key';
  process.env.OPENAI_API_KEY ??= 'bench-key';
  const server = spawn(process.execPath, ['--import', 'tsx', join(dirname(here), 'wire-server.ts')], { stdio: ['pipe', 'pipe', 'inherit'] });
  try {
    const urls = await new Promise<{ openai: string; anthropic: string }>((resolve, reject) => {
      server.once('error', reject);
      createInterface({ input: server.stdout! }).once('line', (line) => resolve(JSON.parse(line) as { openai: string; anthropic: string }));
    });
    const targets = Array.from({ length: SIZE.targets }, (_, i) =>
      i % 2 === 0 ? `anthropic:claude-bench-${i + 1}-0ms@${urls.anthropic}` : `openai:gpt-bench-${i + 1}-0ms@${urls.openai}`,
    );
    const { config, specs, planStart } = await planGrid(targets, `openai:gpt-bench-judge-0ms@${urls.openai}`);
    const cpuStart = process.cpuUsage();
    const runner = { ...personaRunner, plan: () => specs, manifestOptions: () => ({ bench: 'scale-memory-http' }) };
    const result = await runAudit(runner, config, db, {
      input: [],
      runtime: { progress: false, signal: new AbortController().signal, concurrency: 64 },
    });
    const wallS = (performance.now() - planStart) / 1000;
    const cpu = process.cpuUsage(cpuStart);
    const store = SqliteRunStore.open(db, { readonly: true });
    const done = store.db.prepare("SELECT count(*) FROM cells WHERE status = 'done'").pluck().get() as number;
    store.close();
    return {
      targetCells: specs.length,
      done,
      wallS,
      callsPerS: done / wallS,
      cpuMsPerCall: (cpu.user + cpu.system) / 1000 / done,
      peakRssMb: peakRssMb(),
      status: result.interrupted ? 'stopped' : 'done',
    };
  } finally {
    server.stdin?.end();
    server.kill();
  }
}

async function reportPhase(db: string, out: string): Promise<Record<string, unknown>> {
  const { SqliteRunStore } = await import('../src/store/run-store.js');
  const { collectReports, renderHtmlReport } = await import('../src/report/report.js');
  // Shared report code reads the registry; this child is an entry point, so it registers the audits.
  const { registerBuiltinAudits } = await import('../src/audits.js');
  registerBuiltinAudits();
  const start = performance.now();
  const store = SqliteRunStore.open(db, { readonly: true });
  const reports = collectReports(store, undefined, { B: SIZE.B });
  const html = await renderHtmlReport(store, reports);
  store.close();
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
  const result =
    phase === 'run' ? await runPhase(db) : phase === 'http' ? await httpPhase(db) : phase === 'report' ? await reportPhase(db, out) : await oldPhase();
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

    const httpDb = join(dir, 'scale-http.db');
    const http = spawnPhase('http', httpDb, out);
    if (!http.ok) throw new Error(`http phase failed:\n${http.stderr.slice(-2000)}`);
    const h = http.results.at(-1)!;
    row('over HTTP (AI SDK adapters, fake servers): cells done', `${h.done} / ${Number(h.targetCells) * 2}`, '');
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
if (phase === 'run' || phase === 'http' || phase === 'report' || phase === 'old') {
  child(phase, db!, out!).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
} else {
  main();
}
