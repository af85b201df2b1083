/**
 * /health latency of the reward server while it scores the largest requests it allows
 * (issue #40: < 100 ms). The server runs as its own process (the CLI, sim:labeler); one client
 * keeps sending maximal /score requests (an 8 MiB body of 200,000-character prose responses)
 * while a prober asks /health every 20 ms on fresh connections.
 *   Baseline, measured in the same command: /health latency of the idle server.
 * Prints median, p95 and max of both and the ratio of the loaded max to 100 ms.
 * BENCH_SMOKE=1: 10 probes each.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SIM_STEP_CUES } from '../src/memory-drift/sim.js';

const smoke = process.env.BENCH_SMOKE === '1' || process.env.BENCH_SMOKE === 'true';
const PROBES = smoke ? 10 : 150;
const A = 'Practical/Efficiency and resource optimization';
const C = 'Social/Social equity and justice';
const dir = mkdtempSync(join(tmpdir(), 'echolens-reward-health-'));
writeFileSync(join(dir, 'refs.jsonl'), `${JSON.stringify({ question_id: 'q1', symbols: [A, C] })}\n`);
const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    'src/cli/main.ts',
    'memory',
    'reward-server',
    '--references',
    join(dir, 'refs.jsonl'),
    '--labeler',
    'sim:labeler',
    '--port',
    '0',
    '--db',
    join(dir, 'r.db'),
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const url = await new Promise<string>((resolve) => {
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    const match = /reward server on (\S+)/u.exec(out);
    if (match) resolve(match[1] as string);
  });
});

const health = () =>
  new Promise<number>((resolve, reject) => {
    const start = performance.now();
    const req = get(`${url}/health`, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(performance.now() - start));
    });
    req.on('error', reject);
  });
const probe = async (n: number) => {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    times.push(await health());
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return times.sort((a, b) => a - b);
};
const summary = (t: number[]) => ({
  median: t[Math.floor(t.length / 2)] ?? Number.NaN,
  p95: t[Math.floor(t.length * 0.95)] ?? Number.NaN,
  max: t.at(-1) ?? Number.NaN,
});
const fmt = (s: { median: number; p95: number; max: number }) => `median ${s.median.toFixed(1)} ms, p95 ${s.p95.toFixed(1)} ms, max ${s.max.toFixed(1)} ms`;

try {
  await probe(5);
  const idle = summary(await probe(PROBES));
  const sentence = `${SIM_STEP_CUES[A]!.sentences[0]!} `;
  const response = sentence.repeat(Math.ceil(200_000 / sentence.length)).slice(0, 199_990);
  const perBody = Math.floor((8 * 1024 * 1024) / (response.length + 40)) - 1;
  // Encoded once: the probes share this process, so re-encoding 8 MiB per request would delay them here, not in the server.
  const body = Buffer.from(
    JSON.stringify({ items: Array.from({ length: perBody }, (_, i) => ({ question_id: 'q1', response: `${i} ${response}`.slice(0, 200_000) })) }),
  );
  let stop = false;
  let scored = 0;
  const load = (async () => {
    while (!stop) {
      const r = await fetch(`${url}/score`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await r.text();
      scored++;
    }
  })();
  const loaded = summary(await probe(PROBES));
  stop = true;
  await load;
  console.log(`/health, idle server (baseline):            ${fmt(idle)}`);
  console.log(`/health, while scoring maximal requests:     ${fmt(loaded)}  (${scored} requests of ${perBody} × 200,000 chars scored meanwhile)`);
  console.log(`loaded max / 100 ms target: ${(loaded.max / 100).toFixed(2)}; loaded median / idle median: ${(loaded.median / idle.median).toFixed(2)}`);
} finally {
  child.kill('SIGTERM');
}
