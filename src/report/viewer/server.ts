import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EcholensError, InvalidArgumentError } from '../../core/errors.js';
import type { ModelAdapter } from '../../models/types.js';
import type { Session } from '../../sessions/types.js';
import type { RunStore } from '../../store/run-store.js';
import type { CellStatus } from '../../store/types.js';
import type { LiveProbeEvent, PreparedLiveProbe } from '../../experiment/audit.js';
import { listAudits } from '../../experiment/registry.js';
import { runIncompleteness } from '../../experiment/run-completeness.js';
import { CLIENT_SCRIPT } from './client-script.js';
import { checkSameAudit, compareAnalyzedRuns } from '../compare-runs.js';
import { storeHistory } from '../history.js';
import { accountRun, renderHtmlReport, reportEntry } from '../report.js';
import { trendSection } from '../trend.js';
import { type CellFilter, filterCells, type IndexedCell, type MeasureValues, pairCells, type RunAnalysis, type RunIndex, scoreOf, ViewerData } from './data.js';
import { type CellMeasure, cellMeasures, type Factor, pairedCell, referencedBy, runFactors } from './design.js';
import { auditSectionHtml } from '../document/render-html.js';
import { analysisPage, cellPage, chartsOf, comparePage, errorPage, type PageContext, runPage, runsPage, VIEWER_STYLE, viewerPage } from './pages.js';
import { liveProbeBody } from './live-probe-page.js';
import { allowedHosts, COMMON_HEADERS, checkOrigin, newToken, styleHash, TOKEN_HEADER, tokenMatches, viewerCsp } from './security.js';
import { mapSequential } from '../../core/map-sequential.js';
import { getOrInsert } from '../../core/get-or-insert.js';

/**
 * `echolens view`: a local web app over run stores fixed at startup, plus the
 * live probe (one probe, side by side in three contexts). node:http, no framework; see security.ts for who may call it.
 */

export interface ViewerOptions {
  stores: ReadonlyArray<{ file: string; store: RunStore }>;
  sessions: readonly Session[];
  target: ModelAdapter;
  judge: ModelAdapter;
  host?: string;
  port?: number;
  /** Positions offered per session in the live probe (uniform over the session). */
  positions?: number;
  /** Called for every request with its outcome (tests, verbose logging). */
  onRequest?: (entry: { method: string; path: string; status: number; reason?: string }) => void;
  /** At most this many live-probe streams at once (each calls the target and judge per arm); default 2. */
  maxConcurrentProbes?: number;
}

export interface ViewerServer {
  url: string;
  host: string;
  port: number;
  /** The per-process token the viewer's pages carry (POST endpoints require it). */
  token: string;
  close(): Promise<void>;
}

const STATUSES: readonly CellStatus[] = ['pending', 'done', 'empty', 'failed'];
const MAX_BODY_BYTES = 64 * 1024;
/** The live probe's stream endpoint. */
const LIVE_PROBE_API = '/api/probe';
const NO_SESSION = 'the live probe needs a session: start the viewer with --session <transcript>';

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A %-escaped path segment; a malformed escape (`%E0%A4%A`) is the client's error (400), not the server's. */
function decodePathPart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new HttpError(400, 'malformed %-escape in the path');
  }
}

/** The runs, analyses and derived tables the pages read, each computed once per run or analysis. */
class RunLookups {
  private readonly factorCache = new WeakMap<RunIndex, Factor[]>();
  private readonly measureCache = new WeakMap<RunAnalysis, CellMeasure[]>();
  private readonly chartCache = new WeakMap<RunAnalysis, ReturnType<typeof chartsOf>>();

  constructor(readonly data: ViewerData) {}

  runIndexFrom(params: URLSearchParams) {
    return this.runIndex(Number(params.get('s')), params.get('r') ?? '');
  }

  /** The run `runId` of store `storeIndex` (404 when there is no such store or run). */
  async runIndex(storeIndex: number, runId: string) {
    const index = await this.data.run(storeIndex, runId);
    if (!index) throw new HttpError(404, 'no such run in the stores this viewer was started with');
    return { storeIndex, index, store: this.data.store(storeIndex)! };
  }

  factorsOf(index: RunIndex): Factor[] {
    return getOrInsert(this.factorCache, index, () => runFactors(index));
  }

  /** The run's analysis, or why there is none (no registered audit, or the analysis failed). */
  async analysisOf(storeIndex: number, index: RunIndex): Promise<{ analysis?: RunAnalysis; error?: string }> {
    if (!this.data.auditOf(index.run)) return { error: `No analysis: no audit is registered for ${index.run.experiment} runs.` };
    try {
      return { analysis: (await this.data.analysis(storeIndex, index.run.id)) as RunAnalysis };
    } catch (error) {
      return { error: `The analysis failed: ${(error as Error).message}` };
    }
  }

  measuresOf(index: RunIndex, analysis: RunAnalysis | undefined): CellMeasure[] {
    if (!analysis) return [];
    return getOrInsert(this.measureCache, analysis, () => cellMeasures(index, analysis));
  }

  /** The audit's charts as its report section draws them (rendered once per analysis). */
  async chartsOfAnalysis(analysis: RunAnalysis): Promise<ReturnType<typeof chartsOf>> {
    let charts = this.chartCache.get(analysis);
    if (!charts) {
      charts = chartsOf(await auditSectionHtml(analysis.audit, analysis.analyzed));
      this.chartCache.set(analysis, charts);
    }
    return charts;
  }
}

/** A compared run, named `store:run`. */
function runOfRef(look: RunLookups, value: string | null) {
  const match = /^(\d+):(.+)$/u.exec(value ?? '');
  if (!match) throw new HttpError(404, 'compare needs two runs (a=store:run, b=store:run)');
  return look.runIndex(Number(match[1]), match[2] as string);
}

const measureValues = (measures: readonly CellMeasure[]): MeasureValues => new Map(measures.map((m) => [m.name, m.values]));

/** The cell filter a page's query string asks for (400 on a malformed number or status). */
function filterFrom(params: URLSearchParams, factors: readonly Factor[] = [], measures: readonly CellMeasure[] = []): CellFilter {
  const labels: CellFilter['labels'] = {};
  for (const { name } of factors) {
    const value = params.get(name);
    if (value) labels[name] = value;
  }
  const score = (name: string) => {
    const raw = params.get(name);
    if (raw === null || raw === '') return undefined;
    const n = Number(raw);
    if (!Number.isFinite(n)) throw new HttpError(400, `${name} must be a number`);
    return n;
  };
  const status = params.get('status');
  if (status && !STATUSES.includes(status as CellStatus)) throw new HttpError(400, `status must be one of ${STATUSES.join(', ')}`);
  const min = score('min');
  const max = score('max');
  const ranges: NonNullable<CellFilter['ranges']> = {};
  for (const m of measures) {
    const low = score(`min_${m.name}`);
    const high = score(`max_${m.name}`);
    if (low !== undefined || high !== undefined) ranges[m.name] = { ...(low !== undefined ? { min: low } : {}), ...(high !== undefined ? { max: high } : {}) };
  }
  return {
    labels,
    ...(Object.keys(ranges).length > 0 ? { ranges } : {}),
    ...(status ? { status: status as CellStatus } : {}),
    ...(params.get('judge') ? { judge: params.get('judge') as string } : {}),
    ...(min !== undefined ? { minScore: min } : {}),
    ...(max !== undefined ? { maxScore: max } : {}),
    ...(params.get('q') ? { text: params.get('q') as string } : {}),
  };
}

/** A small JSON request body (415 unless JSON, 413 when too large, 400 when malformed). */
async function readJsonBody(request: IncomingMessage): Promise<unknown> {
  const type = request.headers['content-type'] ?? '';
  // A JSON content type cannot be sent cross-origin without a CORS preflight, which we never answer.
  if (!/^application\/json\b/u.test(type)) throw new HttpError(415, 'the body must be application/json');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, 'request body too large');
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'the body is not valid JSON');
  }
}

/** The `/run` page: the run's cells under the query's filter, with its analysis headline and charts. */
async function runPageHtml(look: RunLookups, params: URLSearchParams, context: PageContext): Promise<string> {
  const { storeIndex, index, store } = await look.runIndexFrom(params);
  const { analysis, error } = await look.analysisOf(storeIndex, index);
  const factors = look.factorsOf(index);
  const measures = look.measuresOf(index, analysis);
  const filter = filterFrom(params, factors, measures);
  const cells = filterCells(index, filter, measureValues(measures));
  const page = Math.max(0, Math.trunc(Number(params.get('page') ?? 0)) || 0);
  const headline = analysis ? analysis.audit.render.viewerSummary(analysis.analyzed) : [];
  const charts = analysis ? await look.chartsOfAnalysis(analysis) : [];
  return runPage(
    store,
    index,
    cells,
    { filter, page, ...(analysis ? { analysis: analysis.audit.title } : {}) },
    { factors, measures, headline, charts, ...(error ? { analysisError: error } : {}) },
    context,
  );
}

/** The `/trend` page: the measurements of one design over time (report/trend.ts). */
async function trendPageHtml(look: RunLookups, params: URLSearchParams, context: PageContext): Promise<string> {
  const storeIndex = Number(params.get('s') ?? 0);
  const store = look.data.store(storeIndex);
  if (!store) throw new HttpError(404, 'no such store in this viewer');
  const [history] = await storeHistory(store.store, { design: params.get('d') ?? '' });
  if (!history) throw new HttpError(404, 'no such design in this store');
  const body = trendSection(history, { runHref: (run) => `/run?s=${storeIndex}&r=${encodeURIComponent(run)}` });
  return viewerPage(`Over time — ${history.audit}`, body, context, false);
}

/** The `/analysis` page: the audit's own report section for one run. */
async function analysisPageHtml(look: RunLookups, params: URLSearchParams, context: PageContext): Promise<string> {
  const { storeIndex, index, store } = await look.runIndexFrom(params);
  const analysis = await look.data.analysis(storeIndex, index.run.id);
  if (!analysis) throw new HttpError(404, `no audit is registered for ${index.run.experiment} runs`);
  const section = await auditSectionHtml(analysis.audit, analysis.analyzed);
  return analysisPage(store, analysis, section, context);
}

/** The `/cell` page: one cell, its neighbours under the filter, and its paired or referencing cells. */
async function cellPageHtml(look: RunLookups, params: URLSearchParams, context: PageContext): Promise<string> {
  const { storeIndex, index, store } = await look.runIndexFrom(params);
  const key = params.get('k') ?? '';
  const cell = index.cells.find((c) => c.key === key) ?? index.auxiliaryCells.get(key);
  if (!cell) throw new HttpError(404, 'no such cell in this run');
  const { analysis } = await look.analysisOf(storeIndex, index);
  const measures = look.measuresOf(index, analysis);
  const filter = filterFrom(params, look.factorsOf(index), measures);
  const list = filterCells(index, filter, measureValues(measures));
  const at = list.indexOf(cell);
  const neighbours =
    at >= 0
      ? {
          position: at + 1,
          total: list.length,
          filter,
          ...(at > 0 ? { previous: list[at - 1] as IndexedCell } : {}),
          ...(at + 1 < list.length ? { next: list[at + 1] as IndexedCell } : {}),
        }
      : undefined;
  const pair = index.cells.includes(cell) ? pairedCell(index, cell) : undefined;
  const references = pair ? undefined : referencedBy(index, cell);
  return cellPage(
    store,
    index,
    cell,
    await store.store.getRequest(key),
    await store.store.getCell(key),
    {
      measures,
      ...(neighbours ? { neighbours } : {}),
      ...(pair ? { pair: { ...pair, result: await store.store.getCell(pair.cell.key) } } : {}),
      ...(references ? { referencedBy: references } : {}),
    },
    context,
  );
}

/** The `/compare` page: two runs of one audit, cell by cell and by their analyses. */
async function comparePageHtml(look: RunLookups, params: URLSearchParams, context: PageContext): Promise<string> {
  const a = await runOfRef(look, params.get('a'));
  const b = await runOfRef(look, params.get('b'));
  try {
    checkSameAudit(a.index.run, b.index.run);
  } catch (error) {
    throw new HttpError(400, (error as Error).message);
  }
  const { pairs, byTarget } = pairCells(a.index, b.index);
  const analysisA = (await look.analysisOf(a.storeIndex, a.index)).analysis;
  const analysisB = (await look.analysisOf(b.storeIndex, b.index)).analysis;
  const comparison =
    analysisA && analysisB ? compareAnalyzedRuns(analysisA.audit.name, analysisA.analyzed, analysisB.analyzed, { B: 2000, seed: 42 }) : undefined;
  return comparePage(
    { store: a.store, index: a.index, analysis: analysisA },
    { store: b.store, index: b.index, analysis: analysisB },
    comparison,
    pairs,
    byTarget,
    context,
  );
}

/** The pages over the runs of the stores, by path. */
const RUN_PAGES = new Map([
  ['/run', runPageHtml],
  ['/analysis', analysisPageHtml],
  ['/cell', cellPageHtml],
  ['/compare', comparePageHtml],
  ['/trend', trendPageHtml],
]);

/** `/api/runs`: every run of every store. */
async function runsJson(data: ViewerData) {
  return {
    runs: await mapSequential(await data.runs(), async ({ store, run }) => ({
      store: store.index,
      storeName: store.name,
      id: run.id,
      experiment: run.experiment,
      status: run.status,
      startedAt: run.startedAt,
      counts: run.counts,
      /** Why the run is incomplete (the report's refusal), or null. */
      incomplete: await runIncompleteness(store.store, run),
    })),
  };
}

/** `/api/cells`: the run's cells under the query's filter (at most 1000). */
async function cellsJson(look: RunLookups, params: URLSearchParams) {
  const { storeIndex, index } = await look.runIndexFrom(params);
  const measures = look.measuresOf(index, (await look.analysisOf(storeIndex, index)).analysis);
  const filter = filterFrom(params, look.factorsOf(index), measures);
  const cells = filterCells(index, filter, measureValues(measures));
  return {
    run: index.run.id,
    total: index.cells.length,
    matched: cells.length,
    cells: cells.slice(0, 1000).map((c) => ({
      key: c.key,
      ordinal: c.ordinal,
      labels: c.labels,
      status: c.status,
      text: c.text,
      score: scoreOf(index, c.key, filter.judge)?.score ?? null,
    })),
  };
}

/** The index of the first store that holds the run, or -1. */
async function firstStoreHolding(data: ViewerData, runId: string): Promise<number> {
  for (const [index, s] of data.stores.entries()) if ((await s.store.getRun(runId)) !== undefined) return index;
  return -1;
}

/** The full HTML report of one run (the store is the `s` index, else the first store holding the run), with its CSP. */
async function reportPageHtml(look: RunLookups, runId: string, storeParam: string | null): Promise<{ body: string; csp: string }> {
  const storeIndex = storeParam !== null && storeParam !== '' ? Number(storeParam) : await firstStoreHolding(look.data, runId);
  const { index, store } = await look.runIndex(storeIndex, runId);
  const { analysis } = await look.analysisOf(storeIndex, index);
  const entry = reportEntry(index.run, await accountRun(store.store, index.run.id), analysis);
  const body = await renderHtmlReport(store.store, [entry], `echolens report — ${index.run.id}`);
  // The report runs no script; its styles are allowed by hash, whatever the report's stylesheet is.
  const styles = [...body.matchAll(/<style>([\s\S]*?)<\/style>/gu)].map((m) => styleHash(m[1] as string));
  const csp = [
    "default-src 'none'",
    `style-src ${styles.join(' ') || "'none'"}`,
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { body, csp };
}

/** Binds the server, turning a busy port or an unusable host into an argument error. */
async function listen(server: Server, port: number, host: string): Promise<number> {
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new InvalidArgumentError('port', `must be an integer 0..65535, got ${port}`);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') reject(new InvalidArgumentError('--port', `port ${port} on ${host} is in use; pick another (0 = any free port)`));
      else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND')
        reject(new InvalidArgumentError('--host', `cannot bind to ${host} (${error.code})`));
      else reject(error);
    });
    server.listen(port, host, () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/** The URL to show: a wildcard bind is reached at 127.0.0.1, an IPv6 host in brackets. */
function shownUrl(host: string, port: number): string {
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const shownHost = urlHost === '0.0.0.0' || urlHost === '[::]' ? '127.0.0.1' : urlHost;
  return `http://${shownHost}:${port}/`;
}

/** The live probe of the first registered audit that has one (persona drift's), over the given sessions. */
function prepareProbe(options: ViewerOptions): PreparedLiveProbe | undefined {
  const liveProbe = listAudits().find((a) => a.liveProbe !== undefined)?.liveProbe;
  return options.sessions.length > 0 && liveProbe
    ? liveProbe.prepare(options.sessions, {
        target: options.target.ref,
        judge: options.judge.ref,
        ...(options.positions ? { positions: options.positions } : {}),
      })
    : undefined;
}

export async function startViewer(options: ViewerOptions): Promise<ViewerServer> {
  const host = options.host ?? '127.0.0.1';
  const token = newToken();
  const data = new ViewerData(options.stores);
  const look = new RunLookups(data);
  const probe = prepareProbe(options);
  const context: PageContext = { token, simulated: options.target.provider === 'sim' || options.judge.provider === 'sim' };
  const csp = viewerCsp(VIEWER_STYLE);
  const maxProbes = options.maxConcurrentProbes ?? 2;
  let activeProbes = 0;
  let hosts = new Set<string>();
  const openStreams = new Set<ServerResponse>();

  const log = (request: IncomingMessage, status: number, reason?: string) =>
    options.onRequest?.({ method: request.method ?? '', path: request.url ?? '', status, ...(reason ? { reason } : {}) });

  /** Answers with `body` of media `type`, under `policy` (none: no CSP header), and logs the outcome. */
  function send(request: IncomingMessage, response: ServerResponse, status: number, type: string, policy: string | undefined, body: string, reason?: string) {
    response.writeHead(status, { ...COMMON_HEADERS, 'content-type': `${type}; charset=utf-8`, ...(policy ? { 'content-security-policy': policy } : {}) });
    response.end(body);
    log(request, status, reason);
  }

  const sendHtml = (request: IncomingMessage, response: ServerResponse, status: number, body: string, reason?: string) =>
    send(request, response, status, 'text/html', csp, body, reason);

  const sendJson = (request: IncomingMessage, response: ServerResponse, status: number, body: unknown, reason?: string) =>
    send(request, response, status, 'application/json', "default-src 'none'", JSON.stringify(body), reason);

  function sendError(request: IncomingMessage, response: ServerResponse, status: number, message: string): void {
    if ((request.url ?? '').startsWith('/api/')) sendJson(request, response, status, { error: message }, message);
    else sendHtml(request, response, status, errorPage(status, message, context), message);
  }

  async function serveLiveProbe(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (!probe) throw new HttpError(404, NO_SESSION);
    const headerToken = request.headers[TOKEN_HEADER];
    if (!tokenMatches(token, Array.isArray(headerToken) ? headerToken[0] : headerToken)) throw new HttpError(403, 'missing or wrong viewer token');
    const body = await readJsonBody(request);
    let probeRequest: unknown;
    try {
      probeRequest = probe.parse(body);
    } catch (error) {
      if (error instanceof EcholensError) throw new HttpError(400, error.message);
      throw error;
    }
    if (activeProbes >= maxProbes) throw new HttpError(429, `at most ${maxProbes} live-probe streams at once; wait for one to finish`);
    activeProbes += 1;
    const controller = new AbortController();
    response.on('close', () => controller.abort());
    response.writeHead(200, {
      ...COMMON_HEADERS,
      'content-type': 'text/event-stream; charset=utf-8',
      connection: 'keep-alive',
      'content-security-policy': "default-src 'none'",
    });
    response.flushHeaders();
    openStreams.add(response);
    log(request, 200);
    const emit = (event: LiveProbeEvent) => {
      if (!response.writableEnded) response.write(`event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`);
    };
    try {
      await probe.run(probeRequest, { target: options.target, judge: options.judge }, emit, controller.signal);
    } catch (error) {
      emit({ event: 'error', data: { arm: null, message: (error as Error).message } });
    } finally {
      activeProbes -= 1;
      openStreams.delete(response);
      response.end();
    }
  }

  async function serveReport(request: IncomingMessage, response: ServerResponse, runId: string, storeParam: string | null): Promise<void> {
    const { body, csp: reportCsp } = await reportPageHtml(look, runId, storeParam);
    send(request, response, 200, 'text/html', reportCsp, body);
  }

  async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const refusal = checkOrigin(request, hosts);
    if (refusal) {
      sendError(request, response, 403, `refused: ${refusal.reason}`);
      return;
    }
    const url = new URL(request.url ?? '/', 'http://viewer.invalid');
    const params = url.searchParams;
    const method = request.method ?? 'GET';
    if (method === 'POST' && url.pathname === LIVE_PROBE_API) return serveLiveProbe(request, response);
    if (method !== 'GET' && method !== 'HEAD') throw new HttpError(405, 'method not allowed');
    const pageOf = RUN_PAGES.get(url.pathname);
    if (pageOf) return sendHtml(request, response, 200, await pageOf(look, params, context));
    switch (url.pathname) {
      case '/':
        return sendHtml(request, response, 200, await runsPage(data, context));
      case '/app.js':
        return send(request, response, 200, 'text/javascript', undefined, CLIENT_SCRIPT);
      case '/report':
        return serveReport(request, response, params.get('r') ?? '', params.get('s'));
      case '/probe':
        if (!probe) throw new HttpError(404, NO_SESSION);
        {
          const page = probe.page();
          return sendHtml(request, response, 200, viewerPage(page.title, liveProbeBody(page, context), context));
        }
      case '/api/runs':
        return sendJson(request, response, 200, await runsJson(data));
      case '/api/cells':
        return sendJson(request, response, 200, await cellsJson(look, params));
      default: {
        const reportPath = /^\/runs\/([^/]+)\/report$/u.exec(url.pathname);
        if (reportPath) return serveReport(request, response, decodePathPart(reportPath[1] as string), params.get('s'));
        throw new HttpError(404, 'not found');
      }
    }
  }

  const server: Server = createServer((request, response) => {
    route(request, response).catch((error: unknown) => {
      if (response.headersSent) {
        response.end();
        return;
      }
      if (error instanceof HttpError) sendError(request, response, error.status, error.message);
      else sendError(request, response, 500, `internal error: ${(error as Error).message}`);
    });
  });
  server.headersTimeout = 30_000;
  server.requestTimeout = 0;

  const bound = await listen(server, options.port ?? 0, host);
  hosts = allowedHosts(host, bound);
  return {
    url: shownUrl(host, bound),
    host,
    port: bound,
    token,
    async close() {
      for (const stream of openStreams) stream.destroy();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await data.close();
    },
  };
}
