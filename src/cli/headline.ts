import type { GapEstimate, PersonaReport } from '../persona-drift/analysis.js';

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
