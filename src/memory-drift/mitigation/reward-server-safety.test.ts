// The reward server's HTTP side under hostile or heavy input: each test failed before
// the server was bounded and protected like the viewer.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openExperimentRun } from '../../experiment/runtime.js';
import { countTokens } from '../../models/token-count.js';
import { loadBuiltinOntology } from '../ontology.js';
import { SIM_STEP_CUES } from '../sim.js';
import './index.js';
import { CachedLabeler } from './reward-labeler.js';
import { type RewardServerOptions, type RunningRewardServer, startRewardServer } from './reward-server.js';
import { parseReferences } from './reward.js';

const A = 'Practical/Efficiency and resource optimization';
const C = 'Social/Social equity and justice';
const REFERENCES = JSON.stringify({ question_id: 'q1', symbols: [A, C] });
const FULL = `<think><step_1>${SIM_STEP_CUES[A]!.sentences[0]!}</step_1></think><answer>ok</answer>`;

function raw(
  url: string,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: target.hostname, port: target.port, method: options.method ?? 'GET', path: options.path, headers: options.headers ?? {}, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

async function newLabeler(): Promise<CachedLabeler> {
  const dir = mkdtempSync(join(tmpdir(), 'echolens-reward-safety-'));
  const run = await openExperimentRun(join(dir, 'reward.db'), 'memory-reward', { test: true }, 42);
  return new CachedLabeler({ store: run.store, runId: run.runId, labeler: 'sim:labeler', ontology: loadBuiltinOntology() });
}

/** A reward server on a free local port over the test references (DTW and format weights), with the labeler and options given. */
async function startServer(options: Partial<RewardServerOptions> = {}): Promise<RunningRewardServer> {
  return startRewardServer({
    references: parseReferences(REFERENCES),
    labeler: options.labeler ?? (await newLabeler()),
    weights: { format: 1, dtw: 1, sri: 0 },
    port: 0,
    ...options,
  });
}

describe('reward server: protected like the viewer', () => {
  let server: RunningRewardServer;
  beforeAll(async () => {
    server = await startServer({ maxBodyBytes: 64 * 1024, maxItems: 8 });
  });
  afterAll(async () => {
    await server?.close();
  });
  const body = JSON.stringify({ items: [{ question_id: 'q1', response: FULL }] });

  it('binds to loopback by default and serves a local trainer', async () => {
    expect(server.loopback).toBe(true);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:/);
    const ok = await raw(server.url, { method: 'POST', path: '/score', headers: { 'content-type': 'application/json' }, body });
    expect(ok.status).toBe(200);
  });

  it('refuses a cross-site POST (Origin or Sec-Fetch-Site) and a foreign Host with 403', async () => {
    const evilOrigin = await raw(server.url, {
      method: 'POST',
      path: '/score',
      headers: { 'content-type': 'text/plain', origin: 'https://evil.example' },
      body,
    });
    expect(evilOrigin.status).toBe(403);
    const crossSite = await raw(server.url, {
      method: 'POST',
      path: '/score',
      headers: { 'content-type': 'application/json', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' },
      body,
    });
    expect(crossSite.status).toBe(403);
    const rebound = await raw(server.url, {
      method: 'POST',
      path: '/verl',
      headers: { host: `attacker.example:${server.port}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(rebound.status).toBe(403);
    expect(server.stats.scored).toBe(1); // only the local request of the test above
  });

  it('bounds bodies and item counts (413)', async () => {
    const big = await raw(server.url, {
      method: 'POST',
      path: '/score',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items: [{ question_id: 'q1', response: 'x'.repeat(100_000) }] }),
    });
    expect(big.status).toBe(413);
    const many = await raw(server.url, {
      method: 'POST',
      path: '/score',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items: Array.from({ length: 9 }, () => ({ question_id: 'q1', response: 'a' })) }),
    });
    expect(many.status).toBe(413);
    expect(JSON.parse(many.body).error).toMatch(/at most 8/);
  });
});

describe('reward server: token, timeouts, heavy responses', () => {
  it('with a token, a POST without it gets 403 and one with it is scored', async () => {
    const server = await startServer({ token: 's3cret-token-value' });
    try {
      const body = JSON.stringify({ items: [{ question_id: 'q1', response: FULL }] });
      expect((await raw(server.url, { method: 'POST', path: '/score', headers: { 'content-type': 'application/json' }, body })).status).toBe(403);
      expect(
        (await raw(server.url, { method: 'POST', path: '/score', headers: { 'content-type': 'application/json', authorization: 'Bearer wrong' }, body }))
          .status,
      ).toBe(403);
      expect(
        (
          await raw(server.url, {
            method: 'POST',
            path: '/score',
            headers: { 'content-type': 'application/json', authorization: 'Bearer s3cret-token-value' },
            body,
          })
        ).status,
      ).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('a stuck labeler gets a 503 after the request timeout, and close() ends anyway', async () => {
    const stuck = { labelAll: () => new Promise(() => undefined), stats: {} } as unknown as CachedLabeler;
    const server = await startServer({ labeler: stuck, requestTimeoutMs: 1000, closeGraceMs: 200 });
    const answer = await raw(server.url, {
      method: 'POST',
      path: '/score',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items: [{ question_id: 'q1', response: FULL }] }),
    });
    expect(answer.status).toBe(503);
    await server.close();
  });

  it('token counting is linear: 300k characters without whitespace are counted', () => {
    expect(countTokens('x'.repeat(300_000))).toBeGreaterThan(10_000);
    expect(countTokens('hello world, twice')).toBe(countTokens('hello world,') + countTokens(' twice'));
  });

  it('/health answers within 2 s while a 400k-character response without whitespace is scored', async () => {
    const server = await startServer();
    try {
      const response = `<think><step_1>${'x'.repeat(400_000)}</step_1></think><answer>ok</answer>`;
      const scoring = raw(server.url, {
        method: 'POST',
        path: '/score',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ items: [{ question_id: 'q1', response }] }),
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      const started = Date.now();
      const health = await raw(server.url, { path: '/health' });
      const healthMs = Date.now() - started;
      expect(health.status).toBe(200);
      expect(healthMs).toBeLessThan(2000);
      const scored = await scoring;
      expect(scored.status).toBe(200);
      expect(JSON.parse(scored.body).results).toHaveLength(1);
    } finally {
      await server.close();
    }
  }, 30_000);

  it('a maximal labelled request: /health asked while it is scored is answered before it; 12 at once are each served or refused', async () => {
    // 8 responses of about 1,000,000 characters, 128 tagged steps each: every response is labelled
    // (the most steps labelled) and scored, the heaviest work a request can bring.
    const stepText = `${SIM_STEP_CUES[A]!.sentences[0]!} `.repeat(80).slice(0, 7_700);
    const maximal = (tag: string) =>
      `<think>${Array.from({ length: 128 }, (_, i) => `<step_${i + 1}>${stepText}</step_${i + 1}>`).join('')}</think><answer>${tag}</answer>`;
    const body = (tag: string) => JSON.stringify({ items: Array.from({ length: 8 }, (_, i) => ({ question_id: 'q1', response: maximal(`${tag}-${i}`) })) });
    const labeler = await newLabeler();
    const server = await startRewardServer({
      references: parseReferences(REFERENCES),
      labeler,
      weights: { format: 1, dtw: 1, sri: 0 },
      port: 0,
      maxResponseChars: 1_000_000,
      maxConcurrent: 2,
    });
    try {
      let scored = false;
      const scoring = raw(server.url, { method: 'POST', path: '/score', headers: { 'content-type': 'application/json' }, body: body('first') }).then((r) => {
        scored = true;
        return r;
      });
      // Wait until the request is being labelled (parsed and segmented in a worker by then).
      for (;;) {
        const health = JSON.parse((await raw(server.url, { path: '/health' })).body) as { cache: { lookups: number } };
        if (health.cache.lookups > 0 || scored) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(scored).toBe(false);
      const health = await raw(server.url, { path: '/health' });
      expect(health.status).toBe(200);
      expect(scored).toBe(false);
      const first = await scoring;
      expect(first.status).toBe(200);
      const results = JSON.parse(first.body).results as { reward: number | null; steps?: number }[];
      expect(results).toHaveLength(8);
      expect(results.every((r) => r.reward !== null && r.steps === 128)).toBe(true);

      const statuses = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          raw(server.url, { method: 'POST', path: '/score', headers: { 'content-type': 'application/json' }, body: body(`load-${i}`) }).then(
            (r) => r.status,
            // A refused upload may also end in EPIPE for the unsent rest at Node's http client after its 503 (refuseUnread).
            (error: NodeJS.ErrnoException) => error.code ?? 'error',
          ),
        ),
      );
      expect(statuses.every((s) => s === 200 || s === 503 || s === 'EPIPE')).toBe(true);
      expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
      const after = await raw(server.url, { path: '/health' });
      expect(after.status).toBe(200);
      expect(JSON.parse(after.body).stats.busy).toBe(statuses.filter((s) => s !== 200).length);
    } finally {
      await server.close();
    }
  }, 300_000);

  it('the CLI stops promptly on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-reward-cli-'));
    writeFileSync(join(dir, 'refs.jsonl'), `${REFERENCES}\n`);
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
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /reward server on (\S+)/.exec(out);
        if (match) resolve(match[1]!);
      });
      child.on('exit', () => reject(new Error(`exited early: ${out}`)));
    });
    // A keep-alive client holds a connection open; SIGTERM must still end the process.
    await raw(url, { path: '/health', headers: { connection: 'keep-alive' } });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const sent = Date.now();
    child.kill('SIGTERM');
    const code = await exited;
    expect(code).toBe(0);
    expect(Date.now() - sent).toBeLessThan(10_000);
  }, 30_000);
});
