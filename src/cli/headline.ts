import type { GapEstimate, PersonaReport } from '../persona-drift/analysis.js';
import type { MemoryReport } from '../memory-drift/analysis.js';

const sign = (x: number) => (x >= 0 ? `+${x.toFixed(2)}` : x.toFixed(2));

/** The lines a finished persona run ends with: each target's drift gap with its CI. */
export function personaHeadlines(report: PersonaReport, simulated: boolean): string[] {
  const lines = report.drift.map((d) => {
    const gap = d.gap as GapEstimate | { error: string };
    return 'error' in gap
      ? `persona drift: ${d.target} judged by ${d.judge}: gap not computable (${gap.error})`
      : `persona drift: ${d.target} judged by ${d.judge}: Δ = ${sign(gap.estimate)} [95% CI ${sign(gap.ci[0])}, ${sign(gap.ci[1])}]${d.strongDrift ? ', strong drift' : ''}`;
  });
  if (simulated) lines.push('(SIMULATED models: these numbers measure no real model)');
  return lines;
}

const percent = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(0)}%`;

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
      return `${label} ${percent(e.estimate)} [${percent(e.ci[0])}, ${percent(e.ci[1])}]`;
    });
    return `memory drift: ${t.target}: DTW elevation over the no-memory floor (95% CI) — ${tiers.join(', ')}; validity ${t.validity.overall}`;
  });
  if (simulated) lines.push('(SIMULATED models: these numbers measure no real model)');
  return lines;
}
