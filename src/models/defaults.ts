/** Used when a request does not say how many tokens it may produce (docs/decisions.md#d1: always explicit on the wire). */
export const DEFAULT_MAX_TOKENS = 4096;
/** Whole-call limit for one model call. */
export const DEFAULT_TIMEOUT_MS = 600_000;
/** Longest silence allowed in a streamed answer, including before the first event. */
export const DEFAULT_STALL_TIMEOUT_MS = 120_000;
