import { z } from 'zod';
import type { ChartSpec } from '../chart-spec.js';
import { RESULT_DOCUMENT_SCHEMA, type ResultDocument } from './types.js';

const numberFormat = z.enum(['signed', 'fixed', 'percent', 'share', 'integer']);
const suffix = { suffix: z.string().optional() };
const cell = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('text'), text: z.string(), code: z.boolean().optional(), mark: z.boolean().optional() }).strict(),
  z.object({ kind: z.literal('number'), value: z.number().nullable(), format: numberFormat, digits: z.number().int().optional(), ...suffix }).strict(),
  z
    .object({
      kind: z.literal('interval'),
      estimate: z.number().nullable(),
      interval: z.tuple([z.number(), z.number()]).nullable(),
      format: numberFormat,
      digits: z.number().int().optional(),
      ...suffix,
    })
    .strict(),
  z.object({ kind: z.literal('p'), value: z.number().nullable(), ...suffix }).strict(),
]);
const rich = z.union([z.string(), z.array(z.union([z.string(), z.object({ code: z.string() }).strict(), z.object({ strong: z.string() }).strict()]))]);
const column = z.object({ header: z.string(), numeric: z.boolean().optional() }).strict();
const tableOf = { columns: z.array(column), rows: z.array(z.array(cell)) };
const block = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('heading'), text: z.string(), id: z.string().optional(), minor: z.boolean().optional() }).strict(),
  z.object({ kind: z.literal('text'), text: rich, quote: z.boolean().optional() }).strict(),
  z.object({ kind: z.literal('list'), items: z.array(rich) }).strict(),
  z.object({ kind: z.literal('code'), text: z.string(), language: z.string().optional() }).strict(),
  z.object({ kind: z.literal('table'), ...tableOf, empty: z.string().optional() }).strict(),
  // The chart spec (report/chart-spec.ts) is data in the small Vega-Lite grammar svg.ts draws.
  z
    .object({
      kind: z.literal('chart'),
      title: z.string().optional(),
      id: z.string().optional(),
      spec: z.custom<ChartSpec>((v) => typeof v === 'object' && v !== null),
      caption: z.string(),
    })
    .strict(),
  z
    .object({
      kind: z.literal('examples'),
      text: z.string(),
      items: z.array(
        z
          .object({
            tags: z.array(z.string()),
            title: z.string().optional(),
            panes: z.array(z.object({ label: z.string(), detail: z.string(), text: z.string() }).strict()).optional(),
            table: z.object(tableOf).strict().optional(),
          })
          .strict(),
      ),
    })
    .strict(),
]);
const section = z.object({ id: z.string().optional(), title: z.string(), blocks: z.array(block) }).strict();

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
    sections: z.array(section),
  })
  .strict() satisfies z.ZodType<ResultDocument>;
