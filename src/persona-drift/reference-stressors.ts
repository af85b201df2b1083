import { mean } from '../stats/distributions.js';
import type { PersonaObservation } from './analysis-types.js';
import { checkNoPreamble } from './checkers.js';
import type { ReferenceAnchorVariant, ReferenceAnchorVariantSummary, ReferenceCompliance } from './reference-types.js';

/**
 * The authors' stressor-surface analyses under `procedure: reference` (pure), on S2 cells: their
 * cross-compaction files (real and filler, mitigation `none`, paraphrase = `vNN`) and their anchor
 * variants (real arm, mitigation = the variant's folder name).
 *
 * - Compliance audit: S2's no-preamble check on every pair of (position, paraphrase) where both
 *   arms have a file, per target and per session with the targets pooled; compliance gap in
 *   percentage points filler − real; the raw ratio Σ real length / Σ filler length over pairs
 *   with both lengths > 0; the conditional ratio mean/mean over those pairs where both arms
 *   comply.
 * - Anchor variants and the full trajectory: per variant × target × position, the verbosity ratio
 *   without anchor (mean real length / mean filler length, lengths > 0) and with the anchor (mean
 *   anchored length / mean filler length; at least 3 anchored cells), attenuation =
 *   (ratio without − ratio with) / (ratio without − 1) (denominators floored at 1e-9 as theirs), in
 *   percent; per variant: mean attenuation, wins (≥ 50 %) and failures (< 0 %).
 *
 * Lengths are in code points (Python's `len`), of the response text.
 */

const length = (text: string) => [...text].length;

function s2(observations: readonly PersonaObservation[]): PersonaObservation[] {
  return observations.filter((o) => o.surface === 'stressor' && o.item === 'S2' && o.status !== 'failed');
}

const pairKey = (o: PersonaObservation) => `${o.session}\u0000${o.position}\u0000${o.paraphrase}`;

interface Pair {
  session: string;
  target: string;
  real: PersonaObservation;
  filler: PersonaObservation;
}

function pairs(cells: readonly PersonaObservation[], target: string): Pair[] {
  const mine = cells.filter((o) => o.target === target && o.mitigation === 'none');
  const filler = new Map(mine.filter((o) => o.arm === 'filler').map((o) => [pairKey(o), o]));
  const out: Pair[] = [];
  for (const real of mine.filter((o) => o.arm === 'real')) {
    const f = filler.get(pairKey(real));
    if (f) out.push({ session: real.session, target, real, filler: f });
  }
  return out;
}

function compliance(group: readonly Pair[], who: { target: string | null; session: string | null }): ReferenceCompliance {
  let realPass = 0;
  let fillerPass = 0;
  let realSum = 0;
  let fillerSum = 0;
  let rawPairs = 0;
  const both: Array<[number, number]> = [];
  for (const p of group) {
    const r = checkNoPreamble(p.real.text).pass;
    const f = checkNoPreamble(p.filler.text).pass;
    if (r) realPass++;
    if (f) fillerPass++;
    const rl = length(p.real.text);
    const fl = length(p.filler.text);
    if (rl > 0 && fl > 0) {
      rawPairs++;
      realSum += rl;
      fillerSum += fl;
      if (r && f) both.push([rl, fl]);
    }
  }
  const n = group.length;
  return {
    target: who.target,
    session: who.session,
    pairs: n,
    real: { pass: realPass, n, rate: realPass / n },
    filler: { pass: fillerPass, n, rate: fillerPass / n },
    gapPp: 100 * (fillerPass / n - realPass / n),
    rawRatio: rawPairs > 0 ? realSum / fillerSum : null,
    rawPairs,
    conditionalRatio: both.length > 0 ? mean(both.map(([c]) => c)) / Math.max(1e-9, mean(both.map(([, f]) => f))) : null,
    conditionalPairs: both.length,
  };
}

/** Compliance per target and per session (targets pooled). */
export function referenceCompliance(observations: readonly PersonaObservation[], targets: readonly string[]): ReferenceCompliance[] {
  const cells = s2(observations);
  const all = targets.flatMap((t) => pairs(cells, t));
  if (all.length === 0) return [];
  const out: ReferenceCompliance[] = [];
  for (const target of targets) {
    const group = all.filter((p) => p.target === target);
    if (group.length > 0) out.push(compliance(group, { target, session: null }));
  }
  for (const session of [...new Set(all.map((p) => p.session))].sort())
    out.push(
      compliance(
        all.filter((p) => p.session === session),
        { target: null, session },
      ),
    );
  return out;
}

/** Anchor variants against the no-anchor cross-compaction cells, per variant × target × position. */
export function referenceAnchorVariants(
  observations: readonly PersonaObservation[],
  targets: readonly string[],
): { rows: ReferenceAnchorVariant[]; summary: ReferenceAnchorVariantSummary[] } {
  const cells = s2(observations);
  const variants = [...new Set(cells.filter((o) => o.arm === 'real' && o.mitigation !== 'none').map((o) => o.mitigation))].sort();
  const rows: ReferenceAnchorVariant[] = [];
  const lengths = (list: readonly PersonaObservation[]) => list.map((o) => length(o.text)).filter((l) => l > 0);
  for (const variant of variants) {
    for (const target of targets) {
      const mine = cells.filter((o) => o.target === target);
      const positions = [...new Map(mine.filter((o) => o.mitigation === variant).map((o) => [`${o.session}\u0000${o.position}`, o])).values()].sort(
        (a, b) => a.session.localeCompare(b.session) || a.positionValue - b.positionValue,
      );
      for (const p of positions) {
        const at = mine.filter((o) => o.session === p.session && o.position === p.position);
        const real = lengths(at.filter((o) => o.arm === 'real' && o.mitigation === 'none'));
        const filler = lengths(at.filter((o) => o.arm === 'filler' && o.mitigation === 'none'));
        const anchored = lengths(at.filter((o) => o.arm === 'real' && o.mitigation === variant));
        if (real.length === 0 || filler.length === 0 || anchored.length < 3) continue;
        const fillerMean = Math.max(mean(filler), 1e-9);
        const ratioNoAnchor = mean(real) / fillerMean;
        const ratioWithAnchor = mean(anchored) / fillerMean;
        rows.push({
          variant,
          target,
          session: p.session,
          position: p.position,
          ratioNoAnchor,
          ratioWithAnchor,
          attenuationPct: (100 * (ratioNoAnchor - ratioWithAnchor)) / Math.max(ratioNoAnchor - 1, 1e-9),
          n: { real: real.length, filler: filler.length, anchored: anchored.length },
        });
      }
    }
  }
  const summary = variants
    .map((variant) => {
      const mine = rows.filter((r) => r.variant === variant).map((r) => r.attenuationPct);
      return mine.length === 0
        ? null
        : { variant, cells: mine.length, meanAttenuationPct: mean(mine), wins: mine.filter((a) => a >= 50).length, failures: mine.filter((a) => a < 0).length };
    })
    .filter((s): s is ReferenceAnchorVariantSummary => s !== null);
  return { rows, summary };
}
