import { z } from 'zod';
import type { ChartSpec } from '../chart-spec.js';
import { RESULT_DOCUMENT_SCHEMA } from './version.js';

/**
 * The result document's shape (docs/result-document.md) as zod schemas, and its types inferred
 * from them (types.ts re-exports them): validation in tests, JSON Schema for readers.
 */

/** How a number in a table is written (report/format.ts): `signed` +0.25, `fixed` 0.250, `percent` +33.7%, `share` 33.7%, `integer` 1,234 (as is). */
const numberFormat = z.enum(['signed', 'fixed', 'percent', 'share', 'integer']);
const suffix = { suffix: z.string().optional() };
/**
 * A typed table cell: every renderer writes it the same way (format.ts), and a missing number is `—`.
 * `suffix` is text after the value (a flag, a unit count); `mark` highlights a text cell.
 */
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
/** Text with spans: plain strings, `code` (a name, a file) and `strong`. Escaped by every renderer. */
const rich = z.union([z.string(), z.array(z.union([z.string(), z.object({ code: z.string() }).strict(), z.object({ strong: z.string() }).strict()]))]);
/** `numeric`: right-aligned (numbers). */
const column = z.object({ header: z.string(), numeric: z.boolean().optional() }).strict();
const tableOf = { columns: z.array(column), rows: z.array(z.array(cell)) };
/** One example of model output: tags (target, item, …) and panes of text side by side, or a table of aligned steps. */
const example = z
  .object({
    tags: z.array(z.string()),
    title: z.string().optional(),
    panes: z.array(z.object({ label: z.string(), detail: z.string(), text: z.string() }).strict()).optional(),
    table: z.object(tableOf).strict().optional(),
  })
  .strict();
/**
 * One block of a section, as data: a heading (`minor` one level further down), a paragraph
 * (`quote`: set apart), a list, text shown as written (`code`: a fenced block in Markdown, `<pre>`
 * in HTML), a table, a chart, or `examples`, which hold untrusted model output: renderers escape
 * it and show it as text.
 */
const block = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('heading'), text: z.string(), id: z.string().optional(), minor: z.boolean().optional() }).strict(),
  z.object({ kind: z.literal('text'), text: rich, quote: z.boolean().optional() }).strict(),
  z.object({ kind: z.literal('list'), items: z.array(rich) }).strict(),
  z.object({ kind: z.literal('code'), text: z.string(), language: z.string().optional() }).strict(),
  z.object({ kind: z.literal('table'), ...tableOf, empty: z.string().optional() }).strict(),
  // The chart spec (report/chart-spec.ts) is data in the small Vega-Lite grammar svg.ts draws,
  // drawn as SVG in HTML under its own heading; Markdown carries the tables, not the chart.
  z
    .object({
      kind: z.literal('chart'),
      title: z.string().optional(),
      id: z.string().optional(),
      spec: z.custom<ChartSpec>((v) => typeof v === 'object' && v !== null),
      caption: z.string(),
    })
    .strict(),
  z.object({ kind: z.literal('examples'), text: z.string(), items: z.array(example) }).strict(),
]);
/** A section of the report: a heading and its blocks (tables, charts, notes). */
const section = z.object({ id: z.string().optional(), title: z.string(), blocks: z.array(block) }).strict();

const interval = z.tuple([z.number(), z.number()]).nullable();
/** One number of a verdict's first screen: a short label, the value as shown and a line of context. */
const number = z.object({ label: z.string(), value: z.string(), detail: z.string().optional() }).strict();

/** What a verdict and an estimate row both carry. */
const statistic = { estimate: z.number().nullable(), interval, p: z.number().nullable(), pAdjusted: z.number().nullable() };

/** How a verdict reads: `alert` = drift / failed check, `ok` = none found, `neutral` = inconclusive or not computable. */
const tone = z.enum(['alert', 'ok', 'neutral']);

/** A verdict on one subject (a target, with its judge or labeler where the audit has one). */
const verdict = z
  .object({
    subject: z.string(),
    /** The verdict in words, as every surface shows it. */
    verdict: z.string(),
    tone,
    /** The estimate the verdict rests on (null when it rests on several, or none), with its interval and p-values. */
    ...statistic,
    /** Minimum detectable |effect| at 80% power for this run (null: not computed, or the test cannot reject). */
    mde: z.number().nullable(),
    /** The effect the design is meant to detect, where the audit declares one. */
    effectOfInterest: z.number().nullable(),
    /** No effect found, and the run could not have detected the effect of interest. */
    underpowered: z.boolean(),
    /** A significant verdict that removing one unit (session) undoes. */
    fragile: z.boolean(),
    /** The unit a fragile verdict rests on. */
    drivenBy: z.string().nullable(),
    /** The headline numbers, formatted (the report's first screen). */
    numbers: z.array(number),
  })
  .strict();

/** One estimate with its interval: a row of the long-format CSV. */

const estimate = z
  .object({
    /** The table of the report the row belongs to (e.g. `drift`, `dRel`, `contrast`). */
    table: z.string(),
    subject: z.string().nullable(),
    judge: z.string().nullable(),
    group: z.string().nullable(),
    label: z.string().nullable(),
    ...statistic,
    n: z.number().nullable(),
    /** The multiple-comparison family `pAdjusted` is adjusted within (null: unadjusted). */
    family: z.string().nullable(),
    /** The unit of inference (positions, sessions, questions, cutpoints). */
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
        /** Some model of the run is a simulation (`sim:`): its numbers measure nothing real. */
        simulated: z.boolean(),
        /** Every model the run's config names (targets, judges, labeler). */
        models: z.array(z.string()),
        /** The materials the run read, in one line. */
        materials: z.string(),
        /** The procedure (calibrated or the authors' reference), in one line. */
        procedure: z.string(),
        echolensVersion: z.string().nullable(),
        gitCommit: z.string().nullable(),
        seed: z.number().nullable(),
      })
      .strict(),
    /** The run's cells: what the store links to the run (the same counts as `runs list`); a request asked twice within a run is answered and paid once. */
    counts: z.object({ cells: count, done: count, failed: count, pending: count, distinctRequests: count }).strict(),
    /** What the run cost, and its tokens and prompt-cache use over its distinct requests: `usd` is null when some cell's model has no known price (unknown, never $0). */
    cost: z
      .object({
        usd: z.number().nullable(),
        /** Dollars over the cells whose model has a known price. */
        pricedUsd: z.number(),
        unpricedCells: count,
        inputTokens: count,
        outputTokens: count,
        cachedInputTokens: count,
        cacheWriteTokens: count,
        /** Cells whose provider reported a prompt-cache read. */
        providerCacheHits: count,
      })
      .strict(),
    /** Why the answers cannot be analysed (gate/sanity.ts), or null. */
    notComputable: z.string().nullable(),
    verdicts: z.array(verdict),
    estimates: z.array(estimate),
    /** The report's sections (tables, charts as data, notes), rendered alike in HTML and Markdown. */
    sections: z.array(section),
  })
  .strict();

export type NumberFormat = z.infer<typeof numberFormat>;
export type RichText = z.infer<typeof rich>;
export type DocumentCell = z.infer<typeof cell>;
export type DocumentColumn = z.infer<typeof column>;
export type DocumentExample = z.infer<typeof example>;
export type DocumentBlock = z.infer<typeof block>;
export type DocumentSection = z.infer<typeof section>;
export type DocumentTone = z.infer<typeof tone>;
export type DocumentNumber = z.infer<typeof number>;
export type DocumentVerdict = z.infer<typeof verdict>;
export type EstimateRow = z.infer<typeof estimate>;
export type ResultDocument = z.infer<typeof resultDocumentSchema>;
export type DocumentCounts = ResultDocument['counts'];
export type DocumentCost = ResultDocument['cost'];
export type DocumentProvenance = ResultDocument['provenance'];
