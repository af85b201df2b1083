import { attempt, promptOf } from './contrasts.js';
import { holm } from '../stats/multiple-testing.js';
import { getOrInsert } from '../core/get-or-insert.js';
import type { AnalysisDesign, PersonaObservation } from './analysis-types.js';
import type { ReferenceBlock, ReferenceContract, ReferencePermutation } from './reference-types.js';
import { armClusterBootstrap, gapClusterBootstrap, referenceSignFlip, sessionWilcoxon, unpairedGapClusterBootstrap } from './reference-estimators.js';
import { referenceAnchorVariants, referenceCompliance } from './reference-stressors.js';
import { groupByPosition, holmFamilies, type MinusOne, referenceCategories, referenceTrajectories } from './reference-parity.js';

/**
 * The `reference` block of a persona report (pure): the numbers the ContextEcho authors' analysis
 * computes, from the same observations the calibrated report uses. It is reported beside the
 * calibrated statistics and never decides a verdict. Which cells enter each number is in
 * docs/statistics.md ("The reference procedure").
 */

export interface ReferenceOptionsResolved {
  B: number;
  seed: number;
  /** Unusable judgements in the plotted means: `keep` as −1 (the authors' figures) or `drop` (default). */
  minusOne?: MinusOne;
  /** |Δ| of a drifter in the taxonomy panel (default 0.30). */
  strongThreshold?: number;
}

const pairKey = (o: PersonaObservation) => `${o.session}\u0000${o.position}\u0000${o.item}\u0000${o.paraphrase}\u0000${o.sample}`;

/** The contrasts the authors test: every arm against scratch where scratch exists, and filler against real. */
function contrastsOf(arms: readonly string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (arms.includes('real') && arms.includes('filler')) out.push(['filler', 'real']);
  if (arms.includes('scratch')) for (const arm of arms) if (arm !== 'scratch') out.push([arm, 'scratch']);
  return out;
}

export function analyzeReference(observations: readonly PersonaObservation[], design: AnalysisDesign, options: ReferenceOptionsResolved): ReferenceBlock {
  const judge = design.judges[0] ?? null;
  const block: ReferenceBlock = {
    procedure: 'contextecho',
    judge,
    category: design.primaryCategory,
    B: options.B,
    seed: options.seed,
    arms: [],
    gap: [],
    permutation: [],
    byCategory: [],
    categoryPanel: [],
    trajectory: [],
    minusOne: options.minusOne ?? 'drop',
    compliance: [],
    anchorVariants: [],
    anchorVariantSummary: [],
    contracts: [],
    notComputed: [],
  };
  const minusOne = block.minusOne;
  const resampling = { B: options.B, seed: options.seed };
  // The headline cell of every number: the probe surface at the headline prompt and distance, no intervention.
  const headline = observations.filter(
    (o) =>
      o.status === 'done' &&
      o.surface === 'probe' &&
      o.mitigation === 'none' &&
      promptOf(o) === design.primarySystemPrompt &&
      o.distance === design.primaryDistance,
  );
  for (const target of design.targets) {
    const mine = headline.filter((o) => o.target === target);
    if (judge !== null) {
      const inCategory = mine.filter((o) => design.primaryCategory === 'all' || o.category === design.primaryCategory);
      const arms = [...new Set(inCategory.map((o) => o.arm))].sort();
      // Scores grouped by position (the forest figure keeps any integer score).
      const clusters = new Map(
        arms.map((arm) => [
          arm,
          groupByPosition(
            inCategory.filter((o) => o.arm === arm),
            judge,
            minusOne,
          ),
        ]),
      );
      for (const arm of arms) {
        const groups = [...(clusters.get(arm) as Map<string, number[]>).values()];
        if (groups.length === 0) continue;
        const r = armClusterBootstrap(groups, resampling);
        block.arms.push({ target, arm, mean: r.mean, ci: r.ci, positions: r.positions, n: r.n });
      }
      const real = clusters.get('real');
      const filler = clusters.get('filler');
      if (real && filler) {
        const both = [...real.keys()].filter((k) => filler.has(k)).map((k) => ({ real: real.get(k) as number[], filler: filler.get(k) as number[] }));
        // Same positions in both arms: the paired scheme; otherwise each arm over its own positions (as the authors' figure).
        const paired = both.length === real.size && both.length === filler.size;
        const gap = attempt(() =>
          paired ? gapClusterBootstrap(both, resampling) : unpairedGapClusterBootstrap([...real.values()], [...filler.values()], resampling),
        );
        if ('error' in gap) block.notComputed.push({ target, what: 'gap', error: gap.error });
        else block.gap.push({ target, estimate: gap.estimate, ci: gap.ci });
      }
      // The permutation pairs probes across all categories, as the authors' consolidation script does.
      const family: ReferencePermutation[] = [];
      const allArms = [...new Set(mine.map((o) => o.arm))].sort();
      for (const [comparison, baseline] of contrastsOf(allArms)) {
        const base = new Map<string, number>();
        for (const o of mine) if (o.arm === baseline && typeof o.scores[judge] === 'number') base.set(pairKey(o), o.scores[judge] as number);
        const deltas: number[] = [];
        for (const o of mine) {
          const b = base.get(pairKey(o));
          if (o.arm === comparison && typeof o.scores[judge] === 'number' && b !== undefined) deltas.push((o.scores[judge] as number) - b);
        }
        const contrast = `${comparison} - ${baseline}`;
        // An arm measured only elsewhere (per-cell positions beside a content-position file) has no contrast with scratch.
        if (deltas.length === 0 && baseline === 'scratch') continue;
        const test = attempt(() => referenceSignFlip(deltas, resampling));
        if ('error' in test) block.notComputed.push({ target, what: `permutation ${contrast}`, error: test.error });
        // pHolm and its family are set once every target's tests are in (holmFamilies below).
        else family.push({ target, contrast, mean: test.mean, p: test.p, pHolm: Number.NaN, family: 'within-target', familySize: 0 });
      }
      block.permutation.push(...family);
    }
    block.contracts.push(...contractRows(observations, target, block, resampling));
  }
  holmFamilies(block.permutation);
  const done = observations.filter((o) => o.status !== 'failed' && design.targets.includes(o.target));
  block.compliance = referenceCompliance(done, design.targets);
  const anchors = referenceAnchorVariants(done, design.targets);
  block.anchorVariants = anchors.rows;
  block.anchorVariantSummary = anchors.summary;
  if (judge !== null) {
    const probes = headline.filter((o) => design.targets.includes(o.target));
    const categories = referenceCategories(probes, design.targets, judge, {
      minusOne,
      strongThreshold: options.strongThreshold ?? 0.3,
      drifterCategory: 'coding_self',
    });
    block.byCategory = categories.byCategory;
    block.categoryPanel = categories.categoryPanel;
    block.trajectory = referenceTrajectories(probes, design.targets, judge, { minusOne, B: options.B, seed: options.seed });
  }
  return block;
}

/** Contract contrasts at the session level, Holm within the target (paper: Wilcoxon with a session bootstrap). */
function contractRows(observations: readonly PersonaObservation[], target: string, block: ReferenceBlock, resampling: ReferenceOptionsResolved) {
  const checked = observations.filter((o) => o.status === 'done' && o.target === target && o.surface === 'contract' && o.arm === 'real' && o.check);
  const cells = new Map<string, PersonaObservation[]>();
  for (const o of checked) {
    const key = `${o.item}\u0000${promptOf(o)}\u0000${o.distance}`;
    getOrInsert(cells, key, () => []).push(o);
  }
  const family: Array<Omit<ReferenceContract, 'pHolm'>> = [];
  for (const group of cells.values()) {
    const first = group[0] as PersonaObservation;
    const mitigations = [...new Set(group.map((o) => o.mitigation))].filter((m) => m !== 'none').sort();
    if (!group.some((o) => o.mitigation === 'none')) continue;
    for (const treated of mitigations) {
      const contrast = `${treated} - none`;
      // One pass-rate difference per session that has both arms.
      const rate = (mitigation: string) => {
        const out = new Map<string, { pass: number; n: number }>();
        for (const o of group) {
          if (o.mitigation !== mitigation) continue;
          const r = getOrInsert(out, o.session, () => ({ pass: 0, n: 0 }));
          r.n += 1;
          if (o.check?.pass) r.pass += 1;
        }
        return out;
      };
      const t = rate(treated);
      const b = rate('none');
      const differences = [...t.keys()]
        .filter((s) => b.has(s))
        .sort()
        .map((s) => {
          const tr = t.get(s) as { pass: number; n: number };
          const br = b.get(s) as { pass: number; n: number };
          return tr.pass / tr.n - br.pass / br.n;
        });
      const r = attempt(() => sessionWilcoxon(differences, resampling));
      if ('error' in r) {
        block.notComputed.push({ target, what: `contract ${first.item} ${contrast}`, error: r.error });
        continue;
      }
      family.push({
        target,
        item: first.item,
        contrast,
        systemPrompt: promptOf(first),
        distance: first.distance,
        sessions: r.sessions,
        mean: r.mean,
        ci: r.ci,
        p: r.p,
      });
    }
  }
  const adjusted = family.length > 0 ? holm(family.map((f) => f.p)) : [];
  return family.map((f, i) => ({ ...f, pHolm: adjusted[i] as number }));
}
