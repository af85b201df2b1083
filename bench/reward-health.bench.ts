/**
 * /health latency of the reward server while it is sent 50 concurrent maximal requests, round
 * after round (issue #40: < 100 ms, max not median). The server runs as its own process (the CLI,
 * sim:labeler, `--max-response-chars 1000000`); this process sends the load (8 MiB bodies of
 * 1,000,000-character prose responses, set BENCH_CHARS for another length); a third process asks
 * /health every 20 ms on fresh connections, so neither the load client's work nor the server's
 * shows up on the other's clock.
 *   Baselines, measured in the same command: /health latency of the idle server, and of a bare
 *   Node HTTP server probed in turn with it (what waiting for a core costs on this machine).
 * Prints median, p95 and max of both, the answers to the load (200 / 503 / other), the server's
 * peak memory, the load average before and after, and the ratio of the loaded max to 100 ms; and,
 * from bench/long-task-probe.mjs preloaded into the server, its event-loop turns over 20 ms late in
 * the loaded phase (how many, in how many its thread itself ran > 20 ms: its own long tasks, which
 * depend less on the machine's load) and its GC pauses over 5 ms.
 * BENCH_SMOKE=1: 10 probes each.
 *   BENCH_SHAPE=labelled: each response is 128 tagged steps (the most labelled; default cap) of
 * prose, different in every request, so the labeler, its cache store and DTW run for every item
 * (the default shape, untagged prose, has thousands of sentences per response: each item is refused
 * at the step cap before any labelling, and every request is the same body, so it measures receiving
 * and segmenting only). BENCH_ROUNDS=n: stop after n rounds of 50 (default: as many as the probes last).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { SIM_STEP_CUES } from '../src/memory-drift/sim.js';

const smoke = process.env.BENCH_SMOKE === '1' || process.env.BENCH_SMOKE === 'true';
const PROBES = smoke ? 10 : 200;
const CHARS = Number(process.env.BENCH_CHARS ?? 1_000_000);
const LABELLED = process.env.BENCH_SHAPE === 'labelled';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? Number.POSITIVE_INFINITY);
const loadAverage = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
const loadAtStart = loadAverage();
const A = 'Practical/Efficiency and resource optimization';
const C = 'Social/Social equity and justice';
const dir = mkdtempSync(join(tmpdir(), 'echolens-reward-health-'));
writeFileSync(join(dir, 'refs.jsonl'), `${JSON.stringify({ question_id: 'q1', symbols: [A, C] })}\n`);
const args = ['memory', 'reward-server', '--references', join(dir, 'refs.jsonl'), '--labeler', 'sim:labeler', '--port', '0', '--db', join(dir, 'r.db')];
// BENCH_DIST=1: the built CLI (dist/, run `npm run build` first) instead of the sources through tsx.
const entry = process.env.BENCH_DIST === '1' ? ['dist/cli/main.js'] : ['--import', 'tsx', 'src/cli/main.ts'];
// BENCH_SERVER_NODE_ARGS / BENCH_SERVER_ARGS: extra node / reward-server arguments (space separated).
const extra = (name: string) => (process.env[name] ?? '').split(' ').filter(Boolean);
// The server's late event-loop turns (> 20 ms), recorded by a preloaded 5 ms timer (bench/long-task-probe.mjs).
const lateTurnsFile = join(dir, 'late-turns.jsonl');
const probeModule = new URL('./long-task-probe.mjs', import.meta.url).href;
const server = spawn(
  process.execPath,
  [...extra('BENCH_SERVER_NODE_ARGS'), '--import', probeModule, ...entry, ...args, '--max-response-chars', String(CHARS), ...extra('BENCH_SERVER_ARGS')],
  {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ECHOLENS_LONG_TASK_FILE: lateTurnsFile },
  },
);
const url = await new Promise<string>((resolve) => {
  let out = '';
  server.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    const match = /reward server on (\S+)/u.exec(out);
    if (match) resolve(match[1] as string);
  });
});

/**
 * The control: a bare Node HTTP server answering /health with `{}`, a process of its own. On a
 * shared machine every process waits for a core at times; the control's latency, probed in turn
 * with the reward server's, is what the machine alone costs.
 */
const control = spawn(
  process.execPath,
  ['-e', "const s = require('node:http').createServer((q, r) => r.end('{}')).listen(0, '127.0.0.1', () => console.log(s.address().port));"],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const controlUrl = await new Promise<string>((resolve) => {
  control.stdout.once('data', (chunk: Buffer) => resolve(`http://127.0.0.1:${chunk.toString().trim()}`));
});

/** The prober, a process of its own: `n` rounds of GET /health on each url in turn, 20 ms apart, each on a new connection; prints the sorted times per url. */
const PROBER = `
const { get } = require('node:http');
const [n, ...urls] = [Number(process.argv[1]), ...process.argv.slice(2)];
const one = (url) => new Promise((resolve, reject) => {
  const start = performance.now();
  get(url + '/health', { agent: false }, (res) => { res.resume(); res.on('end', () => resolve(performance.now() - start)); }).on('error', reject);
});
(async () => {
  const times = urls.map(() => []);
  for (let i = 0; i < n; i++) for (let u = 0; u < urls.length; u++) { times[u].push(await one(urls[u])); await new Promise((r) => setTimeout(r, 20)); }
  process.stdout.write(JSON.stringify(times.map((t) => t.sort((a, b) => a - b))));
})();`;
const probe = (n: number) =>
  new Promise<[number[], number[]]>((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', PROBER, String(n), url, controlUrl], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as [number[], number[]]) : reject(new Error(`prober exited with ${code}`))));
  });
const summary = (t: number[]) => ({
  median: t[Math.floor(t.length / 2)] ?? Number.NaN,
  p95: t[Math.floor(t.length * 0.95)] ?? Number.NaN,
  p99: t[Math.floor(t.length * 0.99)] ?? Number.NaN,
  max: t.at(-1) ?? Number.NaN,
});
const fmt = (s: { median: number; p95: number; p99: number; max: number }) =>
  `median ${s.median.toFixed(1)} ms, p95 ${s.p95.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms, max ${s.max.toFixed(1)} ms`;
interface EventLoop {
  delayP50Ms: number;
  delayP99Ms: number;
  delayMaxMs: number;
  threadRunMs: number | null;
  threadWaitMs: number | null;
}
const eventLoop = async () => ((await (await fetch(`${url}/health`)).json()) as { eventLoop: EventLoop }).eventLoop;
const peakMb = () => Number(/VmHWM:\s+(\d+) kB/u.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))?.[1] ?? Number.NaN) / 1024;

try {
  await probe(5);
  const [idleTimes, idleControlTimes] = await probe(PROBES);
  const idle = summary(idleTimes);
  const sentence = `${SIM_STEP_CUES[A]!.sentences[0]!} `;
  const prose = (n: number) => sentence.repeat(Math.ceil(n / sentence.length)).slice(0, n);
  const perBody = Math.max(1, Math.floor((8 * 1024 * 1024 - 100) / (CHARS + 40)));
  // A labelled response: 128 tagged steps filling CHARS; `TAGxxxxxxxx` is replaced per request (below).
  const tagged = () => {
    const frame = '<think></think><answer>TAG00000000</answer>'.length;
    const stepFrame = '<step_128></step_128>'.length;
    const stepChars = Math.floor((CHARS - frame) / 128) - stepFrame;
    const steps = Array.from({ length: 128 }, (_, i) => `<step_${i + 1}>${prose(stepChars)}</step_${i + 1}>`).join('');
    return `<think>${steps}</think><answer>TAG00000000</answer>`;
  };
  const response = LABELLED ? tagged() : prose(CHARS - 10);
  // Encoded once: re-encoding 8 MiB per request would only slow this client.
  const body = Buffer.from(
    JSON.stringify({ items: Array.from({ length: perBody }, (_, i) => ({ question_id: 'q1', response: `${i} ${response}`.slice(0, CHARS) })) }),
  );
  // Labelled shape: a copy per request with its own number in every response, so nothing is served from the labeler's cache.
  const tagAt: number[] = [];
  for (let at = body.indexOf('TAG00000000'); LABELLED && at >= 0; at = body.indexOf('TAG00000000', at + 1)) tagAt.push(at + 3);
  let sent = 0;
  const bodyFor = () => {
    if (!LABELLED) return body;
    const copy = Buffer.from(body);
    const tag = String(sent++).padStart(8, '0');
    for (const at of tagAt) copy.write(tag, at, 'latin1');
    return copy;
  };
  // BENCH_CLIENT_NICE=n: this load client runs at nice n (a trainer on its own machine, or below
  // the server on a shared one); default: the same priority as the server.
  if (process.env.BENCH_CLIENT_NICE) setPriority(Number(process.env.BENCH_CLIENT_NICE));
  const loopBefore = await eventLoop();
  const loadedFromUs = Number(process.hrtime.bigint() / 1000n);
  let stop = false;
  let rounds = 0;
  const statuses: Record<string, number> = {};
  const load = (async () => {
    while (!stop && rounds < ROUNDS) {
      await Promise.all(
        Array.from({ length: 50 }, async () => {
          // A request that got no complete HTTP answer is counted by its cause (e.g. error UND_ERR_SOCKET).
          let key: string;
          let status = 0;
          try {
            const r = await fetch(`${url}/score`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bodyFor() });
            status = r.status;
            await r.text();
            key = String(r.status);
          } catch (error) {
            const cause = (error as Error).cause as { code?: string; message?: string } | undefined;
            key = `error${status === 0 ? '' : ` after a ${status} header`} ${cause?.code ?? cause?.message ?? (error as Error).message}`;
          }
          statuses[key] = (statuses[key] ?? 0) + 1;
        }),
      );
      rounds++;
    }
  })();
  let loadDone = false;
  void load.then(() => {
    loadDone = true;
  });
  // With BENCH_ROUNDS, probing goes on (PROBES at a time) until the last round is answered.
  const loadedTimes: number[] = [];
  const loadedControlTimes: number[] = [];
  do {
    const [times, controlTimes] = await probe(PROBES);
    loadedTimes.push(...times);
    loadedControlTimes.push(...controlTimes);
  } while (Number.isFinite(ROUNDS) && !loadDone);
  loadedTimes.sort((a, b) => a - b);
  loadedControlTimes.sort((a, b) => a - b);
  const loaded = summary(loadedTimes);
  const loopAfter = await eventLoop();
  const loadedToUs = Number(process.hrtime.bigint() / 1000n);
  stop = true;
  await load;
  const answers = Object.entries(statuses)
    .map(([status, n]) => `${n}× ${status}`)
    .join(', ');
  console.log(
    `body: ${(body.length / 1024 / 1024).toFixed(2)} MiB, ${perBody} responses of ${CHARS.toLocaleString('en')} characters${LABELLED ? ', 128 tagged steps each, distinct per request' : ''}`,
  );
  console.log(`load average (1, 5, 15 min): at start ${loadAtStart}, at the end ${loadAverage()}`);
  console.log(`/health, idle server (baseline):            ${fmt(idle)}`);
  console.log(`  bare control server meanwhile:             ${fmt(summary(idleControlTimes))}`);
  console.log(`/health, 50 concurrent maximal requests:     ${fmt(loaded)}  (${rounds} rounds: ${answers})`);
  console.log(`  bare control server meanwhile:             ${fmt(summary(loadedControlTimes))}`);
  const over = (t: number[]) => t.filter((x) => x >= 100).length;
  console.log(
    `probes ≥ 100 ms under load: reward server ${over(loadedTimes)}/${loadedTimes.length}, control ${over(loadedControlTimes)}/${loadedControlTimes.length}`,
  );
  if (loopBefore.threadRunMs !== null && loopAfter.threadRunMs !== null && loopBefore.threadWaitMs !== null && loopAfter.threadWaitMs !== null) {
    console.log(
      `server thread during the loaded phase: ran ${loopAfter.threadRunMs - loopBefore.threadRunMs} ms, waited for a core ${loopAfter.threadWaitMs - loopBefore.threadWaitMs} ms (Linux schedstat)`,
    );
  }
  console.log(
    `server event-loop delay (since listening, monitorEventLoopDelay): p50 ${loopAfter.delayP50Ms} ms, p99 ${loopAfter.delayP99Ms} ms, max ${loopAfter.delayMaxMs} ms`,
  );
  interface LateTurn {
    startUs: number;
    endUs: number;
    lateMs: number;
    ranMs: number;
    waitedMs: number;
  }
  const probeLines = (existsSync(lateTurnsFile) ? readFileSync(lateTurnsFile, 'utf8') : '')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as LateTurn | { gc: string; startUs: number; ms: number })
    .filter((line) => line.startUs >= loadedFromUs && line.startUs <= loadedToUs);
  const lateTurns = probeLines.filter((line): line is LateTurn => !('gc' in line));
  const pauses = probeLines.filter((line): line is { gc: string; startUs: number; ms: number } => 'gc' in line);
  const worst = (key: 'lateMs' | 'ranMs') => Math.max(0, ...lateTurns.map((turn) => turn[key]));
  console.log(
    `server turns > 20 ms late in the loaded phase (5 ms timer): ${lateTurns.length}; latest ${worst('lateMs')} ms; most run in one ${worst('ranMs')} ms; turns it ran > 20 ms: ${lateTurns.filter((turn) => turn.ranMs > 20).length} (${lateTurnsFile})`,
  );
  const byKind = new Map<string, number[]>();
  for (const pause of pauses) byKind.set(pause.gc, [...(byKind.get(pause.gc) ?? []), pause.ms]);
  console.log(
    `server GC pauses > 5 ms in the loaded phase: ${
      [...byKind.entries()]
        .map(([kind, ms]) => `${ms.length} ${kind} (max ${Math.max(...ms)} ms, total ${ms.reduce((a, b) => a + b, 0).toFixed(0)} ms)`)
        .join(', ') || 'none'
    }`,
  );
  console.log(`server peak memory: ${peakMb().toFixed(0)} MB; server still up: ${server.exitCode === null}`);
  console.log(`loaded max / 100 ms target: ${(loaded.max / 100).toFixed(2)}; loaded median / idle median: ${(loaded.median / idle.median).toFixed(2)}`);
} finally {
  server.kill('SIGTERM');
  control.kill('SIGTERM');
}
