import { markdownCell } from './report-markdown.js';
import type { MemoryCollectionSummary } from './observations.js';

/** The run's own section: what happened to every generation cell (dropouts, steps, labeler attempts). */
export function renderCollectionMarkdown(runId: string, summary: MemoryCollectionSummary): string {
  const out = ['## Run', '', `Run \`${markdownCell(runId)}\`: ${summary.generations} generation cells.`, ''];
  out.push('| target | labelled | empty (dropout) | failed | refused | no steps | invalid labels | unlabelled |', '|---|---|---|---|---|---|---|---|');
  for (const t of summary.perTarget) {
    out.push(`| ${markdownCell(t.target)} | ${t.labelled} | ${t.empty} | ${t.failed} | ${t.refused} | ${t.no_steps} | ${t.invalid} | ${t.unlabelled} |`);
  }
  const list = (record: Record<string, number>) =>
    Object.entries(record)
      .sort()
      .map(([k, v]) => `${markdownCell(k)} ${v}`)
      .join(', ') || 'none';
  out.push(
    '',
    `Step extraction (docs/decisions.md#d7): ${list(summary.stepMethods)}; from ${list(summary.stepSources)}.`,
    `Labeler attempt that parsed (1 = first answer): ${list(summary.labelerAttempts)}; unknown labels mapped to unmapped: ${summary.coercedUnknownLabels}.`,
    `Invalid labelings by the failure of their last attempt: ${list(summary.labelerFailures)}.`,
    `Step cap (steps.maxSteps ${summary.stepCap.maxSteps}): ${summary.stepCap.answersCut} answers cut, ${summary.stepCap.stepsCut} steps not labeled.`,
    '',
  );
  const judge = summary.refusalJudge;
  if (judge !== undefined) {
    const a = judge.agreement;
    out.push(
      `Refusal judge \`${markdownCell(judge.model)}\` (its verdict decides; the detector decides where it has none): ${judge.answers} answers, ` +
        `${judge.invalid} verdicts invalid after re-asks, ${judge.unanswered} unanswered; ${judge.refusals} refusals counted. ` +
        `Agreement with the detector on ${a.judged} judged answers: both refusal ${a.both}, judge only ${a.judgeOnly}, detector only ${a.detectorOnly}, neither ${a.neither}` +
        `${a.agreement === null ? '' : ` (${(100 * a.agreement).toFixed(1)} % agree, κ ${a.kappa === null ? 'n/a' : a.kappa.toFixed(2)})`}.`,
      '',
    );
  }
  for (const warning of summary.formatWarnings) out.push(`**Format warning.** ${markdownCell(warning)}.`, '');
  if (summary.formatCompliance.length > 0) {
    out.push('Step format per target and condition (share in `<step_N>` tags or a reasoning trace):', '');
    out.push('| target | condition | answered | in step format | methods |', '|---|---|---|---|---|');
    for (const c of summary.formatCompliance) {
      out.push(
        `| ${markdownCell(c.target)} | ${markdownCell(c.condition)} | ${c.answered} | ${c.compliant === null ? 'n/a' : `${(100 * c.compliant).toFixed(0)} %`} | ${list(c.methods)} |`,
      );
    }
    out.push('');
  }
  return out.join('\n');
}
