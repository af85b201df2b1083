import { join } from 'node:path';
import { ConfigError } from '../core/errors.js';
import { packageRoot } from '../core/version.js';
import { type ContextEchoMaterials, loadContextEchoMaterials } from '../materials/contextecho.js';
import { builtinRecord, cloneRoot, isBuiltinMaterials, type MaterialsRecord } from '../materials/files.js';
import { BUILTIN_SYSTEM_PROMPTS } from './config.js';
import type { FingerprintPatterns } from './fingerprint.js';
import { JUDGE_RUBRIC } from './judge.js';
import { loadPersonaStimuli, type PersonaStimuli, type Stressor } from './stimuli.js';

/**
 * The texts a persona run sends: echolens's own (data/persona-drift/ and the
 * judge rubric in judge.ts), or the ContextEcho authors' read from a local clone
 * of their repository. Materials the authors did not publish (hardened
 * contracts, placebos, goal re-injection, decay exchanges, the long anchor,
 * paraphrases of probes) stay echolens's in both cases.
 */
export interface PersonaMaterials {
  stimuli: PersonaStimuli;
  judgeRubric: string;
  /** System prompts by name (`probe-reference`, `format-strict`, `none`). */
  systemPrompts: Readonly<Record<string, string>>;
  /** The assistant turn after the prefix; undefined = the session renderer's default. */
  acknowledgement?: string;
  /** Template of the `filler-flat` arm; undefined = echolens's. */
  fillerFlatTemplate?: string;
  /** Fingerprint word patterns; undefined = echolens's. */
  fingerprintPatterns?: FingerprintPatterns;
  record: MaterialsRecord;
}

const BUILTIN_FILES = ['probes.json', 'stressors.json', 'contracts.json', 'interventions.json'];

function builtinMaterials(): PersonaMaterials {
  const dir = join(packageRoot(), 'data', 'persona-drift');
  return {
    stimuli: loadPersonaStimuli(),
    judgeRubric: JUDGE_RUBRIC,
    systemPrompts: BUILTIN_SYSTEM_PROMPTS,
    record: builtinRecord(BUILTIN_FILES.map((name) => ({ path: `data/persona-drift/${name}`, file: join(dir, name) }))),
  };
}

const CHECKERS: Record<Stressor['id'], Stressor['checker']> = { S1: 'yes_no', S2: 'no_preamble', S3: 'one_sentence', S4: 'exact_json' };

/** echolens's stimuli with every text the authors published replaced by theirs. */
export function personaMaterialsFrom(reference: ContextEchoMaterials): PersonaMaterials {
  const builtin = loadPersonaStimuli();
  const stressors: Stressor[] = builtin.stressors.map((stressor) => ({
    ...stressor,
    checker: CHECKERS[stressor.id],
    prompts: reference.stressors[stressor.id],
    ...(stressor.id === 'S4' ? { expected: reference.s4Expected } : {}),
  }));
  const stimuli: PersonaStimuli = {
    probes: {
      version: 0,
      source: 'the ContextEcho authors\u2019 repository (local clone)',
      framing: reference.framing,
      categories: ['identity', 'experience', 'preference', 'relational', 'coding_self'],
      primaryCategory: 'coding_self',
      probes: reference.probes,
      // The reference lists no expected answers; only the simulated target reads them.
      negativeControls: reference.negativeControls.map((c) => ({ ...c, category: 'negative_control' as const, answer: '(not given)' })),
      paraphrases: {},
    },
    stressors,
    contracts: builtin.contracts,
    interventions: {
      ...builtin.interventions,
      v0: reference.anchors.v0,
      anchorUser: reference.anchors.aUser,
      demoRequest: reference.anchors.aDemoUser,
      demoAnswer: reference.anchors.aDemoAssistant,
      v2Reminder: reference.anchors.v2User,
      v2Demo: [reference.anchors.v2DemoUser, reference.anchors.v2DemoAssistant],
    },
  };
  const regex = (p: { source: string; flags: string }) => new RegExp(p.source, p.flags);
  return {
    stimuli,
    judgeRubric: reference.judgeRubric,
    systemPrompts: { ...BUILTIN_SYSTEM_PROMPTS, 'probe-reference': reference.probeSystemPrompt, 'format-strict': reference.stressorSystemPrompt },
    acknowledgement: reference.acknowledgement,
    fillerFlatTemplate: reference.fillerTemplate,
    fingerprintPatterns: {
      hedge: regex(reference.fingerprint.hedge),
      experiential: regex(reference.fingerprint.experiential),
      namedEntity: regex(reference.fingerprint.namedEntity),
    },
    record: reference.record,
  };
}

/** The materials a config's `materials:` names (`echolens`/unset, or a ContextEcho clone). */
export function loadPersonaMaterials(materials: string | undefined): PersonaMaterials {
  if (isBuiltinMaterials(materials)) return builtinMaterials();
  return personaMaterialsFrom(loadContextEchoMaterials(cloneRoot(materials as string)));
}

/** Fails when a recorded run's materials differ from what the same path holds now. */
export function checkSameMaterials(recorded: MaterialsRecord | undefined, now: MaterialsRecord, runId: string): void {
  // The built-in texts belong to the echolens version; only a clone can change under a run.
  if (recorded === undefined || now.source === 'echolens') return;
  const changed = recorded.files.filter((f) => now.files.find((g) => g.path === f.path)?.sha256 !== f.sha256).map((f) => f.path);
  if (changed.length > 0) {
    throw new ConfigError(`the materials of run ${runId} changed since it ran (${changed.join(', ')}); restore that version of the clone`, {
      field: 'materials',
    });
  }
}
