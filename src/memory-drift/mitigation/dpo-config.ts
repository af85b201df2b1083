import { dirname, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { loadConfigFile } from '../../core/config-file.js';

const positiveInt = z.number().int().positive();

/** `echolens memory dpo-pairs` config (docs/mitigation.md). Paper defaults throughout. */
export const dpoConfigSchema = z.strictObject({
  name: z.string().trim().min(1).default('sympreference'),
  questions: z.strictObject({ file: z.string().min(1).optional(), limit: positiveInt.optional() }).default({}),
  perturbations: z
    .strictObject({
      file: z.string().min(1).optional(),
      tiers: z
        .array(z.enum(['noise', 'persona', 'life_event']))
        .min(1)
        .default(['persona']),
    })
    .default({ tiers: ['persona'] }),
  /** Personas per question, sampled without replacement (App. I.1: three). */
  personasPerQuestion: positiveInt.default(3),
  generator: z.string().min(1),
  candidates: z.number().int().min(2).default(10),
  /** Candidates with s_cot; default half (rounded up). */
  withInstruction: z.number().int().min(0).optional(),
  params: z
    .strictObject({
      temperature: z.number().min(0).default(1.0),
      topP: z.number().gt(0).max(1).default(0.95),
      maxTokens: positiveInt.default(2048),
    })
    .default({ temperature: 1.0, topP: 0.95, maxTokens: 2048 }),
  judge: z.string().min(1),
  judgeReasks: z.number().int().min(0).default(2),
  rewrite: z.strictObject({ model: z.string().min(1), reasks: z.number().int().min(0).default(2) }).optional(),
  external: z
    .strictObject({
      file: z.string().min(1),
      /** Share of SymPreference in the mix (paper: 0.5). */
      mixRatio: z.number().gt(0).max(1).default(0.5),
      maxTokenDifference: z.number().int().min(0).default(20),
      subjectiveField: z.string().min(1).default('subjective'),
    })
    .optional(),
  quickSubset: positiveInt.default(250),
  seed: z.number().int().default(42),
  out: z.string().min(1).default('dpo-data'),
});

export type DpoConfig = z.infer<typeof dpoConfigSchema>;

/** Loads a dpo-pairs config; relative file paths resolve against the config's folder. */
export function loadDpoConfig(file: string, overrides: readonly string[] = []): DpoConfig {
  const { config } = loadConfigFile(file, dpoConfigSchema, overrides);
  const base = dirname(resolve(file));
  const at = (path: string) => (isAbsolute(path) ? path : resolve(base, path));
  return {
    ...config,
    questions: { ...config.questions, ...(config.questions.file ? { file: at(config.questions.file) } : {}) },
    perturbations: { ...config.perturbations, ...(config.perturbations.file ? { file: at(config.perturbations.file) } : {}) },
    ...(config.external ? { external: { ...config.external, file: at(config.external.file) } } : {}),
    out: at(config.out),
  };
}
