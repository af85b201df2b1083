import type { AnalyzedRun } from '../experiment/audit.js';
import type { AuditSeries, CompareRunsOptions, RunDifference } from '../report/compare-types.js';
import { attempt, matchSubjects, sharedUnits } from '../report/compare-units.js';
import { meanOfClusterMeans, pairedBootstrapDifference } from '../stats/paired-bootstrap.js';
import type { PersonaReport } from './analysis.js';

/** `echolens compare` for persona runs: the drift gap Δ over the positions (or sessions) both runs share (docs/statistics.md, "Comparing runs"). */

function personaRows(a: PersonaReport, b: PersonaReport, options: Required<CompareRunsOptions>): RunDifference[] {
  return matchSubjects(a.drift, b.drift, (d) => `${d.target} · judge ${d.judge}`).map(([da, db, subject]) => {
    const unitValues = (d: typeof da) => {
      const out = new Map<string, { session: string; value: number }>();
      for (const p of d.byPosition) if (!('error' in p.gap)) out.set(`${p.session}\u0000${p.position}`, { session: p.session, value: p.gap.estimate });
      return out;
    };
    const va = unitValues(da);
    const vb = unitValues(db);
    const sessions = new Set([...va.keys()].filter((k) => vb.has(k)).map((k) => k.split('\u0000')[0]));
    // Several sessions: sessions are the units (positions averaged within each), as in the report.
    const bySession = sessions.size >= 2;
    const units = sharedUnits(va, vb, (k) => (bySession ? (k.split('\u0000')[0] as string) : k));
    return {
      statistic: 'drift gap Δ (filler − real)',
      subject,
      unit: bySession ? 'session' : 'position',
      scale: 'number',
      result: attempt(() => pairedBootstrapDifference(units, (clusters) => meanOfClusterMeans(clusters.map((c) => c.map((u) => u.value))), options)),
      own: { a: 'error' in da.gap ? null : da.gap.estimate, b: 'error' in db.gap ? null : db.gap.estimate },
    };
  });
}

export function personaCompare(
  a: AnalyzedRun<unknown, PersonaReport>,
  b: AnalyzedRun<unknown, PersonaReport>,
  options: Required<CompareRunsOptions>,
): RunDifference[] {
  return personaRows(a.report, b.report, options);
}

/**
 * Drift over time for persona runs: each target × judge's drift gap Δ with its per-position values
 * (clustered by session), as `echolens history` and `compare --baseline` read them.
 */
export function personaOverTime(analyzed: AnalyzedRun<unknown, PersonaReport>): AuditSeries[] {
  return analyzed.report.drift.map((d) => ({
    statistic: 'drift gap Δ (filler − real)',
    subject: `${d.target} · judge ${d.judge}`,
    unit: 'position',
    scale: 'number' as const,
    estimate: 'error' in d.gap ? null : d.gap.estimate,
    ci: 'error' in d.gap ? null : d.gap.claim.interval,
    units: d.byPosition.flatMap((p) => ('error' in p.gap ? [] : [{ key: `${p.session}\u0000${p.position}`, cluster: p.session, value: p.gap.estimate }])),
  }));
}
