import { ConfigError } from '../core/errors.js';
import type { PerturbationCategory, PerturbationSet, PerturbationTier } from './perturbations.js';
import { validatePerturbationSet } from './perturbations.js';

/**
 * The DriftLens authors' repository releases persona strings only: no
 * pragmatic-noise prefixes (the floor of d_rel) and no life events (the
 * positive control). A run with their materials keeps their persona strings
 * and their empty no-memory condition, and takes the missing tiers from
 * echolens's own set or from the user's `perturbations:` file. Every
 * condition records where its strings came from, so a report never passes a
 * borrowed stimulus off as the authors' (docs/replication.md (DriftLens section)).
 */

/** Where a condition's strings came from. */
export type ConditionSourceKind = 'materials' | 'builtin' | 'file';

export interface ConditionSource {
  condition: string;
  tier: PerturbationTier;
  source: ConditionSourceKind;
  /** The file the strings were read from (the clone's interventions file, the built-in data file, or the user's file). */
  file: string;
}

/** The tiers the authors' materials do not release, filled from elsewhere. */
export const SUPPLEMENTED_TIERS: readonly PerturbationTier[] = ['noise', 'life_event'];

export interface CompletedStimuli {
  perturbations: PerturbationSet;
  sources: ConditionSource[];
}

/**
 * The authors' conditions (no memory + persona) followed by the supplement's
 * noise and life-event categories. A supplement from the user's file may hold
 * only those tiers (and the empty none category, which is dropped: the
 * authors' empty intervention is the same condition).
 */
export function completeReferenceStimuli(
  reference: PerturbationSet,
  referenceFile: string,
  supplement: PerturbationSet,
  supplementSource: { kind: 'builtin' | 'file'; file: string },
): CompletedStimuli {
  if (supplementSource.kind === 'file') {
    const persona = supplement.categories.filter((c) => c.tier === 'persona').map((c) => c.id);
    if (persona.length > 0) {
      throw new ConfigError(
        `with the DriftLens materials the persona strings are the authors'; the perturbations file may add only noise and life_event categories, but it has persona categories (${persona.join(', ')})`,
        { field: 'perturbations' },
      );
    }
  }
  const own = reference.categories.filter((c) => !SUPPLEMENTED_TIERS.includes(c.tier));
  const added: PerturbationCategory[] = supplement.categories.filter((c) => SUPPLEMENTED_TIERS.includes(c.tier));
  const taken = new Set(own.map((c) => c.id));
  const clash = added.find((c) => taken.has(c.id));
  if (clash !== undefined) {
    throw new ConfigError(`the perturbation category "${clash.id}" exists both in the DriftLens materials and in ${supplementSource.file}`, {
      field: 'perturbations',
    });
  }
  const perturbations = validatePerturbationSet(
    {
      name: `${reference.name} + ${supplement.name}`,
      version: `${reference.version} + ${supplement.version}`,
      categories: [...own, ...added],
    },
    `${referenceFile} + ${supplementSource.file}`,
  );
  const sources: ConditionSource[] = [
    ...own.map((c) => ({ condition: c.id, tier: c.tier, source: 'materials' as const, file: referenceFile })),
    ...added.map((c) => ({ condition: c.id, tier: c.tier, source: supplementSource.kind, file: supplementSource.file })),
  ];
  return { perturbations, sources };
}

/**
 * d_rel divides by the spread of the pragmatic-noise conditions: a materials
 * run that plans persona conditions without any noise condition could only
 * report every d_rel as n/a, so it is refused before any call.
 */
export function checkNoiseFloor(conditions: readonly string[], set: PerturbationSet, supplementFile: string): void {
  const tierOf = new Map(set.categories.map((c) => [c.id, c.tier]));
  const run = conditions.map((id) => ({ id, tier: tierOf.get(id) }));
  if (!run.some((c) => c.tier === 'persona' || c.tier === 'life_event')) return;
  if (run.some((c) => c.tier === 'noise')) return;
  const available = set.categories.filter((c) => c.tier === 'noise').map((c) => c.id);
  const why =
    available.length === 0
      ? `the authors' materials have no pragmatic-noise strings and ${supplementFile} has no noise category either: add noise categories to the perturbations file (or use perturbations: builtin)`
      : `the conditions list names no noise category: add at least one of ${available.join(', ')} to conditions`;
  throw new ConfigError(`d_rel = (μ_treat − μ_noise)/σ_noise needs a pragmatic-noise floor, and this run would have none: ${why}`, {
    field: available.length === 0 ? 'perturbations' : 'conditions',
  });
}
