import { z } from 'zod';

const positiveInt = z.number().int().positive();

/**
 * The `limits:` section every audit config shares (rates, budget, per-attempt deadline);
 * the run command's flags override it (runAudit).
 */
export const auditLimitsSchema = z
  .object({
    concurrency: positiveInt.optional(),
    requestsPerMinute: positiveInt.optional(),
    tokensPerMinute: positiveInt.optional(),
    maxCostUsd: z.number().positive().optional(),
    /** Deadline of one attempt of one call, in ms (a hung endpoint cannot hold a cell longer). */
    timeoutMs: positiveInt.max(3_600_000, 'timeoutMs is at most 3,600,000 (one hour per attempt)').optional(),
  })
  .strict()
  .default({});
