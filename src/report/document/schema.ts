import { z } from 'zod';
import { RESULT_DOCUMENT_SCHEMA, type ResultDocument } from './types.js';

/** The result document's shape as a zod schema (validation in tests, JSON Schema for readers: docs/result-document.md). */

const interval = z.tuple([z.number(), z.number()]).nullable();
const number = z.object({ label: z.string(), value: z.string(), detail: z.string().optional() }).strict();

/** What a verdict and an estimate row both carry. */
const statistic = { estimate: z.number().nullable(), interval, p: z.number().nullable(), pAdjusted: z.number().nullable() };

const verdict = z
  .object({
    subject: z.string(),
    verdict: z.string(),
    tone: z.enum(['alert', 'ok', 'neutral']),
    ...statistic,
    mde: z.number().nullable(),
    effectOfInterest: z.number().nullable(),
    underpowered: z.boolean(),
    fragile: z.boolean(),
    drivenBy: z.string().nullable(),
    numbers: z.array(number),
  })
  .strict();

const estimate = z
  .object({
    table: z.string(),
    subject: z.string().nullable(),
    judge: z.string().nullable(),
    group: z.string().nullable(),
    label: z.string().nullable(),
    ...statistic,
    n: z.number().nullable(),
    family: z.string().nullable(),
    unit: z.string().nullable(),
    notes: z.array(z.string()),
    fragile: z.boolean(),
    underpowered: z.boolean(),
  })
  .strict();

const count = z.number().int().nonnegative();

export const resultDocumentSchema = z
  .object({
    schema: z.literal(RESULT_DOCUMENT_SCHEMA),
    run: z
      .object({
        id: z.string(),
        audit: z.string(),
        title: z.string(),
        name: z.string(),
        status: z.string(),
        startedAt: z.string(),
        endedAt: z.string().nullable(),
      })
      .strict(),
    provenance: z
      .object({
        simulated: z.boolean(),
        models: z.array(z.string()),
        materials: z.string(),
        procedure: z.string(),
        echolensVersion: z.string().nullable(),
        gitCommit: z.string().nullable(),
        seed: z.number().nullable(),
      })
      .strict(),
    counts: z.object({ cells: count, done: count, failed: count, pending: count, distinctRequests: count }).strict(),
    cost: z
      .object({
        usd: z.number().nullable(),
        pricedUsd: z.number(),
        unpricedCells: count,
        inputTokens: count,
        outputTokens: count,
        cachedInputTokens: count,
        cacheWriteTokens: count,
        providerCacheHits: count,
      })
      .strict(),
    notComputable: z.string().nullable(),
    verdicts: z.array(verdict),
    estimates: z.array(estimate),
    tables: z.array(
      z
        .object({ id: z.string(), title: z.string(), columns: z.array(z.string()), rows: z.array(z.array(z.union([z.string(), z.number(), z.null()]))) })
        .strict(),
    ),
    charts: z.array(
      z
        .object({
          id: z.string(),
          title: z.string(),
          kind: z.literal('forest'),
          rows: z.array(z.object({ label: z.string(), group: z.string().optional(), estimate: z.number(), lo: z.number(), hi: z.number() }).strict()),
        })
        .strict(),
    ),
  })
  .strict() satisfies z.ZodType<ResultDocument>;

/** The JSON Schema of the result document (draft 2020-12). */
export function resultDocumentJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(resultDocumentSchema) as Record<string, unknown>;
}
