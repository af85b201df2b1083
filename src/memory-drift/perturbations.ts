import { z } from 'zod';
import { InputError } from '../core/errors.js';
import { parseInput } from './zod-input.js';
import { parseStructuredText, readBuiltinDataFile, readStructuredFile, type StructuredFormat } from './data-files.js';

/**
 * none = the empty no-memory condition; noise = pragmatic noise (negative control);
 * persona = user-attribute memory (experimental condition); life_event = positive control.
 */
export const PERTURBATION_TIERS = ['none', 'noise', 'persona', 'life_event'] as const;
export type PerturbationTier = (typeof PERTURBATION_TIERS)[number];

export interface PerturbationStimulus {
  id: string;
  /** One line; empty only for the `none` tier. */
  text: string;
  category: string;
  tier: PerturbationTier;
}

export const NO_PERTURBATION = 'no_perturbation';

const setSchema = z.object({
  name: z.string().trim().min(1).default('custom'),
  version: z.string().trim().min(1).default('unversioned'),
  description: z.string().optional(),
  categories: z
    .array(
      z.object({
        id: z.string().regex(/^[a-z0-9_]+$/, 'category ids use lowercase letters, digits and _'),
        tier: z.enum(PERTURBATION_TIERS),
        description: z.string().default(''),
        /** Why this category belongs to its tier (life events: the literature it comes from). */
        rationale: z.string().optional(),
        stimuli: z.array(z.object({ id: z.string().trim().min(1), text: z.string() })).min(1, 'needs at least one stimulus'),
      }),
    )
    .min(1),
});

/** A validated perturbation set: its categories, each with a tier and its stimuli. */
export type PerturbationSet = z.output<typeof setSchema>;
export type PerturbationCategory = PerturbationSet['categories'][number];

/** Validates a perturbation set: unique ids, one-line texts, empty text exactly for the `none` tier. */
export function validatePerturbationSet(value: unknown, file = '<perturbations>'): PerturbationSet {
  const set = parseInput(setSchema, value, { file, fallback: 'invalid perturbation set' });
  const categoryIds = new Set<string>();
  const stimulusIds = new Set<string>();
  const texts = new Map<string, string>();
  set.categories.forEach((category, ci) => {
    if (categoryIds.has(category.id)) {
      throw new InputError(`duplicate category id "${category.id}"`, { file, field: `categories.${ci}.id` });
    }
    categoryIds.add(category.id);
    category.stimuli.forEach((stimulus, si) => {
      const field = `categories.${ci}.stimuli.${si}`;
      if (stimulusIds.has(stimulus.id)) throw new InputError(`duplicate stimulus id "${stimulus.id}"`, { file, field: `${field}.id` });
      stimulusIds.add(stimulus.id);
      if (/[\r\n]/.test(stimulus.text)) throw new InputError('a perturbation must be a single line', { file, field: `${field}.text` });
      if (category.tier === 'none' ? stimulus.text !== '' : stimulus.text === '') {
        throw new InputError(category.tier === 'none' ? 'the none tier holds only the empty string' : 'only the none tier may be empty', {
          file,
          field: `${field}.text`,
        });
      }
      const owner = texts.get(stimulus.text);
      if (owner !== undefined) {
        // The same string in two categories would make a recorded text ambiguous.
        throw new InputError(`text duplicates stimulus "${owner}"`, { file, field: `${field}.text` });
      }
      texts.set(stimulus.text, stimulus.id);
    });
  });
  return set;
}

export function parsePerturbationSet(text: string, file = '<perturbations>', format: StructuredFormat = 'json'): PerturbationSet {
  return validatePerturbationSet(parseStructuredText(text, file, format), file);
}

export function loadPerturbationsFile(path: string): PerturbationSet {
  return validatePerturbationSet(
    readStructuredFile(path, (extension) => `unsupported perturbation file type "${extension}"`),
    path,
  );
}

export function loadBuiltinPerturbations(): PerturbationSet {
  const data = readBuiltinDataFile('perturbations');
  return parsePerturbationSet(data.text, data.file, 'json');
}

/** Every stimulus with its category and tier, in file order. */
export function listStimuli(set: PerturbationSet): PerturbationStimulus[] {
  return set.categories.flatMap((category) => category.stimuli.map((stimulus) => ({ ...stimulus, category: category.id, tier: category.tier })));
}
