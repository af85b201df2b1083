import type { PersonaCalibration, TestOperatingCharacteristics } from './calibrate.js';

/** Plain-text table of a persona calibration, for people (the JSON has the same numbers). */

const rate = (r: { rate: number; mcSE: number } | null) => (r ? `${r.rate.toFixed(3)} ± ${r.mcSE.toFixed(3)}` : 'n/a');

function flag(t: TestOperatingCharacteristics): string {
  if (t.fprWithinNominal === false) return ' ANTI-CONSERVATIVE';
  if (t.coverage && t.coverage.rate < 0.93) return ' UNDER-COVERS';
  return '';
}

export function renderCalibrationText(result: PersonaCalibration): string {
  const d = result.design;
  // Forks join their parent's unit when draws are per unit (what runs do).
  const units = d.sessions - (result.draws === 'per-unit' ? (d.forks ?? 0) : 0);
  const lines = [
    'echolens persona calibrate — SIMULATED targets and judges: operating characteristics of this design, not measurements of any model.',
    `design: ${d.sessions} session(s) × ${d.positionsPerSession} position(s)${d.compactionsPerSession > 0 ? ` + ${d.compactionsPerSession} compaction event(s)` : ''} per session; arms ${d.arms.join(', ')}; mitigations ${d.mitigations.join(', ')}; distances ${d.distances.join(', ')}; system prompts ${d.systemPrompts.join(', ')}; ${d.probes.length} probe(s) × ${d.paraphrases} paraphrase(s) × ${d.samples} sample(s); ${d.targets.length} target(s), ${d.judges.length} judge(s)`,
    `variance (judge points): between-session ${result.variance.betweenSession} (${result.sessionEffects ?? 'normal'} session effects), between-position ${result.variance.betweenPosition}, within-cell ${result.variance.withinCell}; ${result.replicates} replicates per world (${result.worlds.join(', ')}), seed ${result.seed}; α = ${result.alpha}; power at |Δ| = ${result.effect}`,
    (d.forks ?? 0) > 0
      ? result.draws === 'per-unit'
        ? `forks: the last ${d.forks} session(s) fork the first ${d.forks} (${Math.round(100 * (d.forkAt ?? 0.5))}% of positions before the fork point); each fork is analysed as its parent's unit, as persona run does: ${d.sessions - (d.forks ?? 0)} units.`
        : `forks: the last ${d.forks} session(s) fork the first ${d.forks}, analysed as separate sessions with SHARED draws (the plan before units were separated): expect an inflated false-positive rate.`
      : result.draws === 'shared'
        ? 'draws: SHARED (identical requests in different sessions answered by one cached draw, the plan before units were separated).'
        : '',
    d.harnessGroups
      ? `harnesses: ${d.harnessGroups[0]} Claude Code + ${d.harnessGroups[1]} Codex session(s), Codex session effects ${d.harnessSpread ?? 1}× as spread; no harness difference is planted (the harness contrast's rows are nulls).`
      : '',
    d.judgeNoise
      ? `judge noise SD per response: ${d.judges.map((j, i) => `${j} ${d.judgeNoise?.[i]}`).join(', ')}; no judge × arm interaction is planted (the judge effect's rows are nulls).`
      : '',
    units > 1 && units < 6
      ? `note: with ${units} ${units === d.sessions ? 'sessions' : 'units'} the report's claims are about sessions (sessions are the units) and its sign-flip tests cannot reach p < ${result.alpha}; use 6 or more sessions, or one session for a claim about that session only.`
      : '',
    '',
  ].filter((l, i, all) => l !== '' || i === all.length - 1);
  for (const t of result.tests) {
    lines.push(t.test + flag(t));
    lines.push(
      `  FPR ${rate(t.fpr)} (nominal ${result.alpha.toFixed(3)}; ${t.nullReplicates} nulls)   95% CI coverage ${rate(t.coverage)} (nominal 0.950)   power ${rate(t.power)}${t.plantedMean === null ? '' : ` (mean estimate ${t.plantedMean.toFixed(3)})`}   MDE(80%) ${t.mde === null ? 'n/a' : t.mde.toFixed(3)}`,
    );
    if (t.note) lines.push(`  note: ${t.note}`);
  }
  return `${lines.join('\n')}\n`;
}
