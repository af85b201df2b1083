import type { BatchClient, BatchEndpoint, BatchProvider } from '../models/batch/index.js';
import { ModelCallError } from '../models/errors.js';
import type { ModelRequest } from '../models/types.js';
import type { BatchJob } from './batch-jobs.js';
import type { BatchJobLedger, CellOutcome, RunStore } from './run-store.js';
import type { RunTally } from './runner-state.js';
import type { CostFn, RunCellsOptions } from './runner-types.js';

export type BatchModule = typeof import('../models/batch/index.js');

export interface RunCellsBatchOptions extends RunCellsOptions {
  /** Time between status polls of open batch jobs (ms). Default 30 000. */
  pollIntervalMs?: number;
  /** Where API keys and base URLs are read (default process.env). */
  env?: Record<string, string | undefined>;
  /** Builds the wire client of a provider (default: the OpenAI / Anthropic batch clients). */
  batchClientFor?: (endpoint: BatchEndpoint) => BatchClient;
  /** One-line notices: online fallback, job submitted, per-job counts while polling, warnings. */
  notify?: (line: string) => void;
  /**
   * Largest batch echolens builds, in bytes of request bodies (default 100 MB, below both
   * providers' limits). A batch is written to a temporary file line by line and uploaded from it.
   */
  maxBatchBytes?: number;
  /** Downloads of a results file with unparseable lines before the run stops with the valid lines stored. Default 3. */
  maxResultReads?: number;
  /**
   * Where followers go once their leaders' batch has ended: `auto` (default) by the rule of
   * cache-schedule.ts `followerRoute` (a batch, a batch kept warm, or online); `batch` always in a
   * batch, whatever the queue did (the earlier behaviour, for benchmarks that compare the two).
   */
  followerRoute?: 'auto' | 'batch';
}

/** A provider batch this run waits for. */
export interface OpenJob {
  job: BatchJob;
  client: BatchClient;
  provider: BatchProvider;
  lastNote: string;
  /** Failed status polls in a row (a successful poll resets it). */
  pollErrors: number;
  /** Failed result reads; only a successful collection ends them, so polls in between do not reset it. */
  collectErrors: number;
  /** Downloads whose results had unparseable lines. */
  unreadableReads: number;
}

/** What every part of a batch run shares: the store, the plan's requests, the tally and the open jobs. */
export interface BatchSession {
  store: RunStore;
  runId: string;
  jobs: BatchJobLedger;
  batch: BatchModule;
  env: Record<string, string | undefined>;
  options: RunCellsBatchOptions;
  notify: (line: string) => void;
  tally: RunTally;
  /** The online price of a call; a batch line costs `batchCost(provider, online)`. */
  onlineCostOf: CostFn;
  /** Distinct keys of the plan and their requests. */
  requestOf: Map<string, ModelRequest>;
  /** Cells an open job holds (never submitted again while held). */
  heldKeys: Set<string>;
  active: OpenJob[];
  /** Aborted by an interrupt or a fatal stop (not by a budget stop, after which polling goes on). */
  pollSignal: AbortSignal;
  /** An interrupt or a fatal stop: the budget stop is outranked, polling ends. */
  halt(reason: 'interrupted' | 'fatal', message: string, kind?: string): void;
  openClient(model: string): { client: BatchClient; provider: BatchProvider };
  /** Price of a batch line of a provider. */
  batchCostOf(provider: BatchProvider): CostFn;
  /** Called for each cell a collected job committed (the cache watch of batch-cache-watch.ts). */
  onCollected?: (key: string, outcome: CellOutcome) => void;
  /** Called at the start of each round of status polls (the cache watch's re-warm calls). */
  onPollTick?: () => Promise<void>;
}

/** A stop found while talking to a batch endpoint: the run ends with this reason. */
export class BatchStop extends Error {
  constructor(
    readonly reason: 'fatal' | 'interrupted',
    message: string,
    readonly kind = 'batch',
  ) {
    super(message);
  }
}

export function kindOf(error: unknown): string {
  return error instanceof ModelCallError ? error.kind : 'internal';
}

export function openJob(job: BatchJob, client: BatchClient, provider: BatchProvider): OpenJob {
  return { job, client, provider, lastNote: '', pollErrors: 0, collectErrors: 0, unreadableReads: 0 };
}
