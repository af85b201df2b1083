import type { GapEstimate, PersonaReport } from '../persona-drift/analysis.js';
import type { MemoryReport } from '../memory-drift/analysis.js';
import { percent, pValue, signed as sign } from '../report/format.js';
import { confidenceLabel } from '../persona-drift/claim-text.js';

/**
 * The lines a finished persona run ends with: each target's verdict and drift gap with its CI.
 * The verdict leads, and "strong drift" (a size, |Δ| ≥ 0.30) is said only of a detected drift, so
 * the line never calls an underpowered or null result strong drift.
 */
export function personaHeadlines(report: PersonaReport, simulated: boolean): string[] {
  const lines = report.drift.map((d) => {
    const gap = d.gap as GapEstimate | { error: string };
    const kind = report.verdicts.find((v) => v.target === d.target && v.judge === d.judge)?.kind;
    if ('error' in gap) return `persona drift: ${d.target} judged by ${d.judge}: gap not computable (${gap.error})`;
    const strong = d.strongDrift && kind === 'drift' ? ', strong drift' : '';
    return `persona drift: ${d.target} judged by ${d.judge}: ${kind === undefined ? '' : `${kind} — `}Δ = ${sign(gap.estimate)} [${confidenceLabel(gap.claim)} CI ${sign(gap.claim.interval[0])}, ${sign(gap.claim.interval[1])}], ${gap.claim.family > 1 ? 'Holm ' : ''}p = ${pValue(gap.claim.p)}${strong}`;
  });
  if (simulated) lines.push('(SIMULATED models: these numbers measure no real model)');
  return lines;
}

/**
 * The lines a finished memory run ends with: per target, the DTW elevation of each
 * perturbation tier over the no-memory floor with its 95% CI, and the validity verdict.
 */
export function memoryHeadlines(report: MemoryReport, simulated: boolean): string[] {
  const lines = report.targets.map((t) => {
    const tiers = (['noise', 'persona', 'life_event'] as const).map((name) => {
      const label = name === 'life_event' ? 'life events' : name;
      const s = t.metrics.dtw.tiers.find((x) => x.tier === name);
      if (s === undefined) return `${label} not run`;
      if ('error' in s.elevation) return `${label} n/a`;
      const e = s.elevation;
      // The tier's claim: the interval that agrees with its p (the bootstrap test inverted at α).
      return `${label} ${percent(e.estimate, 0)} [${percent(e.claim.interval[0], 0)}, ${percent(e.claim.interval[1], 0)}]`;
    });
    return `memory drift: ${t.target}: DTW elevation over the no-memory floor (95% CI) — ${tiers.join(', ')}; validity ${t.validity.overall}`;
  });
  if (simulated) lines.push('(SIMULATED models: these numbers measure no real model)');
  return lines;
}
