import { z } from 'zod';
import { auditLimitsSchema } from '../experiment/limits-schema.js';
import { auditGateSectionSchema } from '../gate/config.js';
import { CONTINUATION_ARMS, DEFAULT_WINDOW_TOKENS } from './arms.js';
import { CUTPOINT_STRATEGIES } from './cutpoints.js';

/**
 * `echolens continuation run [config.yaml]`: the tool-using continuation audit as one
 * validated config (docs/continuation.md). Defaults follow the paper's panel: 25
 * stratified cutpoints, four arms at ~3,000 tokens, argument fidelity of the next call.
 */

const positiveInt = z.number().int().positive();

/** The continuation audit's thresholds, as keys of a `gate:` section (each optional). */
export const continuationGateShape = {
  /** Fail when the primary contrast's (recent − cross) intention-to-treat fidelity difference is significant (p < α, either sign). */
  significantActionChange: z.boolean().optional(),
  /** Fail when that difference's absolute size is above this (fidelity is 0–1). */
  maxActionChange: z.number().positive().optional(),
};

export const continuationConfigSchema = z
  .object({
    name: z.string().min(1).default('continuation-audit'),
    /** The transcript whose next tool calls are the ground truth (Claude Code or Codex). */
    session: z.string().min(1, 'name the session transcript'),
    /** Another session whose real window is the `cross` arm (default: the same session, half a session away). */
    crossSession: z.string().min(1).optional(),
    /**
     * Several donor transcripts for the `cross` arm (instead of `crossSession`): cutpoints take
     * them in turn, and the donor is a sampled unit of every contrast with the cross arm
     * (docs/statistics.md, "Cross donors").
     */
    crossSessions: z.array(z.string().min(1)).min(2, 'list at least two donor transcripts (for one, use crossSession)').optional(),
    targets: z.array(z.string().min(1)).min(1, 'list at least one target model'),
    cutpoints: z
      .object({
        count: positiveInt.default(25),
        strategy: z.enum(CUTPOINT_STRATEGIES as unknown as [string, ...string[]]).default('stratified'),
        skipFirst: z.number().int().nonnegative().default(0),
      })
      .strict()
      .default({ count: 25, strategy: 'stratified', skipFirst: 0 }),
    arms: z
      .array(z.enum(CONTINUATION_ARMS))
      .min(2)
      .default([...CONTINUATION_ARMS]),
    /** Matched prefix length in tokens (≈ 4 characters each). */
    windowTokens: positiveInt.default(DEFAULT_WINDOW_TOKENS),
    toolTruncate: positiveInt.default(200),
    /** A tool schema file replacing the schemas reconstructed from the transcript. */
    tools: z.string().min(1).optional(),
    /** A task label file replacing the heuristic (docs/continuation.md). */
    tasks: z.string().min(1).optional(),
    minPromptChars: positiveInt.default(40),
    systemPrompt: z.string().optional(),
    toolChoice: z.enum(['auto', 'required']).default('auto'),
    decoding: z
      .object({
        temperature: z.number().min(0).max(2).optional(),
        maxTokens: positiveInt.optional(),
        seed: z.number().int().optional(),
      })
      .strict()
      .default({}),
    seed: z.number().int().default(42),
    analysis: z
      .object({
        resamples: z.number().int().min(20_000, 'use at least 20,000 sign-flip resamples').default(20_000),
        /** |Δ| fidelity worth detecting (default 0.15): a design whose MDE exceeds it is reported underpowered. */
        effectOfInterest: z.number().gt(0).max(1).optional(),
        /** Planning SD of paired fidelity differences for the design MDE printed before spending (default 0.55). */
        planningSd: z.number().gt(0).max(2).optional(),
        /**
         * Units of the test (docs/statistics.md, "Dependent cutpoints"): `none` (each cutpoint),
         * `task` (the cutpoints of one task), `{ turns: t }` (cutpoints within t timeline messages
         * of the previous one), `{ consecutive: k }` (runs of k cutpoints in timeline order).
         */
        clusterBy: z
          .union([z.literal('none'), z.literal('task'), z.object({ turns: positiveInt }).strict(), z.object({ consecutive: positiveInt }).strict()])
          .optional(),
      })
      .strict()
      .default({ resamples: 20_000 }),
    /** Personal data (names, phones, addresses, IPs, cards, ids, IBANs) in model answers replaced before they are stored. */
    redactResponses: z.boolean().optional(),
    limits: auditLimitsSchema,
    /**
     * Optional semantic-equivalence judge: asked only about free-text and command arguments of a
     * call to the right tool that score below an exact match (docs/continuation.md, "Judge").
     */
    judge: z
      .object({
        model: z.string().min(1, 'name the judge model'),
        /** Re-asks when a verdict does not parse. */
        retries: z.number().int().min(0).max(5).default(2),
      })
      .strict()
      .optional(),
    /**
     * `echolens` (default) or the path of a local clone of the authors' ContextEcho repository:
     * their continuation system prompt, acknowledgement turn and tool schemas (continuation/materials.ts).
     */
    materials: z.string().min(1).optional(),
    /**
     * `reference` also scores every answer as the authors' code does (tool match and jaccard_args,
     * continuation/reference-fidelity.ts) and reports it beside the calibrated fidelity, which stays the verdict.
     */
    procedure: z.enum(['echolens', 'reference']).optional(),
    /** CI gate thresholds read by `echolens gate` (absent = the gate's defaults). */
    /** Every run is a new measurement of the design (`--fresh`; docs/over-time.md): not part of the design id. */
    fresh: z.boolean().optional(),
    gate: auditGateSectionSchema(continuationGateShape).optional(),
  })
  .strict();

export type ContinuationConfig = z.infer<typeof continuationConfigSchema>;

export const DEFAULT_DECODING = { temperature: 0, maxTokens: 4096 } as const;
