import { z } from 'zod';
import { auditLimitsSchema } from '../experiment/limits-schema.js';
import { auditGateSectionSchema } from '../gate/config.js';
import { isEmbeddingModelRef } from '../models/embeddings.js';
import { identityModel } from '../store/keys.js';

/**
 * `echolens memory run <config.yaml>`: the DriftLens grid as one validated
 * config. Defaults follow the paper: inference at T 0.7, top-p 0.98, top-k 50
 * (where the provider takes it), 2,048 new tokens (App. I.3); a temperature-0
 * labeler re-asked twice on unparseable output (docs/decisions.md#d1, #d2); prepended
 * memory (docs/decisions.md#d10); B = 10,000 cluster-bootstrap replicates (§2.5).
 */

const positiveInt = z.number().int().positive();
/** Grid bounds, checked before any planning: a typo such as `k: 100000` must not plan millions of cells. */
const MAX_SAMPLES = 1000;
const MAX_BOOTSTRAP = 1_000_000;

const extraDecoding = {
  thinkingBudget: positiveInt.optional(),
  chatTemplateKwargs: z.record(z.string(), z.unknown()).optional(),
};

/** Generation decoding: each field defaults to the paper's value; `null` sends nothing for it. */
const generationDecodingSchema = z
  .object({
    temperature: z.number().min(0).max(2).default(0.7),
    topP: z.number().gt(0).max(1).nullable().default(0.98),
    /** Sent only to providers that take top-k (not OpenAI's API). */
    topK: z.number().int().positive().nullable().default(50),
    maxTokens: positiveInt.default(2048),
    ...extraDecoding,
  })
  .strict();

/** The memory audit's thresholds, as keys of a `gate:` section (each optional). */
export const memoryGateShape = {
  /** Fail when a persona or life-event tier's DTW elevation over the no-memory floor is significant (p < α, above 0). */
  significantElevation: z.boolean().optional(),
  /** Fail when a persona or life-event tier's DTW elevation is above this fraction (0.25 = +25%). */
  maxElevation: z.number().positive().optional(),
};

export type MemoryDecoding = z.infer<typeof generationDecodingSchema>;

const labelerDecodingSchema = z
  .object({
    temperature: z.number().min(0).max(2).default(0),
    topP: z.number().gt(0).max(1).nullable().default(null),
    topK: z.number().int().positive().nullable().default(null),
    maxTokens: positiveInt.default(1024),
    seed: z.number().int().optional(),
    ...extraDecoding,
  })
  .strict();

/** The paper's generation settings (App. I.3). */
export const PAPER_DECODING: Readonly<MemoryDecoding> = Object.freeze({ temperature: 0.7, topP: 0.98, topK: 50, maxTokens: 2048 });

const questionsSchema = z
  .object({
    /**
     * builtin: data/memory-drift/questions.jsonl; file: a CSV/JSONL of your own; hf: a Hugging Face
     * dataset (over the network); benchmark: the authors' released benchmark files read locally
     * (.parquet, .json, .jsonl; benchmark-files.ts).
     */
    source: z.enum(['builtin', 'file', 'hf', 'benchmark']).default('builtin'),
    /** With source benchmark: the App. A keyword filters (none, drop-list, keep-signals). */
    curation: z.enum(['none', 'drop-list', 'keep-signals']).optional(),
    file: z.string().min(1).optional(),
    dataset: z.string().min(1).optional(),
    hfConfig: z.string().min(1).optional(),
    split: z.string().min(1).optional(),
    column: z.string().min(1).optional(),
    idColumn: z.string().min(1).optional(),
    domainColumn: z.string().min(1).optional(),
    domain: z.string().min(1).optional(),
    /** Base URL of a datasets-server mirror (default: the public one). */
    hfBaseUrl: z.string().url().optional(),
    /** Keep only these domains / ids (applied before limit and sample). */
    domains: z.array(z.string().min(1)).optional(),
    ids: z.array(z.string().min(1)).optional(),
    /** The first n questions (after filters). */
    limit: positiveInt.optional(),
    /** A seeded random subset of n questions (after limit), kept in source order. */
    sample: positiveInt.optional(),
  })
  .strict()
  .superRefine((q, ctx) => {
    // Which fields each source needs and which it does not read: [broken, field, message], in report order.
    const rules: Array<[boolean, string, string]> = [
      [q.source === 'file' && q.file === undefined, 'file', 'source "file" needs questions.file (a .csv or .jsonl)'],
      [
        q.source === 'benchmark' && q.file === undefined,
        'file',
        'source "benchmark" needs questions.file (a .parquet, .json or .jsonl of the authors’ benchmark)',
      ],
      [q.source !== 'benchmark' && q.curation !== undefined, 'curation', 'questions.curation applies to source: benchmark'],
      [q.source === 'hf' && q.dataset === undefined, 'dataset', 'source "hf" needs questions.dataset (owner/name)'],
      [q.source !== 'file' && q.source !== 'benchmark' && q.file !== undefined, 'file', 'questions.file is read only with source: file or benchmark'],
      [q.source !== 'hf' && q.dataset !== undefined, 'dataset', 'questions.dataset is read only with source: hf'],
    ];
    for (const [broken, field, message] of rules) if (broken) ctx.addIssue({ code: 'custom', path: [field], message });
  });

export const memoryConfigSchema = z
  .object({
    name: z.string().min(1).default('memory-audit'),
    /** Models audited (model refs; `sim:memory` is a simulation). */
    targets: z.array(z.string().min(1)).min(1, 'name at least one target model'),
    /** The labeler that maps each step to Category/Subcategory (the paper: one labeler for every evaluation). */
    labeler: z.string().min(1, 'name the labeler model'),
    questions: questionsSchema.default({ source: 'builtin' }),
    /** Perturbation categories to run (`all`, or ids); no_perturbation is always added (it holds the reference). */
    conditions: z.union([z.literal('all'), z.array(z.string().min(1)).min(1)]).default('all'),
    /** `builtin` or a JSON/YAML perturbation set of your own. */
    perturbations: z.string().min(1).default('builtin'),
    /** Stimuli of each category per question (chosen by a seeded hash), or `all`. */
    stimuliPerCategory: z.union([positiveInt.max(MAX_SAMPLES, `stimuliPerCategory is at most ${MAX_SAMPLES} (or 'all')`), z.literal('all')]).default(1),
    /** Samples per (question, stimulus); no_perturbation gets the reference sample 0 plus k more. */
    k: positiveInt.max(MAX_SAMPLES, `k is at most ${MAX_SAMPLES} samples per (question, stimulus)`).default(1),
    injection: z.enum(['prepend', 'system', 'memory-tool']).default('prepend'),
    /** `default`, `alt` (the reworded definitions), or a JSON/YAML ontology file. */
    ontology: z.string().min(1).default('default'),
    /** System prompt of generation: `default`, `none`, or `text:<prompt>`. */
    systemPrompt: z.string().min(1).default('default'),
    decoding: generationDecodingSchema.default({ ...PAPER_DECODING }),
    /**
     * Seed sent with each generation call: `cell` = derived from the cell's identity (question,
     * condition, stimulus, sample, run seed), never shared inside a (target, question);
     * `offset` = seed + sample index (earlier versions' default: sample i of every condition
     * repeats the no-memory sample i's seed, the reference included); `fixed` = the run seed
     * for every call; `none` = no seed sent.
     */
    sampleSeeds: z.enum(['cell', 'offset', 'fixed', 'none']).default('cell'),
    /** Where the steps come from: auto = tags in the text, else the model's separate reasoning trace, else the text's fallbacks. */
    steps: z
      .object({
        source: z.enum(['auto', 'text', 'reasoning']).default('auto'),
        /** Steps kept per answer (the first ones); the rest are cut and the cut is recorded and reported. */
        maxSteps: positiveInt.default(64),
        /** Steps per labeler call (default 64): a longer answer is labeled in consecutive chunks (chunks.ts). */
        chunkSteps: positiveInt.optional(),
        /** Characters of step text per labeler call (default 48,000); a longer single step is clipped in the prompt. */
        chunkChars: positiveInt.optional(),
      })
      .strict()
      .default({ source: 'auto', maxSteps: 64 }),
    labelerDecoding: labelerDecodingSchema.default({ temperature: 0, topP: null, topK: null, maxTokens: 1024 }),
    /**
     * Optional refusal judge (refusal-judge.ts): a model reference, or `{ model, prompt }`. Each
     * answered generation gets a judge cell; its verdict decides, the deterministic detector
     * decides where the judge has none (docs/decisions.md, "Refusal judge").
     */
    refusalJudge: z.union([z.string().min(1), z.object({ model: z.string().min(1), prompt: z.string().min(1).optional() }).strict()]).optional(),
    /** Re-asks after an unparseable labeler output (docs/decisions.md#d2). */
    labelerReasks: z.number().int().min(0).max(5).default(2),
    /** An unknown label fails the parse (and is re-asked), or becomes `unmapped`. */
    unknownLabel: z.enum(['error', 'unmapped']).default('error'),
    /** Offer the labeler `unmapped` for steps no definition fits (docs/decisions.md#d6). */
    allowUnmapped: z.boolean().default(true),
    seed: z.number().int().default(42),
    /**
     * What identifies a model in the cell keys: absent = provider + model name (a `@baseURL` is
     * recorded with each cell, not hashed: a local server restarted on another port re-runs
     * nothing); `url` = the whole reference, base URL included (the rule of earlier versions).
     */
    identity: z.literal('url').optional(),
    analysis: z
      .object({
        B: positiveInt.max(MAX_BOOTSTRAP, `B is at most ${MAX_BOOTSTRAP} bootstrap resamples`).default(10_000),
        alpha: z.number().gt(0).lt(1).default(0.05),
        /** reference: every sample against no-memory sample 0 (docs/decisions.md#d8); all-pairs: against every no-memory sample. */
        pairing: z.enum(['reference', 'all-pairs']).default('reference'),
      })
      .strict()
      .default({ B: 10_000, alpha: 0.05, pairing: 'reference' }),
    /**
     * docs/decisions.md#d5 `dtw-reference`, for comparison with the authors' numbers only: fastdtw over
     * cosine distances of symbol embeddings ÷ path length. `embeddings`: a `.json` file
     * (`{ "Category/Subcategory": [numbers…] }`) or an embeddings model reference.
     */
    referenceMetric: z
      .object({
        embeddings: z.string().min(1),
        radius: positiveInt.default(1),
        flavor: z.enum(['compiled', 'pure-python']).default('compiled'),
        /** Text sent to an embeddings model: the subcategory name (the authors' symbol) or the whole `Category/Subcategory`. */
        embedText: z.enum(['subcategory', 'symbol']).default('subcategory'),
      })
      .strict()
      .optional(),
    /**
     * Where the texts come from: `echolens` (default: echolens's own prompts, ontology and
     * perturbations as configured) or the path of a local clone of the authors' DriftLens
     * repository, read at run time (ontology, persona strings, generation and labeler prompts).
     */
    materials: z.string().min(1).optional(),
    /** `reference` applies the reference's procedural differences (the labeler sees the whole response). */
    procedure: z.enum(['echolens', 'reference']).optional(),
    /** What the labeler reads: the extracted `steps` (echolens) or the `whole-response` (the reference; the labeler splits it). */
    labelerInput: z.enum(['steps', 'whole-response']).optional(),
    /** Personal data (names, phones, addresses, IPs, cards, ids, IBANs) in model answers replaced before they are stored. */
    redactResponses: z.boolean().optional(),
    limits: auditLimitsSchema,
    /** CI gate thresholds read by `echolens gate` (absent = the gate's defaults). */
    /** Every run is a new measurement of the design (`--fresh`; docs/over-time.md): not part of the design id. */
    fresh: z.boolean().optional(),
    gate: auditGateSectionSchema(memoryGateShape).optional(),
  })
  .strict()
  .superRefine((config, ctx) => {
    if (config.systemPrompt !== 'default' && config.systemPrompt !== 'none' && !config.systemPrompt.startsWith('text:')) {
      ctx.addIssue({
        code: 'custom',
        path: ['systemPrompt'],
        message: `unknown system prompt "${config.systemPrompt}": use default, none or "text:<your prompt>"`,
      });
    }
    const embeddings = config.referenceMetric?.embeddings;
    if (embeddings !== undefined && !isEmbeddingsFile(embeddings) && !isEmbeddingModelRef(embeddings)) {
      ctx.addIssue({
        code: 'custom',
        path: ['referenceMetric', 'embeddings'],
        message: `"${embeddings}" is neither a .json embeddings file nor an embeddings model reference (openai: or an OpenAI-compatible provider)`,
      });
    }
    const seen = new Set<string>();
    const names = new Map<string, string>();
    config.targets.forEach((target, index) => {
      if (seen.has(target)) ctx.addIssue({ code: 'custom', path: ['targets', index], message: `target "${target}" is listed twice` });
      seen.add(target);
      // Without identity: url, two servers of the same model name are one model (one set of cells).
      const name = config.identity === 'url' ? target : identityModel({ model: target });
      const other = names.get(name);
      if (other !== undefined && other !== target) {
        ctx.addIssue({
          code: 'custom',
          path: ['targets', index],
          message: `targets "${other}" and "${target}" are the same model (${name}) on two base URLs: cells are keyed by provider and model name, so they would share answers — set identity: url to keep them apart`,
        });
      }
      names.set(name, target);
    });
  });

export type MemoryConfig = z.infer<typeof memoryConfigSchema>;

/** The generation system prompt a config names (`undefined` = the built-in default, `null` = none). */
export function resolveMemorySystemPrompt(name: string): string | null | undefined {
  if (name === 'default') return undefined;
  if (name === 'none') return null;
  return name.slice('text:'.length);
}

/** `referenceMetric.embeddings` names a JSON file (else an embeddings model reference). */
export function isEmbeddingsFile(source: string): boolean {
  return source.toLowerCase().endsWith('.json');
}

/** What the labeler reads, resolved from `labelerInput` and `procedure`. */
export function memoryLabelerInput(config: Pick<MemoryConfig, 'labelerInput' | 'procedure'>): 'steps' | 'whole-response' {
  return config.labelerInput ?? (config.procedure === 'reference' ? 'whole-response' : 'steps');
}
