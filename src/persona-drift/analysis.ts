import { isPresent } from '../core/maybe.js';
import { agreement, signAgreement } from '../stats/agreement.js';
import { varianceDecomposition } from '../stats/variance-decomposition.js';
import {
  analyzeCompaction,
  analyzeContractContrasts,
  analyzeDesignContrasts,
  analyzeDrift,
  analyzeMitigations,
  analyzeScratch,
  analyzeStressorContrasts,
} from './analysis-effects.js';
import { resolveDesign } from './analysis-design.js';
import type { AnalysisOptions, PersonaReport } from './report-types.js';
import type {
  AnalysisDesign,
  PersonaInference,
  JudgeAgreementResult,
  PersonaObservation,
  ResolvedOptions,
  StressorResult,
  TargetDrift,
  GapEstimate,
  VerbosityResult,
} from './analysis-types.js';
import { attempt, groupBy, promptOf } from './contrasts.js';
import { type Fingerprint, type FingerprintPatterns, fingerprint, fingerprintPca } from './fingerprint.js';
import { analyzeReference } from './reference-analysis.js';
import { analyzeContentPosition } from './analysis-content-position.js';
import { analyzeExtras, headlineObservations } from './analysis-extras.js';

export type * from './analysis-types.js';
export type * from './report-types.js';

/**
 * ContextEcho analysis (§2.4, §3, appendices), pure: observations in, numbers out. Every
 * estimate lives in one named cell of the design (target × judge × system prompt × arm ×
 * mitigation × distance × surface × category); inference is at the sampled unit (positions
 * in one session, sessions when there are several). Every number sits under a stable key of
 * `PersonaReport` (docs/persona-report-schema.md); statistical choices are in
 * docs/statistics.md. A statistic the design cannot support is `{ error }` with what to change.
 */

/** The analysis options with their defaults (calibration resolves them as the report does). */
export function resolveOptions(options: AnalysisOptions): ResolvedOptions {
  return {
    B: options.B ?? 20_000,
    seed: options.seed ?? 42,
    strongThreshold: options.strongThreshold ?? 0.3,
    tostMargin: options.tostMargin ?? 0.08,
    alpha: options.alpha ?? 0.05,
    primaryCategory: options.primaryCategory === undefined ? null : options.primaryCategory,
  };
}

/** Design resolution and every test of the report, without the descriptive tables. */
export function analyzePersonaInference(observations: readonly PersonaObservation[], options: AnalysisOptions = {}): PersonaInference {
  const resolved = resolveOptions(options);
  const design = resolveDesign(observations, options, resolved.primaryCategory);
  const { drift, verdicts } = analyzeDrift(observations, design, resolved);
  return {
    design,
    verdicts,
    drift,
    contrasts: analyzeDesignContrasts(observations, design, resolved),
    mitigations: analyzeMitigations(observations, design, resolved),
    stressorContrasts: analyzeStressorContrasts(observations, design, resolved),
    contractContrasts: analyzeContractContrasts(observations, design, resolved),
    compaction: analyzeCompaction(observations, design, resolved),
    scratch: analyzeScratch(observations, design, resolved),
  };
}

import { mean } from '../stats/distributions.js';

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const pairKey = (o: PersonaObservation) => `${o.session}\u0000${o.position}\u0000${o.item}\u0000${o.paraphrase}\u0000${o.sample}`;

function countRows(observations: readonly PersonaObservation[], judges: readonly string[]): PersonaReport['counts'] {
  const done = observations.filter((o) => o.status === 'done');
  const byArm = [...groupBy(observations, (o) => `${o.target}\u0000${o.arm}\u0000${o.mitigation}\u0000${o.surface}`).values()].map((group) => {
    const first = group[0] as PersonaObservation;
    const count = (status: PersonaObservation['status']) => group.filter((o) => o.status === status).length;
    return {
      target: first.target,
      arm: first.arm,
      mitigation: first.mitigation,
      surface: first.surface,
      done: count('done'),
      empty: count('empty'),
      failed: count('failed'),
      dropoutRate: count('empty') / group.length,
    };
  });
  const invalidJudgements = judges.flatMap((judge) =>
    [
      ...groupBy(
        done.filter((o) => o.surface === 'probe' && judge in o.scores),
        (o) => `${o.arm}\u0000${o.mitigation}`,
      ).values(),
    ].map((group) => ({
      judge,
      arm: (group[0] as PersonaObservation).arm,
      mitigation: (group[0] as PersonaObservation).mitigation,
      invalid: group.filter((o) => o.scores[judge] === null).length,
      judged: group.length,
    })),
  );
  return { observations: observations.length, byArm, invalidJudgements };
}

/**
 * The checked responses of a stressor or contract surface grouped by cell (target × item × arm ×
 * mitigation × distance × prompt), each group with its cell's levels.
 */
function checkedCells(done: readonly PersonaObservation[], surface: 'stressor' | 'contract') {
  const cells = done.filter((o) => o.surface === surface && o.check);
  return [...groupBy(cells, (o) => `${o.target}\u0000${o.item}\u0000${o.arm}\u0000${o.mitigation}\u0000${o.distance}\u0000${promptOf(o)}`).values()].map(
    (group) => {
      const first = group[0] as PersonaObservation;
      const levels = {
        target: first.target,
        item: first.item,
        arm: first.arm,
        mitigation: first.mitigation,
        distance: first.distance,
        systemPrompt: promptOf(first),
      };
      return { levels, group };
    },
  );
}

function stressorRows(done: readonly PersonaObservation[]): StressorResult[] {
  return checkedCells(done, 'stressor').map(({ levels, group }) => ({
    ...levels,
    n: group.length,
    complianceRate: group.filter((o) => o.check?.pass).length / group.length,
    meanLength: mean(group.map((o) => o.text.length)),
  }));
}

/** Verbosity in the headline prompt and distance, no mitigation (descriptive; the tested contrast is in stressorContrasts). */
function verbosityRows(done: readonly PersonaObservation[], design: AnalysisDesign): VerbosityResult[] {
  const prompt = stressorHeadlinePrompt(done, design);
  const cells = done.filter(
    (o) => o.surface === 'stressor' && o.check && o.mitigation === 'none' && o.distance === design.primaryDistance && promptOf(o) === prompt,
  );
  const out: VerbosityResult[] = [];
  for (const group of groupBy(cells, (o) => `${o.target}\u0000${o.item}`).values()) {
    const first = group[0] as PersonaObservation;
    const fillerByPair = new Map(group.filter((o) => o.arm === 'filler').map((o) => [pairKey(o), o]));
    const pairs = group
      .filter((o) => o.arm === 'real' && fillerByPair.has(pairKey(o)))
      .map((o) => ({ real: o, filler: fillerByPair.get(pairKey(o)) as PersonaObservation }));
    if (pairs.length === 0) continue;
    const realRate = pairs.filter((p) => p.real.check?.pass).length / pairs.length;
    const fillerRate = pairs.filter((p) => p.filler.check?.pass).length / pairs.length;
    const withLength = pairs.filter((p) => p.real.text.trim().length > 0 && p.filler.text.trim().length > 0);
    const ratios = withLength.map((p) => p.real.text.trim().length / p.filler.text.trim().length);
    const sessions = new Set(withLength.map((p) => p.real.session));
    const lengthRatio = (list: typeof pairs) => {
      const both = list.filter((p) => p.real.check?.pass && p.filler.check?.pass);
      return {
        medianRatio: list.length > 0 ? median(list.map((p) => p.real.text.trim().length / p.filler.text.trim().length)) : null,
        conditionalRatio: both.length > 0 ? mean(both.map((p) => p.real.text.trim().length)) / mean(both.map((p) => p.filler.text.trim().length)) : null,
        conditionalPairs: both.length,
      };
    };
    const bySession = [...sessions].sort().map((session) => {
      const mine = withLength.filter((p) => p.real.session === session);
      return { session, pairs: mine.length, ...lengthRatio(mine) };
    });
    out.push({
      target: first.target,
      item: first.item,
      cell: `target=${first.target} prompt=${prompt} mitigation=none distance=${design.primaryDistance} surface=stressor category=${first.item}`,
      pairs: pairs.length,
      complianceGapPp: 100 * (fillerRate - realRate),
      ...lengthRatio(withLength),
      heterogeneity:
        sessions.size >= 2
          ? attempt(() => {
              const v = varianceDecomposition(
                ratios.map((r) => Math.log(r)),
                withLength.map((p) => p.real.session),
              );
              return { between: v.between, within: v.within, betweenShare: v.betweenShare };
            })
          : null,
      bySession,
    });
  }
  return out;
}

/**
 * The prompt of the verbosity table: the headline prompt when stressor cells were sent with it,
 * else the first prompt (config order) that has stressor cells. A run whose stressors use their own
 * system prompt (the reference procedure's format-strict prompt) still gets its table.
 */
function stressorHeadlinePrompt(done: readonly PersonaObservation[], design: AnalysisDesign): string {
  const used = new Set(done.filter((o) => o.surface === 'stressor').map(promptOf));
  if (used.has(design.primarySystemPrompt)) return design.primarySystemPrompt;
  return design.systemPrompts.find((p) => used.has(p)) ?? design.primarySystemPrompt;
}

function contractRows(done: readonly PersonaObservation[]): PersonaReport['contracts'] {
  return checkedCells(done, 'contract').map(({ levels, group }) => {
    const failures: Record<string, number> = {};
    for (const o of group) if (!o.check?.pass) failures[o.check?.reason ?? 'unknown'] = (failures[o.check?.reason ?? 'unknown'] ?? 0) + 1;
    return {
      ...levels,
      n: group.length,
      passRate: group.filter((o) => o.check?.pass).length / group.length,
      failures,
    };
  });
}

function judgeAgreementRows(probes: readonly PersonaObservation[], judges: readonly string[], drift: readonly TargetDrift[]): JudgeAgreementResult[] {
  const out: JudgeAgreementResult[] = [];
  for (let i = 0; i < judges.length; i++) {
    for (let j = i + 1; j < judges.length; j++) {
      const judgeA = judges[i] as string;
      const judgeB = judges[j] as string;
      const both = probes.filter((o) => typeof o.scores[judgeA] === 'number' && typeof o.scores[judgeB] === 'number');
      const gapsB = new Map(drift.filter((d) => d.judge === judgeB).map((d) => [d.target, d]));
      const signRows = drift
        .filter((d) => d.judge === judgeA && isPresent(d.gap) && gapsB.has(d.target) && isPresent((gapsB.get(d.target) as TargetDrift).gap))
        .map((d) => ({
          target: d.target,
          gapA: (d.gap as GapEstimate).estimate,
          gapB: ((gapsB.get(d.target) as TargetDrift).gap as GapEstimate).estimate,
        }));
      out.push({
        judgeA,
        judgeB,
        pairs: attempt(() =>
          agreement(
            both.map((o) => o.scores[judgeA] as number),
            both.map((o) => o.scores[judgeB] as number),
            { categories: [0, 1, 2, 3] },
          ),
        ),
        signs: attempt(() => {
          const s = signAgreement(signRows.map((r) => [r.gapA, r.gapB] as const));
          return {
            agree: s.agree,
            flip: s.flip,
            nullVsSmall: s.nullVsSmall,
            labels: signRows.map((r, k) => ({ ...r, label: s.labels[k] as string })),
          };
        }),
      });
    }
  }
  return out;
}

function fingerprintRows(probes: readonly PersonaObservation[], patterns?: FingerprintPatterns): PersonaReport['fingerprint'] {
  const printed = probes.map((o) => ({ o, f: fingerprint(o.text, patterns) })).filter((x): x is { o: PersonaObservation; f: Fingerprint } => x.f !== null);
  if (printed.length < 3) return null;
  return attempt(() => {
    const pca = fingerprintPca(
      printed.map((x) => x.f),
      printed.map((x) => x.o.arm === 'real'),
    );
    const points = printed.map((x, k) => ({
      target: x.o.target,
      arm: x.o.arm,
      mitigation: x.o.mitigation,
      pc1: (pca.points[k] as [number, number])[0],
      pc2: (pca.points[k] as [number, number])[1],
    }));
    const centroids = [...groupBy(points, (p) => `${p.arm}\u0000${p.mitigation}`).values()].map((group) => ({
      arm: (group[0] as (typeof points)[number]).arm,
      mitigation: (group[0] as (typeof points)[number]).mitigation,
      pc1: mean(group.map((p) => p.pc1)),
      pc2: mean(group.map((p) => p.pc2)),
      n: group.length,
    }));
    return {
      features: ['hedgeDensity', 'experientialDensity', 'committedPreference', 'emDashCount', 'paragraphBreaks', 'logLength'],
      components: pca.components,
      explainedVarianceRatio: pca.explainedVarianceRatio,
      centroids,
      points,
    };
  });
}

export function analyzePersona(all: readonly PersonaObservation[], options: AnalysisOptions = {}): PersonaReport {
  const resolved = resolveOptions(options);
  // A design factor the cells do not name (probe framing) keeps the headline to its first level.
  const observations = headlineObservations(all, options);
  const inference = analyzePersonaInference(observations, options);
  const { design } = inference;
  const done = observations.filter((o) => o.status === 'done');
  // Descriptive views keep to the headline prompt and distance (no silent pooling of those factors).
  const headlineProbes = done.filter(
    (o) =>
      o.surface === 'probe' &&
      promptOf(o) === design.primarySystemPrompt &&
      o.distance === design.primaryDistance &&
      (design.primaryCategory === 'all' || o.category === design.primaryCategory),
  );
  const { alpha: _alpha, ...reportOptions } = resolved;
  return {
    schema: 'echolens.persona-report/1',
    options: reportOptions,
    design,
    verdicts: inference.verdicts,
    counts: countRows(all, design.judges),
    drift: inference.drift,
    contrasts: inference.contrasts,
    mitigations: inference.mitigations,
    stressors: stressorRows(done),
    stressorContrasts: inference.stressorContrasts,
    verbosity: verbosityRows(done, design),
    contracts: contractRows(done),
    contractContrasts: inference.contractContrasts,
    compaction: inference.compaction,
    scratch: inference.scratch,
    judgeAgreement: judgeAgreementRows(headlineProbes, design.judges, inference.drift),
    fingerprint: fingerprintRows(headlineProbes, options.fingerprintPatterns),
    ...analyzeExtras(all, observations, inference, resolved, options),
    ...contentPositionOf(observations, inference.design, resolved),
    // The paper's B = 10,000 for every reference resampling, whatever B the calibrated tests use.
    ...(options.procedure === 'reference'
      ? {
          reference: analyzeReference(observations, design, {
            B: 10_000,
            seed: resolved.seed,
            minusOne: options.referenceMinusOne ?? 'keep',
            strongThreshold: resolved.strongThreshold,
          }),
        }
      : {}),
  };
}

/** The content-position contrasts, only when the run has content conditions (the key is absent otherwise). */
function contentPositionOf(observations: readonly PersonaObservation[], design: AnalysisDesign, resolved: ResolvedOptions) {
  const rows = analyzeContentPosition(observations, design, resolved);
  return rows.length > 0 ? { contentPosition: rows } : {};
}
