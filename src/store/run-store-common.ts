import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { InvalidArgumentError } from '../core/errors.js';
import type { FinishReason, ModelRequest, TokenUsage, ToolCall } from '../models/types.js';
import type { BatchJob } from './batch-jobs.js';
import type { StageDeclaration, StageProgress } from './run-stages.js';
import { type CellIdentity, REDACTED, replaceSecretValues, scrubSecrets } from './keys.js';
import { requestKeys } from './request-hash.js';
import { scrubAnswer } from './answer-scrub.js';
import { decodeStoredText, encodeStoredText } from './stored-text.js';
import type { CellLabels, CellResult, CellSpec, CellStatus, RunManifest } from './types.js';

/*
 * What both store backends share (run-store.ts has SQLite, postgres/ has PostgreSQL): the
 * RunStore interface and its records, and the row helpers both use. Apart from run-store.ts so
 * that the PostgreSQL backend never imports the module that opens it.
 */

export type RunStatus = 'running' | 'done' | 'interrupted' | 'stopped' | 'failed';

export interface RunInfo {
  id: string;
  experiment: string;
  manifest: RunManifest;
  status: RunStatus;
  startedAt: string;
  updatedAt: string;
  endedAt: string | null;
  /** The runner's last summary (JSON), when a run reached an end. */
  summary: unknown;
  /** Cells linked to the run, by status. */
  counts: Record<CellStatus, number> & { total: number };
}

/**
 * A run without its cell counts: what picking a run needs (its id, experiment, manifest, times).
 * Counting joins every cell of every run (0.4 s of a 28,800-cell store's report), and a report
 * reads the run's cells anyway (issue #44).
 */
export type RunHead = Omit<RunInfo, 'counts'>;

/** One cell of a run without its request: what reports read (labels, model, sample, result). */
export interface RunCellResultRecord {
  runId: string;
  key: string;
  labels: CellLabels;
  ordinal: number;
  model: string;
  sample: number;
  result: CellResult;
}

/** One cell of a run: its labels in that run, its request and its (shared) result. */
export interface RunCellRecord extends RunCellResultRecord {
  request: ModelRequest;
}

/** What the runner writes when a cell ends. */
export interface CellOutcome {
  status: Exclude<CellStatus, 'pending'>;
  attempts: number;
  text: string | null;
  reasoning: string | null;
  finishReason: FinishReason | null;
  responseModel: string | null;
  usage: TokenUsage;
  latencyMs: number | null;
  costUsd: number | null;
  errorClass: string | null;
  errorMessage: string | null;
  startedAt: string;
  finishedAt: string;
  /** Tool calls the model emitted (requests that offer tools only). */
  toolCalls?: ToolCall[] | null;
  /**
   * Attempts of this call the store counted before it was made (`beginAttempts`): the
   * write adds `attempts - attemptsRecorded`, so a call is counted once, from the moment
   * it is sent, even when its result is never written.
   */
  attemptsRecorded?: number;
}

export interface CellQuery {
  /** Exact label matches (all must hold). */
  labels?: CellLabels;
  status?: CellStatus | CellStatus[];
}

export interface OpenStoreOptions {
  readonly?: boolean;
  /** Where secret values are taken from for scrubbing (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

export interface RunRow {
  id: string;
  experiment: string;
  manifest: string;
  status: RunStatus;
  started_at: string;
  updated_at: string;
  ended_at: string | null;
  summary: string | null;
}

export const RUN_STATUSES: readonly RunStatus[] = ['running', 'done', 'interrupted', 'stopped', 'failed'];

/** A row of a run's cell index: labels, status and text, never the request (the viewer's index). */
export interface RunCellIndexRow {
  key: string;
  labels: string;
  ordinal: number;
  status: CellStatus;
  text: string | null;
  model: string;
  tool_calls: string | null;
}

/** An index row with its text as the model returned it (stored-text.ts). */
export function decodeIndexRow(row: RunCellIndexRow): RunCellIndexRow {
  return row.text === null ? row : { ...row, text: decodeStoredText(row.text) };
}

/** The batch-job ledger of a store (batch-jobs.ts), whichever backend holds it. */
export interface BatchJobLedger {
  /** Records a job before its create call; the cells are held from this moment. */
  begin(runId: string, provider: string, model: string, keys: readonly string[], now?: Date): Promise<number>;
  submitted(id: number, batchId: string): Promise<void>;
  /** Last provider status and counts seen. */
  observed(id: number, providerStatus: string, note: string): Promise<void>;
  finish(id: number, status: 'ended' | 'collected' | 'failed' | 'abandoned', note?: string, now?: Date): Promise<void>;
  get(id: number): Promise<BatchJob | undefined>;
  /** Jobs not yet collected (`submitting`, `submitted`, `ended`), oldest first. */
  open(): Promise<BatchJob[]>;
  all(runId?: string): Promise<BatchJob[]>;
}

/**
 * The run store every command and runner uses. Every method is asynchronous: the
 * PostgreSQL backend talks to a server over the network and must never hold the event
 * loop, and the SQLite backend answers through the same interface so callers are
 * written once. Two backends implement it: `SqliteRunStore` (a file, better-sqlite3)
 * and `PgRunStore` (a PostgreSQL database shared by worker processes, src/store/postgres/).
 * `openStore` picks the backend from the location: `postgres://…` / `postgresql://…`
 * URLs open PostgreSQL, anything else is a SQLite file.
 */
export interface RunStore {
  /** Which backend holds the store. */
  readonly backend: 'sqlite' | 'postgres';
  /** The store's location as shown to people (a file path, or a URL without its password). */
  readonly file: string;
  close(): Promise<void>;
  createRun(manifest: RunManifest, options?: { id?: string }): Promise<string>;
  getRun(id: string): Promise<RunInfo | undefined>;
  requireRun(id: string): Promise<RunInfo>;
  listRuns(): Promise<RunInfo[]>;
  /** All runs, newest first (the order of `listRuns`), without their cell counts. */
  listRunHeads(): Promise<RunHead[]>;
  deleteRun(id: string): Promise<{ cellsRemoved: number }>;
  /** Sets a run's status; `done` is written as `running` while a declared stage is incomplete. */
  setRunStatus(id: string, status: RunStatus, summary?: unknown): Promise<void>;
  /** Records the stages a run declares, with their planned cell counts (run-stages.ts). */
  declareStages(runId: string, stages: readonly StageDeclaration[]): Promise<void>;
  /** Writes one stage's expected, registered and settled cell counts. */
  recordStage(runId: string, stage: string, counts: { expected: number; registered: number; settled: number }): Promise<void>;
  /** The run's stages in order (empty for runs recorded before stages were). */
  stages(runId: string): Promise<StageProgress[]>;
  registerCells(runId: string, specs: readonly CellSpec[], identities?: readonly Pick<CellIdentity, 'key' | 'contentKey' | 'legacyKey'>[]): Promise<string[]>;
  getCell(key: string): Promise<CellResult | undefined>;
  getCells(keys: Iterable<string>): Promise<Map<string, CellResult>>;
  resultsOfRun(runId: string): Promise<Map<string, CellResult>>;
  getRequest(key: string): Promise<ModelRequest | undefined>;
  /**
   * Counts one attempt on each cell before its call is sent (cells not yet `done`); the
   * outcome then carries `attemptsRecorded: 1`. A call whose result never arrives (a
   * killed process) or cannot be stored is so still counted.
   */
  beginAttempts(keys: readonly string[]): Promise<void>;
  recordResult(key: string, outcome: CellOutcome): Promise<boolean>;
  recordResults(items: ReadonlyArray<{ key: string; outcome: CellOutcome }>): Promise<boolean[]>;
  cellsOfRun(runId: string, query?: CellQuery): Promise<RunCellRecord[]>;
  cellResultsOfRun(runId: string, query?: CellQuery): Promise<RunCellResultRecord[]>;
  /** Labels, status and text of a run's cells in plan order (no requests). */
  cellIndexOfRun(runId: string): Promise<RunCellIndexRow[]>;
  findByContent(key: string, model?: string): Promise<Array<{ model: string; result: CellResult }>>;
  exportJsonl(runId: string, stream: Writable): Promise<number>;
  /**
   * Runs `fn` in one transaction: every store call made inside it (in its async context)
   * joins the transaction; it is rolled back when `fn` rejects. Other callers wait.
   */
  transaction<T>(fn: () => Promise<T>): Promise<T>;
  /** The store's provider batch jobs (--batch). */
  batchJobs(): BatchJobLedger;
}

/** True for a PostgreSQL connection string (`postgres://…` or `postgresql://…`). */
export function isPostgresUrl(location: unknown): location is string {
  return typeof location === 'string' && /^postgres(?:ql)?:\/\//i.test(location);
}

/** Every cells column a result needs, all but `request` (reports never parse requests to read results), in `resultOfColumns`' order. */
export const RESULT_COLUMNS = `c.key, c.content_key, c.model, c.sample, c.status, c.attempts, c.text, c.reasoning, c.finish_reason,
  c.response_model, c.input_tokens, c.output_tokens, c.cached_input_tokens, c.cache_write_tokens, c.reasoning_tokens,
  c.latency_ms, c.cost_usd, c.error_class, c.error_message, c.started_at, c.finished_at, c.tool_calls`;

/**
 * A cell's result from a raw row that starts with RESULT_COLUMNS. Rows are read as arrays and the
 * optional fields set, not spread in (issue #44): at paper scale (28,800 cells) a row object, and
 * a second object per cell, showed in a report's time.
 */
export function resultOfColumns(c: unknown[], cached: boolean): CellResult {
  const result: CellResult = {
    key: c[0] as string,
    status: c[4] as CellStatus,
    attempts: c[5] as number,
    text: decodeStoredText(c[6] as string | null),
    reasoning: decodeStoredText(c[7] as string | null),
    finishReason: c[8] as FinishReason | null,
    usage: {
      inputTokens: c[10] as number,
      outputTokens: c[11] as number,
      cachedInputTokens: c[12] as number,
      cacheWriteTokens: c[13] as number,
      reasoningTokens: c[14] as number,
    },
    latencyMs: c[15] as number | null,
    costUsd: c[16] as number | null,
    errorClass: c[17] as string | null,
    errorMessage: decodeStoredText(c[18] as string | null),
    startedAt: c[19] as string | null,
    finishedAt: c[20] as string | null,
    cached,
  };
  const responseModel = c[9] as string | null;
  if (responseModel) result.responseModel = responseModel;
  if (typeof c[21] === 'string') result.toolCalls = JSON.parse(c[21]) as ToolCall[];
  return result;
}

/** A run cell's record from a raw row of RESULT_COLUMNS followed by labels and ordinal. */
export function resultRecordOfColumns(runId: string, c: unknown[]): RunCellResultRecord {
  const result = resultOfColumns(c, false);
  return {
    runId,
    key: result.key,
    labels: JSON.parse(c[22] as string) as CellLabels,
    ordinal: c[23] as number,
    model: c[2] as string,
    sample: c[3] as number,
    result,
  };
}

/**
 * One line of `exportJsonl` from a raw row of RESULT_COLUMNS followed by labels, and the cell's
 * decoded request: the same fields, in the same order, in both backends.
 */
export function exportRecord(runId: string, c: unknown[], request: unknown): Record<string, unknown> {
  const result = resultOfColumns(c, false);
  return {
    run: runId,
    key: result.key,
    labels: JSON.parse(c[22] as string) as CellLabels,
    request,
    status: result.status,
    attempts: result.attempts,
    text: result.text,
    reasoning: result.reasoning,
    finishReason: result.finishReason,
    responseModel: decodeStoredText(c[9] as string | null),
    usage: result.usage,
    latencyMs: result.latencyMs,
    costUsd: result.costUsd,
    errorClass: result.errorClass,
    errorMessage: result.errorMessage,
    startedAt: result.startedAt,
    finishedAt: result.finishedAt,
  };
}

/** Writes one JSON line, waiting for the stream to drain when its buffer is full. */
export async function writeJsonLine(stream: Writable, record: unknown): Promise<void> {
  if (!stream.write(`${JSON.stringify(record)}\n`)) await once(stream, 'drain');
}

/**
 * One outcome's column values, scrubbed of the store's secrets and encoded (stored-text.ts), in the
 * order both backends write them: status, attempts to add, text … finished_at, tool_calls.
 */
export function outcomeValues(outcome: CellOutcome, secrets: readonly string[]): unknown[] {
  const u = outcome.usage;
  return [
    outcome.status,
    // The attempts counted before the call (`beginAttempts`) are in the store already.
    outcome.attempts - (outcome.attemptsRecorded ?? 0),
    encodeStoredText(scrubAnswer(outcome.text, secrets)),
    encodeStoredText(scrubAnswer(outcome.reasoning, secrets)),
    outcome.finishReason,
    encodeStoredText(outcome.responseModel),
    u.inputTokens,
    u.outputTokens,
    u.cachedInputTokens,
    u.cacheWriteTokens,
    u.reasoningTokens,
    outcome.latencyMs,
    outcome.costUsd,
    outcome.errorClass,
    outcome.errorMessage === null ? null : encodeStoredText(scrubSecrets(outcome.errorMessage, secrets) as string),
    outcome.startedAt,
    outcome.finishedAt,
    outcome.toolCalls === undefined || outcome.toolCalls === null || outcome.toolCalls.length === 0
      ? null
      : JSON.stringify(secrets.length === 0 ? outcome.toolCalls : (replaceSecretValues(outcome.toolCalls, secrets) as ToolCall[])),
  ];
}

/** A run's cell counts from its per-status tallies. */
export function tallyCounts(entries: Iterable<{ status: CellStatus; n: number }>): RunInfo['counts'] {
  const counts = { pending: 0, done: 0, empty: 0, failed: 0, total: 0 };
  for (const entry of entries) {
    counts[entry.status] = entry.n;
    counts.total += entry.n;
  }
  return counts;
}

/** A run's public info from its row and counts. */
export function runInfoOfRow(row: RunRow, counts: RunInfo['counts']): RunInfo {
  // `counts` last: reports and `runs list` print runs in this key order.
  return { ...runHeadOfRow(row), counts };
}

/** A run's public info from its row, without counts. */
export function runHeadOfRow(row: RunRow): RunHead {
  return {
    id: row.id,
    experiment: row.experiment,
    manifest: JSON.parse(row.manifest) as RunManifest,
    status: row.status,
    startedAt: row.started_at,
    updatedAt: row.updated_at,
    endedAt: row.ended_at,
    summary: row.summary === null ? null : JSON.parse(row.summary),
  };
}

export function validateManifest(manifest: RunManifest): void {
  if (manifest === null || typeof manifest !== 'object') throw new InvalidArgumentError('manifest', 'must be an object');
  if (typeof manifest.experiment !== 'string' || manifest.experiment === '') {
    throw new InvalidArgumentError('manifest.experiment', 'must be a non-empty string');
  }
  if (!Number.isFinite(manifest.seed)) throw new InvalidArgumentError('manifest.seed', 'must be a finite number');
  if (manifest.versions === null || typeof manifest.versions !== 'object') {
    throw new InvalidArgumentError('manifest.versions', 'must be an object of name → version');
  }
}

/** Secret values replaced in a JSON text (fields were scrubbed when it was built). */
export function scrubJsonValues(json: string, secrets: readonly string[], plainSecrets: boolean): string {
  if (secrets.length === 0) return json;
  if (plainSecrets) {
    // JSON leaves these secrets' characters unescaped, so replacing in the text is exact.
    let out = json;
    for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  }
  return JSON.stringify(replaceSecretValues(JSON.parse(json), secrets));
}

export function newRunId(): string {
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `run-${stamp}-${randomBytes(3).toString('hex')}`;
}

/** The first key an earlier shape of a cell is stored under (either identity rule), if any. */
export function storedLegacyKey(requests: readonly ModelRequest[], stored: (key: string) => boolean): string | undefined {
  for (const request of requests) {
    const keys = requestKeys(request);
    if (stored(keys.key)) return keys.key;
    if (keys.legacyKey !== undefined && stored(keys.legacyKey)) return keys.legacyKey;
  }
  return undefined;
}
