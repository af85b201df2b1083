// The reward server under the largest requests it allows (issue #40): one response just under the
// length cap, one far over it, and 50 concurrent maximal requests. Every request is answered (200,
// or 413 / 503 when refused), the process stays up, /health keeps answering, and its peak memory
// stays bounded. (How fast /health answers meanwhile is measured by bench/reward-health.bench.ts.)
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_FROM_SOURCE } from '../../src/cli/testing/spawn-cli.js';
import { packageRoot } from '../../src/core/version.js';
import { SIM_STEP_CUES } from '../../src/memory-drift/sim.js';

const A = 'Practical/Efficiency and resource optimization';
const C = 'Social/Social equity and justice';
const MAX_CHARS = 200_000;
const MAX_BODY = 8 * 1024 * 1024;
const sentence = `${SIM_STEP_CUES[A]!.sentences[0]!} `;
/** Ordinary prose (sentences, no tags): the slowest case to segment. */
const prose = (chars: number) => sentence.repeat(Math.ceil(chars / sentence.length)).slice(0, chars);

let child: ChildProcess;
let url: string;

/** Peak resident memory of the server process (Linux /proc), in MB. */
const peakMb = () => Number(/VmHWM:\s+(\d+) kB/u.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? Number.NaN) / 1024;

/** GET /health on a fresh connection (as a health checker does: no pooled socket shared with the uploads). */
function healthStatus(): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpGet(`${url}/health`, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
}

async function post(path: string, body: string): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await response.text();
  return { status: response.status, json: text === '' ? null : JSON.parse(text) };
}

describe('reward server: bounded work per request', { timeout: 600_000 }, () => {
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-reward-load-'));
    writeFileSync(join(dir, 'refs.jsonl'), `${JSON.stringify({ question_id: 'q1', symbols: [A, C] })}\n`);
    child = spawn(
      process.execPath,
      [
        ...CLI_FROM_SOURCE,
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
      { cwd: packageRoot(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /reward server on (\S+)/u.exec(out);
        if (match) resolve(match[1] as string);
      });
      child.on('exit', (code) => reject(new Error(`server exited with ${code}`)));
    });
    // The CLI starts from source (tsx): on a loaded shared machine that can take more than the default 30 s.
  }, 180_000);
  afterAll(() => {
    child.kill('SIGTERM');
  });

  it('a response just under the length cap is answered (an item error for its thousands of steps), one over it is refused unscored', async () => {
    const near = await post('/score', JSON.stringify({ items: [{ question_id: 'q1', response: prose(MAX_CHARS - 10) }] }));
    expect(near.status).toBe(200);
    const [item] = (near.json as { results: Array<{ reward: number | null; error?: string }> }).results;
    expect(item?.reward).toBeNull();
    expect(item?.error).toMatch(/steps; at most 128 are labelled/u);
    const over = await post('/score', JSON.stringify({ items: [{ question_id: 'q1', response: prose(990_000) }] }));
    expect(over.status).toBe(200);
    expect((over.json as { results: Array<{ error?: string }> }).results[0]?.error).toMatch(/longer than 200000 characters/u);
    // A response of ordinary length is still scored.
    const ok = await post(
      '/score',
      JSON.stringify({ items: [{ question_id: 'q1', response: `<think><step_1>${sentence}</step_1></think><answer>ok</answer>` }] }),
    );
    expect((ok.json as { results: Array<{ reward: number | null }> }).results[0]?.reward).not.toBeNull();
  });

  it('50 concurrent maximal requests are each served or refused (413/503), never dropped; the server stays up with bounded memory', async () => {
    // As many maximal responses as fit in the largest body.
    const item = { question_id: 'q1', response: prose(MAX_CHARS - 10) };
    const perBody = Math.floor(MAX_BODY / (JSON.stringify(item).length + 1)) - 1;
    const body = JSON.stringify({ items: Array.from({ length: perBody }, (_, i) => ({ ...item, response: `${i} ${item.response}`.slice(0, MAX_CHARS) })) });
    expect(body.length).toBeLessThanOrEqual(MAX_BODY);
    let healthAnswers = 0;
    let healthFailures = 0;
    let done = false;
    const probe = (async () => {
      while (!done) {
        try {
          const status = await healthStatus();
          if (status === 200) healthAnswers++;
          else {
            healthFailures++;
            console.log(`health status ${status}`);
          }
        } catch (error) {
          healthFailures++;
          console.log(`health failed: ${(error as Error).message}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const results = await Promise.all(Array.from({ length: 50 }, () => post('/score', body).catch((error: Error) => ({ status: -1, json: error.message }))));
    done = true;
    await probe;
    const statuses = results.map((r) => r.status);
    expect(statuses.every((s) => s === 200 || s === 413 || s === 503)).toBe(true);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(healthAnswers).toBeGreaterThan(0);
    expect(healthFailures).toBe(0);
    expect(child.exitCode).toBeNull();
    const after = await fetch(`${url}/health`);
    expect(after.status).toBe(200);
    // /health reports how late the server's event loop ran and how long its thread waited for a
    // core (Linux); the figures themselves belong to bench/reward-health.bench.ts, not to a test.
    const { eventLoop } = (await after.json()) as {
      eventLoop: { delayP50Ms: number; delayP99Ms: number; delayMaxMs: number; threadRunMs: number | null; threadWaitMs: number | null };
    };
    expect(eventLoop.delayMaxMs).toBeGreaterThanOrEqual(eventLoop.delayP99Ms);
    expect(eventLoop.delayP99Ms).toBeGreaterThanOrEqual(eventLoop.delayP50Ms);
    if (process.platform === 'linux') expect(eventLoop.threadRunMs).toBeGreaterThan(0);
    console.log(`server event loop after the load: ${JSON.stringify(eventLoop)}`);
    // Bounded: at most 4 bodies of 8 MiB are held at once.
    expect(peakMb()).toBeLessThan(1024);
    console.log(
      `50 maximal requests (${perBody} × ${MAX_CHARS} chars): ${statuses.filter((s) => s === 200).length} served, ${statuses.filter((s) => s === 503).length} refused 503; peak server memory ${peakMb().toFixed(0)} MB; /health answered ${healthAnswers} times meanwhile`,
    );
  });
});
