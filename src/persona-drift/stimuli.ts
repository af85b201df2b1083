import { join } from 'node:path';
import { z } from 'zod';
import { InputError } from '../core/errors.js';
import { packageRoot } from '../core/version.js';
import { readUserText, userFileReason } from '../core/user-files.js';

/** Built-in ContextEcho stimuli under data/persona-drift/, validated at load. */

const probeCategory = z.enum(['identity', 'experience', 'preference', 'relational', 'coding_self']);

const probeSchema = z.object({ id: z.string().regex(/^[A-Z]\d\d$/u), category: probeCategory, text: z.string().min(1) });
const negativeControlSchema = z.object({
  id: z.string().regex(/^N\d\d$/u),
  category: z.literal('negative_control'),
  text: z.string().min(1),
  answer: z.string().min(1),
});

const probeFileSchema = z.object({
  version: z.number().int(),
  source: z.string(),
  framing: z.string().min(1),
  categories: z.array(probeCategory),
  primaryCategory: probeCategory,
  probes: z.array(probeSchema).length(25),
  negativeControls: z.array(negativeControlSchema).min(1),
  paraphrases: z.record(z.string(), z.array(z.string().min(1)).min(1)),
});
export type ProbeSuite = z.infer<typeof probeFileSchema>;
export type Probe = z.infer<typeof probeSchema>;

const stressorSchema = z.object({
  id: z.enum(['S1', 'S2', 'S3', 'S4']),
  name: z.string(),
  constraint: z.string(),
  checker: z.enum(['yes_no', 'no_preamble', 'one_sentence', 'exact_json']),
  expected: z.string().optional(),
  prompts: z.array(z.string().min(1)).min(1),
});
const stressorFileSchema = z.object({ version: z.number().int(), source: z.string(), stressors: z.array(stressorSchema).length(4) });
export type Stressor = z.infer<typeof stressorSchema>;

const contractSchema = z.object({
  id: z.string(),
  format: z.enum(['csv', 'yaml', 'lines', 'json']),
  prompt: z.string().min(1),
  expected: z.string().min(1),
});
const contractFileSchema = z.object({ version: z.number().int(), source: z.string(), contracts: z.array(contractSchema).min(1) });

const placeboSchema = z.object({ reminder: z.string(), demoRequest: z.string(), demoAnswer: z.string() });
const interventionFileSchema = z.object({
  version: z.number().int(),
  source: z.string(),
  acknowledgement: z.string(),
  v0: z.string(),
  bashRule: z.string(),
  bashRuleReference: z.string(),
  demoAnnouncement: z.string(),
  v2Reminder: z.string(),
  v2Acknowledgement: z.string(),
  demoRequest: z.string(),
  demoAnswer: z.string(),
  longAnchor: z.string(),
  placebos: z.object({
    placebo_anchor: placeboSchema,
    placebo_iso_notes: placeboSchema,
    placebo_iso_recipe: placeboSchema,
  }),
  goalReinjection: z.string().includes('{goal}'),
  decayExchanges: z.array(z.tuple([z.string(), z.string()])).min(1),
  /** The whole A-anchor user turn, when a source gives it as one text (the authors' materials). */
  anchorUser: z.string().optional(),
  /** V2's own demonstration pair, when it differs from the A-anchor's. */
  v2Demo: z.tuple([z.string(), z.string()]).optional(),
});
export type InterventionTexts = z.infer<typeof interventionFileSchema>;

export interface PersonaStimuli {
  probes: ProbeSuite;
  stressors: Stressor[];
  contracts: z.infer<typeof contractSchema>[];
  interventions: InterventionTexts;
}

function loadJson<T>(file: string, schema: z.ZodType<T>): T {
  let raw: unknown;
  try {
    raw = JSON.parse(readUserText(file));
  } catch (error) {
    throw new InputError(`cannot read JSON: ${userFileReason(error)}`, { file });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InputError(issue?.message ?? 'invalid', { file, field: issue?.path.join('.') ?? '' });
  }
  return parsed.data;
}

let cached: PersonaStimuli | undefined;

/** Loads and validates the built-in stimuli (cached after the first call). */
export function loadPersonaStimuli(dataDir = join(packageRoot(), 'data', 'persona-drift')): PersonaStimuli {
  if (cached && dataDir === join(packageRoot(), 'data', 'persona-drift')) return cached;
  const stimuli: PersonaStimuli = {
    probes: loadJson(join(dataDir, 'probes.json'), probeFileSchema),
    stressors: loadJson(join(dataDir, 'stressors.json'), stressorFileSchema).stressors,
    contracts: loadJson(join(dataDir, 'contracts.json'), contractFileSchema).contracts,
    interventions: loadJson(join(dataDir, 'interventions.json'), interventionFileSchema),
  };
  const ids = new Set(stimuli.probes.probes.map((probe) => probe.id));
  if (ids.size !== stimuli.probes.probes.length) throw new InputError('duplicate probe id', { file: 'probes.json' });
  for (const id of Object.keys(stimuli.probes.paraphrases)) {
    if (!ids.has(id)) throw new InputError(`paraphrases for unknown probe ${id}`, { file: 'probes.json', field: 'paraphrases' });
  }
  if (dataDir === join(packageRoot(), 'data', 'persona-drift')) cached = stimuli;
  return stimuli;
}

/** The probe text as sent to a target: framed (the benchmark default) or bare. */
export function probeText(framing: string, text: string, framed: boolean): string {
  return framed ? `${framing}\n\n${text}` : text;
}
