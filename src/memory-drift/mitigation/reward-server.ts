import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isEcholensError } from '../../core/errors.js';
import { nextTurn } from '../../core/next-turn.js';
import { allowedHosts, checkOrigin, isLoopbackHost, tokenMatches } from '../../report/viewer/security.js';
import type { CachedLabeler } from './reward-labeler.js';
import { type BodyUpload, RewardWorkerPool } from './reward-pool.js';
import { BadRequest, type KeyedItem, type RequestItem, type RewardRoute, prepareItem, type TextComponents } from './reward-request.js';
import { threadSchedule } from './thread-priority.js';
import { checkRewardWeights, type ReferenceMap, type RewardComponents, type RewardWeights, scoreLabelledResponse, worstCaseReward } from './reward.js';

/** One scored response, as returned for logging. */
export type ScoredItem =
  | {
      /** null when the verl label carried the reference itself and no question id was given. */
      question_id: string | null;
      reward: number;
      components: Omit<RewardComponents, 'reward'>;
      labels: string[];
      steps: number;
    }
  | { question_id: string | null; error: string; reward: null; components: TextComponents | null };

export interface RewardServerOptions {
  references: ReferenceMap;
  labeler: CachedLabeler;
  weights: RewardWeights;
  host?: string;
  port?: number;
  /** Largest request body accepted (default 8 MiB); a larger one is refused with 413 as soon as it passes the limit. */
  maxBodyBytes?: number;
  /** Most items in one request (default 4,096). */
  maxItems?: number;
  /** Longest response scored, in characters (default 200,000); a longer one is an item error (checked before any scoring). */
  maxResponseChars?: number;
  /**
   * Scoring requests handled at once (default 4, from receiving the body to the answer); one more
   * is refused at once with 503 and Retry-After, its body never read (refuseUnread), so memory stays bounded
   * (about maxConcurrent × maxBodyBytes) and /health stays responsive under any load. They are
   * parsed and scored by at most one worker thread per core; the others wait their turn unread.
   */
  maxConcurrent?: number;
  /** Time to receive a whole request, and to answer it, in ms (default 120,000 each); then 408 / 503. */
  requestTimeoutMs?: number;
  /** When set, every POST must carry it (`Authorization: Bearer <token>` or `x-echolens-token`). */
  token?: string;
  /** Extra `host:port` values accepted in the Host header (a name trainers use to reach a non-loopback bind). */
  allowHosts?: readonly string[];
  /** How long `close()` lets requests in flight finish before cutting connections (default 2,000 ms). */
  closeGraceMs?: number;
}

export interface RunningRewardServer {
  url: string;
  port: number;
  server: Server;
  stats: { requests: number; scored: number; itemErrors: number; badRequests: number; busy: number };
  /** False when bound to a non-loopback interface (then a token should be set). */
  loopback: boolean;
  close(): Promise<void>;
}

/**
 * Streams the body into a worker (RewardWorkerPool.open) chunk by chunk as it is received: this
 * thread never allocates, copies or parses a body-sized buffer (copying 8 MiB at once blocked it
 * for 30–70 ms on a loaded machine). Past the limit it refuses with 413 at once and drops the rest.
 */
function streamBody(request: IncomingMessage, limit: number, upload: BodyUpload): Promise<void> {
  // (A declared length over the limit was refused before the request was admitted.)
  return new Promise((resolve, reject) => {
    let size = 0;
    let tooLarge = false;
    request.on('data', (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size > limit) {
        // Answer now and stop forwarding: the rest of the body is not read (refuseUnread).
        tooLarge = true;
        upload.abort();
        reject(new BadRequest(413, `body larger than ${limit} bytes`));
      } else {
        upload.write(chunk);
        // One chunk per upload per turn: one poll for I/O can deliver megabytes from several uploads
        // at once, and copying and posting them all held this thread for tens of ms (a profile at load 5).
        request.pause();
        void nextTurn().then(() => {
          if (!tooLarge) request.resume();
        });
      }
    });
    request.on('end', () => {
      if (!tooLarge) resolve();
    });
    request.on('error', reject);
  });
}

/** How long a refused connection stays open, unread, for its client to read the 503 (then it is cut). */
export const REFUSED_LINGER_MS = 5_000;

/**
 * Refuses a request whose body is not (wholly) read, e.g. 503 + Retry-After as soon as its headers
 * arrive when the server is busy, or 413, without reading the rest of its body: the
 * answer is written whole (Content-Length, `Connection: close`), this side of the connection is
 * closed, and the connection is cut once the client has closed it or after REFUSED_LINGER_MS. The
 * body is never read: Node stops reading the socket once its small buffer is full (TCP
 * backpressure), so a refused 8 MiB upload costs this thread one 64 KiB read, not 8 MiB. (Reading
 * and dropping the bodies of 46 refused 8 MiB uploads held this thread while the workers held the
 * cores; ending the response normally instead makes Node read the rest or cut the connection at
 * once, and a client still uploading then gets EPIPE instead of the 503.) Not ending the response
 * keeps Node from either; the client has a complete answer and closes the connection itself
 * (fetch does; Node's http client reports the 503, then EPIPE for the unsent rest).
 */
function refuseUnread(req: IncomingMessage, res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  const socket = req.socket;
  // A body being streamed (a 413 mid-upload) stops flowing too.
  req.pause();
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...(status === 503 ? { 'retry-after': '1' } : {}),
    connection: 'close',
  });
  res.write(text, () => {
    socket.end();
    const linger = setTimeout(() => socket.destroy(), REFUSED_LINGER_MS);
    linger.unref();
    socket.once('close', () => clearTimeout(linger));
  });
}

/** Scores (question id, response) pairs; per-item errors never fail the batch. */
export async function scoreBatch(
  items: readonly RequestItem[],
  options: Pick<RewardServerOptions, 'references' | 'labeler' | 'weights' | 'maxResponseChars'>,
): Promise<ScoredItem[]> {
  const limits = {
    maxResponseChars: options.maxResponseChars ?? DEFAULT_MAX_RESPONSE_CHARS,
    maxSteps: options.labeler.maxSteps,
    weights: options.weights,
  };
  const prepared: KeyedItem[] = [];
  for (const item of items) {
    // Scoring is CPU work: let other work in between items (the server does it in worker threads).
    await new Promise((resolve) => setImmediate(resolve));
    const { response, ...rest } = prepareItem(item, limits);
    prepared.push({ ...rest, key: response });
  }
  return scorePrepared(prepared, options);
}

/** Labels prepared items (segmented and with their label-free parts) and scores them. */
async function scorePrepared(
  items: readonly KeyedItem[],
  options: Pick<RewardServerOptions, 'references' | 'labeler' | 'weights' | 'maxResponseChars'>,
): Promise<ScoredItem[]> {
  const maxChars = options.maxResponseChars ?? DEFAULT_MAX_RESPONSE_CHARS;
  // Over-long responses are never labelled (the labeler's work grows with the text).
  const labelled = await options.labeler.labelAll(
    items.map((item) => (item.text === null ? '' : item.key)),
    items.map((item) => item.steps),
  );
  return items.map((item, i) => scoreOne(item, labelled[i]!, options, maxChars));
}

export const DEFAULT_MAX_RESPONSE_CHARS = 200_000;

function scoreOne(
  item: KeyedItem,
  outcome: Awaited<ReturnType<CachedLabeler['labelAll']>>[number],
  options: Pick<RewardServerOptions, 'references' | 'weights'>,
  maxChars: number,
): ScoredItem {
  const text = item.text;
  const failed = (error: string): ScoredItem => ({
    question_id: item.questionId,
    error,
    reward: null,
    components: text ?? { format: 0, readability: 0, diversity: 0 },
  });
  if (text === null) return failed(`response longer than ${maxChars} characters (not scored)`);
  if (item.error !== undefined) return failed(item.error);
  if (item.reference === undefined && item.questionId === null) return failed('no question id in the label');
  // A verl label may carry the reference trajectory itself (a list of symbols).
  const reference = item.reference ?? options.references.get(item.questionId as string);
  if (reference === undefined) return failed(`unknown question id "${item.questionId}"`);
  if (!outcome.ok) return failed(outcome.error);
  const { reward, ...components } = scoreLabelledResponse(item.key, reference, outcome.symbols, options.weights, { text });
  return {
    question_id: item.questionId,
    reward,
    components,
    labels: outcome.symbols,
    steps: outcome.steps,
  };
}

/**
 * The reward a trainer receives for an item that could not be scored: its label-free parts
 * (format, readability, diversity) and the worst value of every label-based part (DTW = SRI = 1,
 * anti-distraction 0), so an error is never better than a scored answer.
 */
export function fallbackReward(item: ScoredItem, weights: RewardWeights): number {
  if (item.reward !== null) return item.reward;
  return worstCaseReward(item.components ?? { format: 0, readability: 0, diversity: 0 }, weights);
}

/**
 * Starts the reward server (127.0.0.1 by default). Routes:
 * - `POST /score` `{"items": [{"question_id", "response"}]}` → `{"results": [ScoredItem]}`
 * - `POST /verl` one `{data_source, solution_str, ground_truth, extra_info}` (or `{"batch": [...]}`)
 *   → `{"score", format, dtw, sri, r_dtw, r_sri, error: 0|1, details}` (or `{"results": [...]}`)
 * - `POST /openrlhf` `{"query": [...], "prompts": [...], "labels": [...]}` → `{"rewards", "scores", "extra_logs", "results"}`
 * - `GET /health` → counts and cache statistics.
 * A malformed request gets a 4xx with `{"error": reason}`; the server keeps running.
 * Protected like the viewer: a Host header that is not this server, a foreign Origin or a
 * cross-site fetch get 403; with `token` set every POST must carry it. Bodies, items and
 * response lengths are bounded; parsing and scoring run in worker threads so `/health` stays live; a
 * request not answered within `requestTimeoutMs` gets 503; `close()` ends within the grace.
 */
export function startRewardServer(serverOptions: RewardServerOptions): Promise<RunningRewardServer> {
  // Weights resolved once: every item and /health see the same complete set.
  const options = { ...serverOptions, weights: checkRewardWeights(serverOptions.weights) };
  const limit = options.maxBodyBytes ?? 8 * 1024 * 1024;
  const maxConcurrent = options.maxConcurrent ?? 4;
  let active = 0;
  const stats = { requests: 0, scored: 0, itemErrors: 0, badRequests: 0, busy: 0 };
  const send = (res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  const maxItems = options.maxItems ?? 4096;
  const maxResponseChars = options.maxResponseChars ?? DEFAULT_MAX_RESPONSE_CHARS;
  const timeoutMs = options.requestTimeoutMs ?? 120_000;
  let hosts: Set<string> = new Set();
  // How late this thread's event loop ran (since it started listening), and how long the thread waited for a core.
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  // The histogram holds whole timer intervals (resolution included): lateness is the excess.
  const ms = (ns: number) => Math.max(0, Math.round((ns - 10e6) / 1e4) / 100);
  const eventLoopFigures = () => {
    const schedule = threadSchedule();
    return {
      delayP50Ms: ms(loopDelay.percentile(50)),
      delayP99Ms: ms(loopDelay.percentile(99)),
      delayMaxMs: ms(loopDelay.max),
      threadRunMs: schedule === null ? null : Math.round(schedule.runMs),
      threadWaitMs: schedule === null ? null : Math.round(schedule.waitMs),
    };
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    stats.requests++;
    // Like the viewer: only this machine's own clients. A web page the user visits cannot
    // make the server spend the labeler's API key (Origin / Sec-Fetch-Site), nor reach it
    // through a rebound DNS name (Host).
    const refusal = checkOrigin(req, hosts);
    if (refusal !== undefined) throw new BadRequest(403, `refused: ${refusal.reason}`);
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/health') {
      return send(res, 200, {
        ok: true,
        references: options.references.size,
        weights: options.weights,
        stats,
        cache: options.labeler.stats,
        eventLoop: eventLoopFigures(),
      });
    }
    if (path !== '/score' && path !== '/verl' && path !== '/openrlhf')
      throw new BadRequest(404, `no route ${path}; use POST /score, /verl, /openrlhf or GET /health`);
    if (req.method !== 'POST') throw new BadRequest(405, `${path} takes POST`);
    if (options.token !== undefined) {
      const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1];
      const header = req.headers['x-echolens-token'];
      const given = bearer ?? (Array.isArray(header) ? header[0] : header);
      if (!tokenMatches(options.token, given)) throw new BadRequest(403, 'missing or wrong token (Authorization: Bearer <token> or x-echolens-token)');
    }
    const contentType = req.headers['content-type'] ?? '';
    // A cross-site form post can only send form or text types; JSON-bodied requests need a preflight.
    if (/^(?:application\/x-www-form-urlencoded|multipart\/form-data)/i.test(contentType)) {
      throw new BadRequest(415, 'send the body as application/json');
    }
    // A declared body over the limit is refused for good (413) before any busy 503, which a client would retry.
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) throw new BadRequest(413, `body larger than ${limit} bytes`);
    if (active >= maxConcurrent) {
      stats.busy++;
      refuseUnread(req, res, 503, { error: `busy: ${active} requests are being scored (at most ${maxConcurrent} at once); retry after 1 s` });
      return;
    }
    active++;
    try {
      return await scoreRequest(req, res, path as RewardRoute, declared);
    } finally {
      active--;
    }
  };
  // One worker per core at most: more scoring threads than cores only take turns on them (and from
  // this thread). An admitted request waiting for a worker is not read meanwhile (TCP backpressure).
  // The workers also build and hash each response's labeller request (reward-label-prompt.ts).
  const pool = new RewardWorkerPool(Math.max(1, Math.min(maxConcurrent, availableParallelism())), undefined, options.labeler.promptSetup);
  const scoreRequest = async (req: IncomingMessage, res: ServerResponse, path: RewardRoute, declared: number) => {
    // Parsing, segmentation and the label-free components run in a worker, which also receives the
    // body as it arrives: this thread stays free for /health.
    const upload = await pool.open(
      path,
      { maxItems, maxResponseChars, maxSteps: options.labeler.maxSteps, weights: options.weights },
      Number.isInteger(declared) && declared >= 0 ? declared : null,
    );
    try {
      await streamBody(req, limit, upload);
    } catch (error) {
      upload.abort();
      throw error;
    }
    const { items, single } = await upload.end();
    const results = await scorePrepared(items, options);
    stats.scored += results.length;
    stats.itemErrors += results.filter((r) => r.reward === null).length;
    if (path === '/score') return send(res, 200, { results });
    if (path === '/verl') {
      // Numbers only at the top level: verl averages every extra key it is given.
      const asVerl = (r: ScoredItem) =>
        r.reward === null
          ? { score: fallbackReward(r, options.weights), ...(r.components ?? { format: 0 }), error: 1, details: { error: r.error } }
          : { score: r.reward, ...r.components, error: 0, details: { labels: r.labels } };
      return send(res, 200, single ? asVerl(results[0]!) : { results: results.map(asVerl) });
    }
    const rewards = results.map((r) => fallbackReward(r, options.weights));
    const mean = (values: number[]) => (values.length === 0 ? 0 : values.reduce((a, v) => a + v, 0) / values.length);
    const ok = results.filter((r): r is Extract<ScoredItem, { reward: number }> => r.reward !== null);
    return send(res, 200, {
      rewards,
      scores: rewards,
      extra_logs: {
        format: results.map((r) => r.components?.format ?? 0),
        dtw: results.map((r) => (r.reward === null ? 1 : r.components.dtw)),
        anti_distraction: results.map((r) => (r.reward === null ? 0 : r.components.anti_distraction)),
        readability: results.map((r) => r.components?.readability ?? 0),
        diversity: results.map((r) => r.components?.diversity ?? 0),
        error: results.map((r) => (r.reward === null ? 1 : 0)),
        mean_dtw_scored: mean(ok.map((r) => r.components.dtw)),
      },
      results,
    });
  };
  // Check request deadlines every second (Node's default is every 30 s).
  const server = createServer({ connectionsCheckingInterval: Math.min(1000, timeoutMs) }, (req, res) => {
    const answered = () => res.headersSent || res.writableEnded;
    // The answer may not wait forever on a stuck labeler: 503 after the timeout.
    const timer = setTimeout(() => {
      if (!answered()) send(res, 503, { error: `not answered within ${timeoutMs} ms` });
    }, timeoutMs);
    timer.unref();
    handle(req, res)
      .catch((error: unknown) => {
        if (answered()) return;
        if (error instanceof BadRequest) {
          stats.badRequests++;
          // A refused upload is not read on (refuseUnread); a whole one is answered and closed.
          if (!req.complete) return refuseUnread(req, res, error.status, { error: error.message });
          res.setHeader('connection', 'close');
          return send(res, error.status, { error: error.message });
        }
        const message = isEcholensError(error) ? error.message : `internal error: ${(error as Error).message}`;
        send(res, 500, { error: message });
      })
      .finally(() => clearTimeout(timer));
  });
  // Receiving a request (headers and body) has its own deadline: a client that stalls gets 408.
  server.requestTimeout = timeoutMs;
  server.headersTimeout = Math.min(timeoutMs, 60_000);
  // An idle keep-alive connection is kept 65 s (Node's default is 5 s). A client reuses a connection
  // it believes open; when the server closes it at that moment, the client's POST fails without an
  // answer (ECONNRESET, seen in the load bench's second round on a loaded machine, where the client's
  // own 4 s idle timer fired late). Trainers post far more often than once a minute.
  server.keepAliveTimeout = 65_000;
  const graceMs = options.closeGraceMs ?? 2_000;
  const bindHost = options.host ?? '127.0.0.1';
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8787, bindHost, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      hosts = allowedHosts(bindHost, address.port);
      // The delay figures describe serving: start-up (module loading, warm-up) is not counted.
      loopDelay.reset();
      for (const extra of options.allowHosts ?? []) hosts.add(extra.toLowerCase());
      resolve({
        url: `http://${host}:${address.port}`,
        port: address.port,
        server,
        stats,
        loopback: isLoopbackHost(bindHost),
        close: () =>
          new Promise<void>((done) => {
            // Stop accepting, drop idle keep-alive connections now, and cut the rest after the grace.
            server.close(() => {
              loopDelay.disable();
              void pool.close().then(done);
            });
            server.closeIdleConnections();
            setTimeout(() => server.closeAllConnections(), graceMs).unref();
          }),
      });
    });
  });
}
