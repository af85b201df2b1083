import { join } from 'node:path';
import { ConfigError } from '../core/errors.js';
import { packageRoot } from '../core/version.js';
import { loadDriftLensMaterials, NO_INTERVENTION, referenceOntologyText } from '../materials/driftlens.js';
import { builtinRecord, cloneRoot, isBuiltinMaterials, type MaterialsRecord } from '../materials/files.js';
import type { StringPart } from '../materials/python-literal.js';
import { validateOntology, type Ontology } from './ontology.js';
import { type PerturbationSet, validatePerturbationSet } from './perturbations.js';

/**
 * The texts a memory run sends: echolens's own (the default), or the DriftLens
 * authors' read from a local clone of their repository at run time: the
 * ontology, the persona strings (13 categories), the generation system prompt
 * and step-format instruction, and the labeler ("mapping") prompt.
 */
export interface ReferenceMemoryTexts {
  systemPrompt: string;
  /** The step-format instruction with a `question` field (the persona string is prepended to the question). */
  instruction: StringPart[];
  /** The labeler prompt with `ontology` and `reasoning` fields. */
  mappingTemplate: StringPart[];
  /** The ontology as the reference renders it into the labeler prompt. */
  ontologyText: string;
}

export interface MemoryMaterials {
  record: MaterialsRecord;
  /** Present when the materials are a DriftLens clone. */
  reference?: ReferenceMemoryTexts & { ontology: Ontology; perturbations: PerturbationSet };
}

/** The record of a built-in run names echolens's data files (an ontology or perturbation file of the user's is recorded apart). */
export function loadMemoryMaterials(materials: string | undefined): MemoryMaterials {
  if (isBuiltinMaterials(materials)) return { record: builtinRecord(builtinMemoryFiles(join(packageRoot(), 'data', 'memory-drift'))) };
  const loaded = loadDriftLensMaterials(cloneRoot(materials as string));
  const ontology = validateOntology(loaded.ontologyJson, loaded.ontologyFile);
  const perturbations = validatePerturbationSet(
    {
      name: 'DriftLens reference persona strings',
      version: `sha256:${loaded.record.files.find((f) => f.path.endsWith('interventions.py'))?.sha256.slice(0, 16) ?? 'unknown'}`,
      categories: loaded.interventions.map(({ category, strings }) => ({
        // The empty no-memory condition keeps echolens's id (the analysis's floor and reference).
        id: category === NO_INTERVENTION ? 'no_perturbation' : category,
        tier: category === NO_INTERVENTION ? 'none' : 'persona',
        description: category === NO_INTERVENTION ? 'no memory (the reference\u2019s empty intervention)' : '',
        stimuli: strings.map(({ index, text }) => ({ id: `${category}_${String(index + 1).padStart(2, '0')}`, text })),
      })),
    },
    loaded.record.root ?? 'DriftLens clone',
  );
  return {
    record: loaded.record,
    reference: {
      systemPrompt: loaded.systemPrompt,
      instruction: loaded.instruction,
      mappingTemplate: loaded.mappingTemplate,
      ontologyText: referenceOntologyText(loaded.ontologyJson),
      ontology,
      perturbations,
    },
  };
}

/**
 * With a clone, the ontology and the persona strings come from it: naming another ontology is a
 * config error. `perturbations:` may name a file of the user's: it supplies the noise and
 * life-event tiers the clone lacks (materials-stimuli.ts).
 */
export function checkMaterialsConfig(config: { materials?: string; ontology: string; perturbations: string; injection: string }): void {
  if (isBuiltinMaterials(config.materials)) return;
  if (config.ontology !== 'default') {
    throw new ConfigError('the DriftLens materials bring their own ontology: leave ontology at "default"', { field: 'ontology' });
  }
  if (config.injection !== 'prepend') {
    throw new ConfigError('with the DriftLens materials the persona string is prepended to the question (injection: prepend)', { field: 'injection' });
  }
}

export const BUILTIN_MEMORY_FILES = ['ontology.json', 'ontology-alt.json', 'perturbations.json', 'questions.jsonl'];

export function builtinMemoryFiles(dataDir: string): Array<{ path: string; file: string }> {
  return BUILTIN_MEMORY_FILES.map((name) => ({ path: `data/memory-drift/${name}`, file: join(dataDir, name) }));
}
