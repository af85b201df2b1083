import { StatisticsError } from '../core/errors.js';
import { minimumDetectableEffect } from '../stats/calibration.js';
import { tQuantile } from '../stats/distributions.js';
import { holm } from '../stats/multiple-testing.js';
import { tost } from '../stats/tost.js';
import type {
  CompactionResult,
  ContractContrast,
  GapEstimate,
  Maybe,
  MitigationResult,
  PersonaObservation,
  ResolvedOptions,
  TargetDrift,
  Verdict,
  AnalysisDesign,
  CellRef,
  DesignContrast,
  ScratchResult,
  StressorContrast,
} from './analysis-types.js';
import { attempt, cellContrast, cellName, combinationContrast, groupBy, inCell, itemContrast, unitKey, cellValue, judgeTargets } from './contrasts.js';
import { isAblationLabel } from './anchor-ablation.js';
import { holmClaims, type InferenceOptions, unitInference } from './inference.js';
import { mean } from '../stats/distributions.js';

/**
 * The tests of the persona report, one section per function (pure). Each builds its cells from
 * the resolved design, reduces them to unit deltas and hands them to the clustered inference.
 */

const inferenceOptions = (o: ResolvedOptions): InferenceOptions => ({ B: o.B, seed: o.seed, alpha: o.alpha });

const isGap = (g: Maybe<GapEstimate>): g is GapEstimate => !('error' in g);

/**
 * Holm-adjusts one family of tests: `gapOf` gives a row's estimate (null where it has no test);
 * each tested estimate gets the Holm-adjusted p (`pHolm`) and the claim that agrees with it (the
 * Holm-consistent interval, `holmClaims`), and `store` may copy the adjusted p elsewhere on the row.
 */
function holmFamily<T>(rows: readonly T[], gapOf: (row: T) => GapEstimate | null, store: (row: T, pHolm: number) => void = () => {}): void {
  const tested = rows.filter((row) => gapOf(row) !== null);
  const claims = holmClaims(tested.map((row) => (gapOf(row) as GapEstimate).claim));
  tested.forEach((row, i) => {
    const gap = gapOf(row) as GapEstimate;
    const claim = claims[i] as GapEstimate['claim'];
    gap.claim = claim;
    gap.pHolm = claim.p;
    store(row, claim.p);
  });
}

const setPHolm = (row: { pHolm: number | null }, pHolm: number) => {
  row.pHolm = pHolm;
};

/** The stressors or contracts (items) of the deterministic-check surface that have checked responses, sorted. */
function checkedItems(observations: readonly PersonaObservation[], surface: 'stressor' | 'contract'): string[] {
  return [...new Set(observations.filter((o) => o.surface === surface && o.check).map((o) => o.item))].sort();
}

/** A cell of the headline prompt, distance and probe battery, unmitigated, unless `over` says otherwise (judge null: a checked surface). */
export function probeCell(design: AnalysisDesign, target: string, judge: string | null, arm: string, over: Partial<CellRef> = {}): CellRef {
  return {
    target,
    judge,
    systemPrompt: design.primarySystemPrompt,
    arm,
    mitigation: 'none',
    distance: design.primaryDistance,
    surface: 'probe',
    category: design.primaryCategory,
    ...over,
  };
}

function missingArm(design: AnalysisDesign): string | null {
  for (const arm of ['real', 'filler']) {
    if (!design.arms.includes(arm)) return `the drift gap needs the real and filler context arms; add "${arm}" to arms`;
  }
  return null;
}

/** Minimum detectable |Δ| at 80% power (two-sided α), or null when the test cannot reject at all. */
function mdeOf(gap: GapEstimate, alpha: number): number | null {
  if (gap.minAttainableP >= alpha) return null;
  return minimumDetectableEffect(gap.se, { alpha, power: 0.8, df: gap.df });
}

const f2 = (x: number) => (x >= 0 ? `+${x.toFixed(2)}` : x.toFixed(2));
/** A confidence level in percent, without trailing zeros (95%, 97.5%, 98.33%). */
const confidenceText = (c: number) => `${Number((c * 100).toFixed(2))}%`;

function unitsText(gap: GapEstimate): string {
  return gap.level === 'session'
    ? `${gap.units} sessions (${gap.positions} positions; sessions are the units)`
    : `${gap.units} positions of one session (positions are the units: a claim about this session)`;
}

function verdictFor(row: Omit<TargetDrift, 'verdict' | 'onset'>, options: ResolvedOptions): Verdict {
  const base = { target: row.target, judge: row.judge, cell: row.cell };
  if (!isGap(row.gap)) {
    return { ...base, kind: 'not computable', text: `not computable: ${row.gap.error}`, mde: null };
  }
  const gap = row.gap;
  if (gap.se === 0 && gap.estimate === 0 && gap.units > 1) {
    // Every unit's gap is exactly 0: real and filler scored alike everywhere. No variance to test
    // against, and an MDE of 0 ("|Δ| ≥ 0.00 would be detected") would read as a clean pass.
    return {
      ...base,
      kind: 'not computable',
      text: `not computable: all ${gap.units} units have a gap of exactly 0 (zero variance) — the arms were scored identically everywhere, a likely endpoint, cache or judge problem`,
      mde: null,
    };
  }
  const claim = gap.claim;
  const pHolm = claim.p;
  const mde = mdeOf(gap, options.alpha);
  // One interval and one p: alone, the test and its inversion; among several targets, the Holm p and the Holm-consistent interval.
  const numbers =
    claim.family > 1
      ? `Δ = ${f2(gap.estimate)} [${confidenceText(claim.confidence)} CI ${f2(claim.interval[0])}, ${f2(claim.interval[1])}, Holm-consistent over ${claim.family} targets], Holm p = ${pHolm.toPrecision(2)} over ${unitsText(gap)}`
      : `Δ = ${f2(gap.estimate)} [95% CI ${f2(claim.interval[0])}, ${f2(claim.interval[1])}], sign-flip p = ${gap.p.toPrecision(2)} over ${unitsText(gap)}`;
  if (pHolm < options.alpha) {
    if (claim.fragile) {
      const by = claim.drivenBy as string;
      return {
        ...base,
        kind: 'drift',
        text: `drift, fragile — driven by session ${by}: ${numbers}; without session ${by} the remaining sessions do not show it (leave-one-session-out)`,
        mde,
        fragile: true,
        drivenBy: by,
      };
    }
    return { ...base, kind: 'drift', text: `drift: ${numbers}`, mde };
  }
  if (mde === null) {
    return { ...base, kind: 'underpowered for this design', text: `underpowered for this design: ${numbers}; ${gap.note ?? 'the test cannot reject'}`, mde };
  }
  if (mde > options.strongThreshold) {
    return {
      ...base,
      kind: 'underpowered for this design',
      text: `underpowered for this design: ${numbers}; only |Δ| ≥ ${mde.toFixed(2)} would be detected with 80% power (strong drift is ${options.strongThreshold}): add positions or sessions`,
      mde,
    };
  }
  return { ...base, kind: 'no detectable drift', text: `no detectable drift: ${numbers}; |Δ| ≥ ${mde.toFixed(2)} would be detected with 80% power`, mde };
}

export function analyzeDrift(
  observations: readonly PersonaObservation[],
  design: AnalysisDesign,
  options: ResolvedOptions,
): { drift: TargetDrift[]; verdicts: Verdict[] } {
  const inf = inferenceOptions(options);
  const rows: Array<Omit<TargetDrift, 'verdict' | 'onset'>> = [];
  const armError = missingArm(design);
  for (const [judge, target] of judgeTargets(design)) {
    const hasProbes = observations.some((o) => o.target === target && o.surface === 'probe' && judge in o.scores);
    if (!hasProbes) continue;
    const realCell = probeCell(design, target, judge, 'real');
    const fillerCell = probeCell(design, target, judge, 'filler');
    const real = inCell(observations, realCell);
    const filler = inCell(observations, fillerCell);
    const cell = `${cellName(fillerCell).replace(' arm=filler', '')} (filler − real)`;
    const gap: Maybe<GapEstimate> = armError ? { error: armError } : cellContrast(real, filler, judge, inf);
    const realByUnit = groupBy(real, unitKey);
    const fillerByUnit = groupBy(filler, unitKey);
    const positions = [...realByUnit.values()]
      .map((g) => g[0] as PersonaObservation)
      .filter((o) => fillerByUnit.has(unitKey(o)))
      .sort((a, b) => a.session.localeCompare(b.session) || a.positionValue - b.positionValue || a.position.localeCompare(b.position));
    const byPosition = positions.map((p) => ({
      session: p.session,
      position: p.position,
      positionValue: p.positionValue,
      gap: itemContrast(realByUnit.get(unitKey(p)) ?? [], fillerByUnit.get(unitKey(p)) ?? [], judge, inf),
    }));
    const byCategory = design.categories.map((category) => ({
      category,
      gap: cellContrast(inCell(observations, { ...realCell, category }), inCell(observations, { ...fillerCell, category }), judge, inf),
    }));
    const bySession = design.sessions
      .filter((s) => real.some((o) => o.session === s))
      .map((session) => {
        const of = (arm: readonly PersonaObservation[]) => arm.filter((o) => o.session === session);
        return { session, gap: cellContrast(of(real), of(filler), judge, inf) };
      });
    const referenceArms = design.arms
      .filter((arm) => arm !== 'real' && arm !== 'filler' && arm !== 'scratch')
      .map((arm) => ({ arm, gap: cellContrast(inCell(observations, { ...realCell, arm }), filler, judge, inf) }));
    rows.push({
      target,
      judge,
      cell,
      gap,
      strongDrift: isGap(gap) && Math.abs(gap.estimate) >= options.strongThreshold,
      signFlip: isGap(gap) ? { mean: gap.estimate, p: gap.p, n: gap.units, pHolm: Number.NaN, level: gap.level, method: gap.method } : { error: gap.error },
      byPosition,
      byCategory,
      bySession,
      referenceArms,
    });
  }
  // Holm across targets, per judge.
  for (const judge of design.judges) {
    holmFamily(
      rows.filter((d) => d.judge === judge),
      (d) => ('error' in d.signFlip || !isGap(d.gap) ? null : d.gap),
      (row, pHolm) => {
        (row.signFlip as { pHolm: number }).pHolm = pHolm;
      },
    );
  }
  const drift: TargetDrift[] = rows.map((row) => {
    const verdict = verdictFor(row, options);
    return { ...row, onset: verdict.kind === 'drift' ? onsetOf(row, options) : null, verdict };
  });
  return { drift, verdicts: drift.map((d) => d.verdict) };
}

/**
 * Onset, only for a target whose headline drift is significant: the first position in counter
 * order whose probe-level sign-flip survives Holm across all positions, with |Δ| ≥ the strong
 * threshold and the headline's sign. Gating on the headline keeps the family-wise error of the
 * onset at or below the headline's.
 */
function onsetOf(row: Omit<TargetDrift, 'verdict' | 'onset'>, options: ResolvedOptions): TargetDrift['onset'] {
  const headline = row.gap as GapEstimate;
  const tested = row.byPosition.filter((p): p is typeof p & { gap: GapEstimate } => isGap(p.gap));
  if (tested.length === 0) return null;
  const adjusted = holm(tested.map((p) => p.gap.p));
  const hits = tested
    .map((p, i) => ({ p, pHolm: adjusted[i] as number }))
    .filter(
      (x) => x.pHolm < options.alpha && Math.abs(x.p.gap.estimate) >= options.strongThreshold && Math.sign(x.p.gap.estimate) === Math.sign(headline.estimate),
    )
    .sort((a, b) => a.p.positionValue - b.p.positionValue || a.p.session.localeCompare(b.p.session));
  const first = hits[0];
  return first ? { session: first.p.session, position: first.p.position, positionValue: first.p.positionValue, pHolm: first.pHolm } : null;
}

/** Drift in every other prompt × distance cell, distance contrasts and system-prompt contrasts. */
export function analyzeDesignContrasts(observations: readonly PersonaObservation[], design: AnalysisDesign, options: ResolvedOptions): DesignContrast[] {
  const inf = inferenceOptions(options);
  const out: DesignContrast[] = [];
  for (const [judge, target] of judgeTargets(design)) {
    const cellObs = (cell: CellRef) => inCell(observations, cell);
    for (const systemPrompt of design.systemPrompts) {
      for (const distance of design.distances) {
        if (systemPrompt === design.primarySystemPrompt && distance === design.primaryDistance) continue;
        const real = probeCell(design, target, judge, 'real', { systemPrompt, distance });
        const filler = probeCell(design, target, judge, 'filler', { systemPrompt, distance });
        const r = cellObs(real);
        const f = cellObs(filler);
        if (r.length === 0 || f.length === 0) continue;
        out.push({
          kind: 'drift',
          target,
          judge,
          name: `drift ${cellName(filler).replace(' arm=filler', '')}`,
          terms: [
            { cell: cellName(filler), weight: 1, ref: filler },
            { cell: cellName(real), weight: -1, ref: real },
          ],
          result: cellContrast(r, f, judge, inf),
        });
      }
    }
    const base = probeCell(design, target, judge, 'real');
    const baseObs = cellObs(base);
    for (const distance of design.distances) {
      if (distance === design.primaryDistance) continue;
      const far = { ...base, distance };
      const farObs = cellObs(far);
      if (farObs.length === 0) continue;
      out.push({
        kind: 'distance',
        target,
        judge,
        name: `distance ${distance} − ${design.primaryDistance} ${cellName(base).replace(` distance=${design.primaryDistance}`, '')}`,
        terms: [
          { cell: cellName(far), weight: 1, ref: far },
          { cell: cellName(base), weight: -1, ref: base },
        ],
        result:
          baseObs.length === 0
            ? { error: `no real-context cell at the headline distance ${design.primaryDistance} to compare with` }
            : cellContrast(baseObs, farObs, judge, inf),
      });
    }
    const fillerBase = probeCell(design, target, judge, 'filler');
    for (const systemPrompt of design.systemPrompts) {
      if (systemPrompt === design.primarySystemPrompt) continue;
      const real = { ...base, systemPrompt };
      const filler = { ...fillerBase, systemPrompt };
      const terms = [
        { cell: filler, weight: 1 },
        { cell: real, weight: -1 },
        { cell: fillerBase, weight: -1 },
        { cell: base, weight: 1 },
      ];
      const data = terms.map((t) => ({ observations: cellObs(t.cell), weight: t.weight }));
      if (data[0]?.observations.length === 0 && data[1]?.observations.length === 0) continue;
      out.push({
        kind: 'prompt',
        target,
        judge,
        name: `prompt ${systemPrompt} − ${design.primarySystemPrompt} (drift gap) target=${target} judge=${judge} distance=${design.primaryDistance} category=${design.primaryCategory}`,
        terms: terms.map((t) => ({ cell: cellName(t.cell), weight: t.weight, ref: t.cell })),
        result: data.some((d) => d.observations.length === 0)
          ? { error: 'a system-prompt contrast of the drift gap needs the real and filler arms under both prompts' }
          : combinationContrast(data, judge, inf),
      });
    }
  }
  return out;
}

export function meanValue(group: readonly PersonaObservation[], judge: string | null): number | null {
  const values = group.map((o) => cellValue(o, judge)).filter((v): v is number => v !== null);
  return values.length > 0 ? mean(values) : null;
}

/** Mitigation arms against the unmitigated real context and the placebo, in each prompt × distance cell. */
export function analyzeMitigations(observations: readonly PersonaObservation[], design: AnalysisDesign, options: ResolvedOptions): MitigationResult[] {
  const inf = inferenceOptions(options);
  const out: MitigationResult[] = [];
  // Anchor-ablation cells have their own section (anchor-ablation-analysis.ts).
  const treated = design.mitigations.filter((m) => m !== 'none' && !isAblationLabel(m));
  if (treated.length === 0) return out;
  for (const [judge, target] of judgeTargets(design)) {
    const family: MitigationResult[] = [];
    for (const systemPrompt of design.systemPrompts) {
      for (const distance of design.distances) {
        const at = (arm: string, mitigation: string) => probeCell(design, target, judge, arm, { systemPrompt, distance, mitigation });
        const control = inCell(observations, at('real', 'none'));
        const placebo = inCell(observations, at('real', 'placebo_iso_recipe'));
        const filler = inCell(observations, at('filler', 'none'));
        for (const mitigation of treated) {
          const cell = at('real', mitigation);
          const group = inCell(observations, cell);
          if (group.length === 0) continue;
          const controlMean = meanValue(control, judge);
          const fillerMean = meanValue(filler, judge);
          const mitigatedMean = meanValue(group, judge) as number;
          family.push({
            target,
            judge,
            mitigation,
            distance,
            systemPrompt,
            cell: cellName(cell),
            mean: mitigatedMean,
            n: group.length,
            vsControl:
              control.length === 0
                ? { error: `no unmitigated real-context cell at prompt ${systemPrompt}, distance ${distance}: add "none" to mitigations` }
                : cellContrast(control, group, judge, inf),
            vsPlacebo: placebo.length > 0 && mitigation !== 'placebo_iso_recipe' ? cellContrast(placebo, group, judge, inf) : null,
            recovery:
              controlMean !== null && fillerMean !== null && fillerMean - controlMean > 0.05
                ? (mitigatedMean - controlMean) / (fillerMean - controlMean)
                : null,
          });
        }
      }
    }
    // Holm across this target × judge's mitigation tests (vs control and vs placebo).
    holmFamily(
      family.flatMap((m) => [m.vsControl, m.vsPlacebo]),
      (g) => (g !== null && isGap(g) ? g : null),
    );
    out.push(...family);
  }
  return out;
}

/** filler − real compliance per stressor, clustered like the drift gap; Holm across a target's stressors. */
export function analyzeStressorContrasts(observations: readonly PersonaObservation[], design: AnalysisDesign, options: ResolvedOptions): StressorContrast[] {
  const inf = inferenceOptions(options);
  const out: StressorContrast[] = [];
  const stressors = checkedItems(observations, 'stressor');
  for (const target of design.targets) {
    const family: StressorContrast[] = [];
    for (const item of stressors) {
      for (const systemPrompt of design.systemPrompts) {
        const at = (arm: string) => probeCell(design, target, null, arm, { systemPrompt, surface: 'stressor', category: item });
        const real = inCell(observations, at('real'));
        const filler = inCell(observations, at('filler'));
        if (real.length === 0 && filler.length === 0) continue;
        family.push({
          target,
          item,
          systemPrompt,
          distance: design.primaryDistance,
          name: `stressor compliance ${cellName(at('filler')).replace(' arm=filler', '')} (filler − real)`,
          difference: cellContrast(real, filler, null, inf),
          pHolm: null,
        });
      }
    }
    holmFamily(family, (c) => (isGap(c.difference) ? c.difference : null), setPHolm);
    out.push(...family);
  }
  return out;
}

/** Contract pass rates: every mitigation − none, and a-anchor − placebo, per contract × prompt × distance; Holm across all. */
export function analyzeContractContrasts(observations: readonly PersonaObservation[], design: AnalysisDesign, options: ResolvedOptions): ContractContrast[] {
  const inf = inferenceOptions(options);
  const out: ContractContrast[] = [];
  const contracts = checkedItems(observations, 'contract');
  for (const target of design.targets) {
    for (const item of contracts) {
      const mine = observations.filter((o) => o.target === target && o.surface === 'contract' && o.item === item && o.arm === 'real');
      if (mine.length === 0) continue;
      const arms = [...new Set(mine.map((o) => o.mitigation))].filter((m) => m !== 'none').sort();
      const contrasts: Array<[string, string]> = arms.map((m) => [m, 'none']);
      if (arms.includes('a-anchor') && arms.includes('placebo_iso_recipe')) contrasts.push(['a-anchor', 'placebo_iso_recipe']);
      for (const systemPrompt of design.systemPrompts) {
        for (const distance of design.distances) {
          const at = (mitigation: string) =>
            probeCell(design, target, null, 'real', { systemPrompt, mitigation, distance, surface: 'contract', category: item });
          for (const [treatedArm, baselineArm] of contrasts) {
            const t = inCell(observations, at(treatedArm));
            const b = inCell(observations, at(baselineArm));
            if (t.length === 0 && b.length === 0) continue;
            const difference: Maybe<GapEstimate> =
              b.length === 0 && baselineArm === 'none'
                ? { error: `no unmitigated contract cell at prompt ${systemPrompt}, distance ${distance}: add "none" to mitigations` }
                : cellContrast(b, t, null, inf);
            out.push({
              target,
              item,
              contrast: `${treatedArm} - ${baselineArm}`,
              distance,
              systemPrompt,
              cell: cellName(at(treatedArm)),
              sessions: new Set([...t, ...b].map((o) => o.session)).size,
              difference,
              signFlip: isGap(difference) ? { p: difference.p, level: difference.level, units: difference.units } : { error: difference.error },
              pHolm: null,
            });
          }
        }
      }
    }
  }
  holmFamily(out, (c) => ('error' in c.signFlip || !isGap(c.difference) ? null : c.difference), setPHolm);
  return out;
}

/**
 * Compaction: the change post − pre of the headline gap at each compaction event, and a TOST
 * of equivalence over units — events in one session, session means of events with several.
 */
export function analyzeCompaction(observations: readonly PersonaObservation[], design: AnalysisDesign, options: ResolvedOptions): CompactionResult[] {
  const out: CompactionResult[] = [];
  for (const [judge, target] of judgeTargets(design)) {
    const realCell = probeCell(design, target, judge, 'real');
    const mine = [...inCell(observations, realCell), ...inCell(observations, probeCell(design, target, judge, 'filler'))].filter((o) => o.compaction);
    if (mine.length === 0) continue;
    const events = [...groupBy(mine, (o) => `${o.session}\u0000${o.compaction?.index}`).values()].flatMap((group) => {
      const first = group[0] as PersonaObservation;
      const armMean = (s: 'pre' | 'post', arm: string) =>
        meanValue(
          group.filter((o) => o.compaction?.side === s && o.arm === arm),
          judge,
        );
      const side = (s: 'pre' | 'post') => {
        const r = armMean(s, 'real');
        const f = armMean(s, 'filler');
        return r === null || f === null ? null : f - r;
      };
      const pre = side('pre');
      const post = side('post');
      if (pre === null || post === null) return [];
      return [{ session: first.session, index: first.compaction?.index as number, pre, post, change: post - pre }];
    });
    if (events.length === 0) continue;
    events.sort((a, b) => a.session.localeCompare(b.session) || a.index - b.index);
    const sessions = [...new Set(events.map((e) => e.session))];
    const level: 'event' | 'session' = sessions.length >= 2 ? 'session' : 'event';
    const units = level === 'session' ? sessions.map((s) => mean(events.filter((e) => e.session === s).map((e) => e.change))) : events.map((e) => e.change);
    out.push({
      target,
      judge,
      cell: `${cellName(realCell).replace(' arm=real', '')} (post − pre change of filler − real)`,
      events,
      meanChange: mean(units),
      tost: attempt(() => {
        if (units.length < 2) {
          throw new StatisticsError(
            level === 'session'
              ? 'TOST needs at least two sessions with a compaction event'
              : 'TOST needs at least two compaction events (in one session), or compaction events in two or more sessions',
          );
        }
        const t = tost(units, { margin: options.tostMargin, alpha: options.alpha });
        const half = tQuantile(1 - options.alpha / 2, t.df) * t.se;
        return {
          mean: t.mean,
          ci: t.ci,
          ci95: [t.mean - half, t.mean + half] as [number, number],
          p: t.p,
          equivalent: t.equivalent,
          margin: t.margin,
          level,
          units: units.length,
        };
      }),
    });
  }
  return out;
}

/** The scratch arm, once per target × judge × prompt: its distinct answers, probes as units. */
export function analyzeScratch(observations: readonly PersonaObservation[], design: AnalysisDesign, options: ResolvedOptions): ScratchResult[] {
  if (!design.arms.includes('scratch')) return [];
  const out: ScratchResult[] = [];
  for (const [judge, target] of judgeTargets(design)) {
    for (const systemPrompt of design.systemPrompts) {
      const cell = probeCell(design, target, judge, 'scratch', { systemPrompt });
      const distinct = new Map<string, PersonaObservation>();
      for (const o of inCell(observations, cell)) {
        const k = `${o.item}\u0000${o.paraphrase}\u0000${o.sample}`;
        if (!distinct.has(k)) distinct.set(k, o);
      }
      if (distinct.size === 0) continue;
      const byItem = groupBy([...distinct.values()], (o) => o.item);
      const values = [...byItem.values()].map((l) => mean(l.map((o) => cellValue(o, judge) as number)));
      out.push({
        target,
        judge,
        systemPrompt,
        cell: cellName(cell),
        answers: distinct.size,
        mean: attempt(() => {
          const r = unitInference(values, 'item', { sessions: 0, positions: 0 }, inferenceOptions(options));
          return { estimate: r.estimate, ci: r.ci, units: r.units };
        }),
      });
    }
  }
  return out;
}
