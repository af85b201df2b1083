import type { AnalysisDesign, PersonaObservation } from './analysis-types.js';
import type { AnalysisOptions } from './report-types.js';
import { promptOf } from './contrasts.js';

const sorted = (values: Iterable<string>) => [...new Set(values)].sort();

function ordered(present: readonly string[], configured: readonly string[] | undefined): string[] {
  if (!configured) return [...present];
  const first = configured.filter((name) => present.includes(name));
  return [...first, ...present.filter((name) => !first.includes(name))];
}

export function resolveDesign(observations: readonly PersonaObservation[], options: AnalysisOptions, primaryCategory: string | null): AnalysisDesign {
  const systemPrompts = ordered(sorted(observations.map(promptOf)), options.systemPrompts);
  const distances = ordered(sorted(observations.map((o) => o.distance)), options.distances);
  const fillerDistance = observations.find((o) => o.arm === 'filler')?.distance;
  const primarySystemPrompt = options.primarySystemPrompt ?? systemPrompts[0] ?? 'default';
  const primaryDistance = options.primaryDistance ?? (options.distances ? distances[0] : (fillerDistance ?? distances[0])) ?? 'd0';
  const category = primaryCategory ?? 'all';
  const real = observations.filter((o) => o.arm === 'real');
  const continuations = new Map<string, AnalysisDesign['continuations'][number]>();
  for (const o of real) {
    if (!o.continuation) continue;
    const key = `${o.session}\u0000${o.position}\u0000${o.distance}`;
    if (continuations.has(key)) continue;
    const { messages, clipped } = o.continuation;
    continuations.set(key, {
      session: o.session,
      position: o.position,
      distance: o.distance,
      messages,
      clipped,
      text: `${o.distance} = +${messages} messages${clipped ? `, clipped at ${clipped}` : ''}`,
    });
  }
  return {
    targets: sorted(observations.map((o) => o.target)),
    judges: sorted(observations.flatMap((o) => Object.keys(o.scores))),
    sessions: sorted(observations.map((o) => o.session)),
    systemPrompts,
    arms: sorted(observations.map((o) => o.arm)),
    mitigations: sorted(observations.map((o) => o.mitigation)),
    distances,
    categories: sorted(observations.filter((o) => o.surface === 'probe').map((o) => o.category)),
    positions: new Set(real.map((o) => `${o.session}\u0000${o.position}`)).size,
    primarySystemPrompt,
    primaryDistance,
    primaryCategory: category,
    continuations: [...continuations.values()].sort((a, b) => a.session.localeCompare(b.session) || a.position.localeCompare(b.position)),
    headline: `filler − real, system prompt ${primarySystemPrompt}, distance ${primaryDistance}, no mitigation, probe category ${category}`,
  };
}
