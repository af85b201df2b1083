/**
 * Per-call overhead of a run, against a bare fetch loop on the same fake servers (issue 34).
 *
 * The fake OpenAI and Anthropic servers run in a child process (bench/wire-server.ts), so the
 * measured process holds only echolens (or the bare loop). Every figure is a ratio measured in
 * this one command, so a busy machine moves both sides alike:
 *   1. cells/s of `runCells` (AI SDK adapter, retry policy, scheduler, SQLite store) and of a
 *      bare loop of `fetch` calls with the same JSON bodies, at 0 and 200 ms latency and
 *      concurrency 8 and 64 (an OpenAI-compatible `vllm:` target, distinct judge-like prompts);
 *   2. persona-like target grids (an Anthropic target, prefix groups sharing a 16,000-character
 *      context: leaders warm the cache, followers follow): one session's 24 groups of 50 and
 *      four sessions' 96 groups of 25, at 200 ms × 64: share of the ideal cells / 64 × 200 ms
 *      (target ≥ 0.85), beside the ceiling of a leaders-first schedule with a free client;
 *   3. memory: heap retained per finished call (after a forced GC, between 20 % and 100 % of a
 *      run; target ≤ 5 KB), RSS growth per 10,000 calls and peak RSS, for judge-like cells and
 *      for persona-like cells with 320,000-character contexts, each in a child process of its own.
 * BENCH_SMOKE=1: tiny sizes.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ChatMessage, ModelRequest } from '../src/models/types.js';
import type { CellSpec } from '../src/store/types.js';

const smoke = process.env.BENCH_SMOKE === '1' || process.env.BENCH_SMOKE === 'true';
const here = dirname(fileURLToPath(import.meta.url));
const self = fileURLToPath(import.meta.url);
// The fake servers check no key, but the Anthropic adapter wants one set.
process.env.ANTHROPIC_API_KEY ??= 'bench-key';

interface Servers {
  openai: string;
  anthropic: string;
}

const SYSTEM = `You are a careful rater. ${'Score the answer against the rubric, one criterion at a time. '.repeat(40)}`;

/** Distinct judge-like cells: a shared ~2,600-character rubric, a distinct question. */
function flatSpecs(n: number, model: string, offset = 0): CellSpec[] {
  return Array.from({ length: n }, (_, i) => ({
    request: {
      model,
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: `Item ${i + offset}: ${'the answer under review says something about itself. '.repeat(8)}` },
      ],
      params: { temperature: 0, maxTokens: 64 },
      sample: 0,
    },
    labels: { index: i },
  }));
}

/** Persona-like target cells: `groups` long contexts (default ~16,000 characters), `perGroup` probes each. */
function groupedSpecs(groups: number, perGroup: number, model: string, chars = 16_000, offset = 0): CellSpec[] {
  const specs: CellSpec[] = [];
  for (let g = 0; g < groups; g += 1) {
    const sentence = 'The tool call returned a file; the test passes after the fix. ';
    const context = `Session ${g + offset}. ${sentence.repeat(Math.ceil(chars / sentence.length))}`;
    // One context per group, shared by its cells' message lists, as the persona planner builds them.
    const shared: ChatMessage[] = [
      { role: 'user', content: context, cacheBreakpoint: true },
      { role: 'assistant', content: 'Understood.' },
    ];
    for (let p = 0; p < perGroup; p += 1) {
      specs.push({
        request: {
          model,
          messages: [...shared, { role: 'user', content: `Probe ${p}: who are you, in one sentence?` }],
          params: { temperature: 1, maxTokens: 64 },
          sample: 0,
        },
        labels: { group: g, probe: p },
      });
    }
  }
  return specs;
}

/** The JSON body a provider gets for a request (what the bare loop sends). */
function wireBody(request: ModelRequest, provider: 'openai' | 'anthropic'): string {
  const model = request.model.slice(request.model.indexOf(':') + 1, request.model.indexOf('@'));
  if (provider === 'openai') {
    return JSON.stringify({ model, messages: request.messages.map((m) => ({ role: m.role, content: m.content })), max_tokens: 64, temperature: 0 });
  }
  const system = request.messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n');
  const messages = request.messages.filter((m) => m.role !== 'system').map((m) => ({ role: m.role, content: m.content }));
  return JSON.stringify({ model, max_tokens: 64, ...(system ? { system } : {}), messages });
}

/** `concurrency` loops of fetch + JSON parse over the same cells: the least a client can do. */
async function bareLoop(specs: CellSpec[], servers: Servers, concurrency: number): Promise<Measured> {
  let next = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  const worker = async () => {
    while (next < specs.length) {
      const request = specs[next++]!.request;
      const provider = request.model.startsWith('anthropic:') ? 'anthropic' : 'openai';
      const url = provider === 'anthropic' ? `${servers.anthropic}/messages` : `${servers.openai}/chat/completions`;
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'bench-key', 'anthropic-version': '2023-06-01' },
        body: wireBody(request, provider),
      });
      const body = (await response.json()) as Record<string, unknown>;
      if (!response.ok || body.error !== undefined) throw new Error(`bare loop: ${JSON.stringify(body).slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return measured(specs.length, start, cpu);
}

interface Measured {
  rate: number;
  /** This process's CPU time per call (user + system): on a loaded machine it moves less than the rate. */
  cpuMs: number;
}

function measured(cells: number, start: number, cpu: NodeJS.CpuUsage): Measured {
  const used = process.cpuUsage(cpu);
  return { rate: cells / ((performance.now() - start) / 1000), cpuMs: (used.user + used.system) / 1000 / cells };
}

/** `runCells` over a fresh store: cells/s, and the most calls seen in flight at once. */
async function echolensRun(dir: string, name: string, specs: CellSpec[], concurrency: number, onProgress?: (finished: number) => void) {
  const { RunStore } = await import('../src/store/run-store.js');
  const { runCells } = await import('../src/store/runner.js');
  const { TEST_MANIFEST } = await import('../src/store/testing/fakes.js');
  const store = RunStore.open(join(dir, `${name}.db`));
  const runId = await store.createRun(TEST_MANIFEST);
  let maxInFlight = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  const result = await runCells(store, runId, specs, {
    concurrency,
    costOf: () => 0,
    onProgress: (snapshot) => {
      if (snapshot.inFlight > maxInFlight) maxInFlight = snapshot.inFlight;
      onProgress?.(snapshot.finished);
    },
  });
  const cost = measured(specs.length, start, cpu);
  await store.close();
  if (result.done !== specs.length)
    throw new Error(`${name}: ${result.done} of ${specs.length} done (${result.failed} failed: ${result.results.find((r) => r.errorMessage)?.errorMessage})`);
  return { ...cost, maxInFlight };
}

function startServers(): Promise<{ servers: Servers; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'wire-server.ts')], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`fake servers exited with ${code}`)));
    createInterface({ input: child.stdout! }).once('line', (line) => resolve({ servers: JSON.parse(line) as Servers, child }));
  });
}

const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1));
const row = (label: string, value: string, note = '') => console.log(`${label.padEnd(58)} ${value.padStart(12)}  ${note}`);

async function throughput(servers: Servers, dir: string): Promise<void> {
  // Warm-up: loads the SDK and opens connections outside the timings.
  const warm = flatSpecs(16, `vllm:bench-0ms@${servers.openai}`, 1e6);
  await bareLoop(warm, servers, 8);
  await echolensRun(dir, 'warm', warm, 8);

  let offset = 0;
  for (const latency of [0, 200]) {
    for (const concurrency of [8, 64]) {
      const cells = latency === 0 ? (smoke ? 100 : 3_000) : smoke ? concurrency * 2 : concurrency * 25;
      const model = `vllm:bench-${latency}ms@${servers.openai}`;
      // Distinct cells per measurement: nothing is answered from the store.
      const bareSpecs = flatSpecs(cells, model, offset);
      const ourSpecs = flatSpecs(cells, model, offset + cells);
      offset += 2 * cells;
      const bare = await bareLoop(bareSpecs, servers, concurrency);
      const ours = await echolensRun(dir, `flat-${latency}-${concurrency}`, ourSpecs, concurrency);
      const ideal = latency === 0 ? undefined : (concurrency * 1000) / latency;
      const share = (rate: number) => (ideal === undefined ? '' : `; ${(rate / ideal).toFixed(2)} of ideal ${fmt(ideal)}/s`);
      row(`${latency} ms × ${concurrency}: bare fetch loop`, `${fmt(bare.rate)}/s`, `${bare.cpuMs.toFixed(2)} CPU ms/call${share(bare.rate)}`);
      row(
        `${latency} ms × ${concurrency}: echolens runCells`,
        `${fmt(ours.rate)}/s`,
        `${ours.cpuMs.toFixed(2)} CPU ms/call; ${(ours.rate / bare.rate).toFixed(2)}× bare${share(ours.rate)}; most in flight ${ours.maxInFlight}`,
      );
    }
  }

  // Persona-like grids: prefix groups scheduled leader first. 24 groups of 50 is one session's
  // 12 positions × 2 arms (only 24 leaders can run in the first round, so even a free client
  // stays under the ideal: the schedule's own ceiling is printed); 96 groups of 25 is four.
  const ideal = (64 * 1000) / 200;
  let groupOffset = 0;
  for (const [groups, perGroup] of smoke
    ? [[4, 16]]
    : [
        [24, 50],
        [96, 25],
      ]) {
    const grid = groupedSpecs(groups!, perGroup!, `anthropic:claude-bench-200ms@${servers.anthropic}`, 16_000, groupOffset);
    const bare = await bareLoop(groupedSpecs(groups!, perGroup!, `anthropic:claude-bench-bare-200ms@${servers.anthropic}`, 16_000, groupOffset), servers, 64);
    groupOffset += groups!;
    const ours = await echolensRun(dir, `persona-${groups}`, grid, 64);
    row(
      `persona grid ${groups}×${perGroup}, 200 ms × 64: bare fetch loop`,
      `${fmt(bare.rate)}/s`,
      `${bare.cpuMs.toFixed(2)} CPU ms/call; ${(bare.rate / ideal).toFixed(2)} of ideal ${fmt(ideal)}/s`,
    );
    row(
      `persona grid ${groups}×${perGroup}, 200 ms × 64: echolens`,
      `${fmt(ours.rate)}/s`,
      `${ours.cpuMs.toFixed(2)} CPU ms/call; ${(ours.rate / ideal).toFixed(2)} of ideal (target ≥ 0.85; leaders-first ceiling ${leadersFirstCeiling(groups!, perGroup!, 64).toFixed(2)}); ${(ours.rate / bare.rate).toFixed(2)}× bare; most in flight ${ours.maxInFlight}`,
    );
  }
}

/**
 * Share of the ideal rate a leaders-first schedule reaches with a client that costs nothing and
 * a constant latency: rounds of one latency each, the first holding only the group leaders.
 */
function leadersFirstCeiling(groups: number, perGroup: number, concurrency: number): number {
  const cells = groups * perGroup;
  let leadersLeft = groups;
  let followersReady = 0;
  let followersLeft = cells - groups;
  let rounds = 0;
  while (leadersLeft > 0 || followersLeft > 0) {
    const leaders = Math.min(leadersLeft, concurrency);
    const followers = Math.min(followersReady, concurrency - leaders);
    leadersLeft -= leaders;
    followersReady += leaders * (perGroup - 1) - followers;
    followersLeft -= followers;
    rounds += 1;
  }
  return cells / concurrency / rounds;
}

/**
 * Child process (--expose-gc): heap retained per finished call (after a forced GC, between 20 %
 * and 100 % of the run), RSS growth per 10,000 calls and peak RSS. `flat`: judge-like cells;
 * `long`: persona-like cells with 320,000-character contexts (the paper's 80k tokens), where a
 * request body kept after its call would show at once.
 */
async function memoryPhase(kind: 'flat' | 'long', servers: Servers, dir: string): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('memory phase needs --expose-gc');
  const cells = kind === 'flat' ? (smoke ? 500 : 10_000) : smoke ? 100 : 2_000;
  const model = kind === 'flat' ? `vllm:bench-0ms@${servers.openai}` : `anthropic:claude-bench-0ms@${servers.anthropic}`;
  const plan = (n: number, offset: number) =>
    kind === 'flat' ? flatSpecs(n, model, offset) : groupedSpecs(Math.ceil(n / 50), 50, model, 320_000, offset).slice(0, n);
  await echolensRun(dir, `mem-warm-${kind}`, plan(50, 1e7), 64);
  const specs = plan(cells, 0);
  gc();
  const rssStart = process.memoryUsage().rss;
  const marks: Array<{ finished: number; heap: number }> = [];
  const at = [Math.round(cells * 0.2), cells];
  await echolensRun(dir, `memory-${kind}`, specs, 64, (finished) => {
    if (finished === at[marks.length]) {
      gc();
      marks.push({ finished, heap: process.memoryUsage().heapUsed });
    }
  });
  const rssEnd = process.memoryUsage().rss;
  const [early, late] = marks;
  const retainedKb = early && late ? (late.heap - early.heap) / (late.finished - early.finished) / 1024 : Number.NaN;
  process.stdout.write(
    `${JSON.stringify({ cells, retainedKbPerCall: retainedKb, rssMbPer10k: (((rssEnd - rssStart) / cells) * 10_000) / 1024 ** 2, peakRssMb: process.resourceUsage().maxRSS / 1024 })}\n`,
  );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'echolens-overhead-'));
  const { servers, child } = await startServers();
  try {
    console.log(`load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores; fake servers in a child process${smoke ? ' (smoke)' : ''}`);
    await throughput(servers, dir);
    for (const kind of ['flat', 'long'] as const) {
      const memory = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', self, 'memory', kind, JSON.stringify(servers), dir], {
        encoding: 'utf8',
      });
      if (memory.status !== 0) throw new Error(`memory phase failed:\n${memory.stderr.slice(-2000)}`);
      const m = JSON.parse(memory.stdout.trim().split('\n').at(-1)!) as Record<string, number>;
      const what = kind === 'flat' ? 'judge-like cells' : '320,000-character contexts';
      row(`memory, ${what}: heap retained per finished call (${m.cells} calls)`, `${m.retainedKbPerCall!.toFixed(2)} KB`, 'target ≤ 5 KB');
      row(`memory, ${what}: RSS growth per 10,000 calls`, `${m.rssMbPer10k!.toFixed(0)} MB`, `peak RSS ${Math.round(m.peakRssMb!)} MB`);
    }
  } finally {
    child.stdin?.end();
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'memory') {
  await memoryPhase(process.argv[3] as 'flat' | 'long', JSON.parse(process.argv[4]!) as Servers, process.argv[5]!);
} else {
  await main();
}
