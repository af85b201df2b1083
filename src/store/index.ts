// Public API of src/store/ (re-exported from the package root).
export { cellKey, contentKey, canonicalRequest, identityModel, preferStoredKeys, scrubSecrets, secretValuesFromEnv } from './keys.js';
export { RunStore, openStore } from './run-store.js';
export { separateUnitDraws, countSharedDraws } from './draw-units.js';
export type { DrawSeparation } from './draw-units.js';
export type { RunStatus, RunInfo, RunCellRecord, RunCellResultRecord, CellOutcome, CellQuery, OpenStoreOptions } from './run-store.js';
export { SCHEMA_VERSION } from './schema.js';
export { runCells, FatalBurstError, providerOf } from './runner.js';
export type {
  AdapterFactory,
  CostFn,
  ProviderLimits,
  ProgressSnapshot,
  RunCellsOptions,
  RunCellsResult,
  RunSummary,
  StopReason,
} from './runner.js';
export { TokenBucket } from './token-bucket.js';
export { WorkLane } from './lane.js';
export { cacheablePrefix, prefixSignature, schedulePrefixGroups, estimateInputTokens } from './schedule.js';
export type { PrefixSchedule } from './schedule.js';
export { createProgressReporter, formatProgress } from './progress.js';
export type { ProgressReporter, ProgressReporterOptions } from './progress.js';
export { createReplayAdapter } from './replay.js';
export { interruptSignals } from './interrupt.js';
export type { InterruptSignals } from './interrupt.js';
export { runCellsBatch } from './batch-runner.js';
export type { RunCellsBatchOptions } from './batch-runner.js';
export { BatchJobs, migrateBatchJobs } from './batch-jobs.js';
export type { BatchJob, BatchJobStatus } from './batch-jobs.js';
