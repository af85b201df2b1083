// Public API of src/models/ (re-exported from the package root).
export {
  callWithRetry,
  CallFailedError,
  DEFAULT_RETRY_POLICY,
  backoffDelayMs,
  defaultSleep,
  resolveRetryPolicy,
  seededRandom,
} from './retry.js';
export type { CallWithRetryOptions, RetryEvent, RetryPolicy, RetryResult, SleepFn } from './retry.js';
export {};
