import { z } from 'zod';
import { definedFields } from '../core/copy-defined.js';

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
    /** Anthropic prompt-cache lifetime: 5m (default) or 1h (writes 2× instead of 1.25×). */
    cacheTtl: z.enum(['5m', '1h']).optional(),
    /** OpenAI prompt_cache_retention: in_memory or 24h (default: none online; 24h for --batch followers where the model takes it). */
    openaiCacheRetention: z.enum(['in_memory', '24h']).optional(),
    /** Send OpenAI prompt_cache_key per prefix group (default true). */
    promptCacheKey: z.boolean().optional(),
  })
  .strict()
  .default({});

/** The prompt-cache keys of a `limits:` section that hold a value: the runtime's cache settings. */
export const cacheSettingsOf = (limits: z.infer<typeof auditLimitsSchema>) => definedFields(limits, ['cacheTtl', 'openaiCacheRetention', 'promptCacheKey']);
