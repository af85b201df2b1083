import type { AuditViewer } from '../experiment/audit.js';
import type { IndexedCell, Verdict } from '../report/viewer/types.js';
import { resolveJudgeVerdicts } from './labels.js';

/** The persona audit in the viewer: judge verdicts per answer, and real ⇄ filler pairs. */

/** The winning verdict of each judge on each target cell (the same reading of re-ask chains as the analysis). */
function judgeVerdicts(judgeCells: readonly IndexedCell[]): Map<string, Map<string, Verdict>> {
  const resolved = resolveJudgeVerdicts(judgeCells, {
    labels: (cell) => cell.labels,
    key: (cell) => cell.key,
    text: (cell) => (cell.status === 'done' ? cell.text : null),
  });
  const verdicts = new Map<string, Map<string, Verdict>>();
  for (const [targetKey, byJudge] of resolved) {
    const out = new Map<string, Verdict>();
    for (const [judge, v] of byJudge) {
      out.set(judge, {
        judge,
        key: v.cell.key,
        attempt: v.attempt,
        score: v.verdict?.score ?? null,
        label: v.verdict?.label ?? null,
        reason: v.verdict?.reason ?? '',
        raw: v.cell.text ?? '',
        error: v.error,
      });
    }
    verdicts.set(targetKey, out);
  }
  return verdicts;
}

export const personaViewer: AuditViewer<unknown> = {
  judgeVerdicts,
  pairing: {
    dimension: 'arm',
    partner: (arm) => (arm === 'real' ? 'filler' : arm === '' ? undefined : 'real'),
    shared: ['target', 'session', 'position', 'surface', 'item', 'paraphrase', 'sample', 'distance', 'systemPrompt', 'framed'],
    preferred: { name: 'mitigation', fallback: 'none' },
    relation: (arm) => `the ${arm} context at the same position, probe and sample`,
  },
};
