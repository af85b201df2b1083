// The reward server refuses a request it has no room for (503) or whose declared body is too large
// (413) as soon as its headers arrive, without reading its body (issue #40: reading and dropping
// the refused 8 MiB uploads kept the server's thread busy while /health waited), and the client —
// a raw socket, Node's http client, fetch — still receives the answer rather than a broken pipe.
// What is asserted is deterministic: the answer, the connection ended without the body being sent
// or read, the server still up. How fast /health answers is bench/reward-health.bench.ts's.
import { mkdtempSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openExperimentRun } from '../../src/experiment/runtime.js';
import { loadBuiltinOntology } from '../../src/memory-drift/ontology.js';
import { SIM_STEP_CUES } from '../../src/memory-drift/sim.js';
import '../../src/memory-drift/mitigation/index.js';
import { CachedLabeler } from '../../src/memory-drift/mitigation/reward-labeler.js';
import { type RunningRewardServer, startRewardServer } from '../../src/memory-drift/mitigation/reward-server.js';
import { parseReferences } from '../../src/memory-drift/mitigation/reward.js';

const A = 'Practical/Efficiency and resource optimization';
const C = 'Social/Social equity and justice';
const MAX_BODY = 8 * 1024 * 1024;
const BODY = JSON.stringify({
  items: [{ question_id: 'q1', response: `<think><step_1>${SIM_STEP_CUES[A]!.sentences[0]!}</step_1></think><answer>ok</answer>` }],
});

let server: RunningRewardServer;
let port: number;
/** Bytes the server read from each connection, recorded when it closes (in order of closing). */
const readOnClose: number[] = [];

/** Sends raw bytes; resolves with everything received once the server ends the connection. */
function rawExchange(head: string, timeoutMs = 20_000): Promise<{ text: string; ended: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, ended: false });
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    socket.on('end', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, ended: true });
    });
    socket.on('error', reject);
    socket.write(head);
  });
}

const head = (length: number) =>
  `POST /score HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nConnection: keep-alive\r\n\r\n`;

describe('reward server: refusals are answered before the body is read', { timeout: 120_000 }, () => {
  let holder: Socket;
  let holderAnswer: Promise<string>;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-reward-refusal-'));
    const run = await openExperimentRun(join(dir, 'reward.db'), 'memory-reward', { test: true }, 42);
    server = await startRewardServer({
      references: parseReferences(JSON.stringify({ question_id: 'q1', symbols: [A, C] })),
      labeler: new CachedLabeler({ store: run.store, runId: run.runId, labeler: 'sim:labeler', ontology: loadBuiltinOntology() }),
      weights: { format: 1, dtw: 1, sri: 0 },
      port: 0,
      maxBodyBytes: MAX_BODY,
      maxConcurrent: 1,
    });
    port = server.port;
    server.server.on('connection', (socket: Socket) => socket.once('close', () => readOnClose.push(socket.bytesRead)));
    // One request admitted and held open (half its body sent): the server is then full.
    holder = connect(port, '127.0.0.1');
    holderAnswer = new Promise((resolve) => {
      let text = '';
      holder.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
        if (/\r\n\r\n[\s\S]*\}$/u.test(text)) resolve(text);
      });
    });
    holder.write(head(Buffer.byteLength(BODY)) + BODY.slice(0, 20));
    const start = Date.now();
    while (server.stats.requests < 1 && Date.now() - start < 30_000) await new Promise((resolve) => setTimeout(resolve, 20));
  }, 60_000);
  afterAll(async () => {
    holder?.destroy();
    await server?.close();
  });

  it('503 with Retry-After and Connection: close to a request whose 8 MiB body was never sent; the server ends the connection', async () => {
    const answer = await rawExchange(head(MAX_BODY));
    // Draining the body would have waited for it (the old keep-alive 503): the connection is ended instead.
    expect(answer.ended).toBe(true);
    expect(answer.text).toMatch(/^HTTP\/1\.1 503 /u);
    expect(answer.text).toMatch(/\r\nretry-after: 1\r\n/iu);
    expect(answer.text).toMatch(/\r\nconnection: close\r\n/iu);
    expect(answer.text).toMatch(/"error":"busy: 1 requests are being scored/u);
  });

  it('413 to a declared body over the limit, also without waiting for it', async () => {
    const answer = await rawExchange(head(MAX_BODY + 1));
    expect(answer.ended).toBe(true);
    expect(answer.text).toMatch(/^HTTP\/1\.1 413 /u);
    expect(answer.text).toMatch(/body larger than 8388608 bytes/u);
  });

  it("Node's http client writing a whole 8 MiB body gets the 503; the server reads only the first bytes of it", async () => {
    const body = Buffer.alloc(MAX_BODY, 0x20);
    const before = readOnClose.length;
    const outcome = await new Promise<{ status: number; retryAfter: string | undefined; bodyText: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/score',
          agent: false,
          headers: { 'content-type': 'application/json', 'content-length': body.length },
        },
        (res) => {
          let bodyText = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            bodyText += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], bodyText }));
        },
      );
      // The unsent rest of the body fails with EPIPE / ECONNRESET once the connection is cut;
      // that is after the answer, which is what this test is about.
      req.on('error', (error) => reject(error));
      req.end(body);
    }).catch((error: NodeJS.ErrnoException) => ({ status: -1, retryAfter: undefined, bodyText: `${error.code}` }));
    expect(outcome.status).toBe(503);
    expect(outcome.retryAfter).toBe('1');
    expect(JSON.parse(outcome.bodyText)).toMatchObject({ error: expect.stringMatching(/^busy/u) });
    // The server cuts the connection within its linger time; it read at most a few socket reads of the body.
    const start = Date.now();
    while (readOnClose.length === before && Date.now() - start < 15_000) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(readOnClose.length).toBeGreaterThan(before);
    expect(readOnClose.at(-1)).toBeLessThan(1024 * 1024);
  });

  it('fetch uploading 8 MiB gets the 503 too, five at once', async () => {
    const body = Buffer.alloc(MAX_BODY, 0x20);
    const statuses = await Promise.all(
      Array.from({ length: 5 }, async () => {
        try {
          const response = await fetch(`http://127.0.0.1:${port}/score`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
          await response.text();
          return response.status;
        } catch (error) {
          return `${((error as Error).cause as { code?: string } | undefined)?.code ?? (error as Error).message}`;
        }
      }),
    );
    expect(statuses).toEqual([503, 503, 503, 503, 503]);
  });

  it('the server is still up, and the admitted request is scored once its body is complete', async () => {
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    expect(health.status).toBe(200);
    holder.write(BODY.slice(20));
    const answer = await holderAnswer;
    expect(answer).toMatch(/^HTTP\/1\.1 200 /u);
    expect(answer).toMatch(/"reward":/u);
    expect(server.stats.busy).toBeGreaterThanOrEqual(7);
  });
});
