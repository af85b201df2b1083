import type { PairedEstimate } from './analysis.js';
import type { ContinuationReport } from './run.js';
import { markdownText } from '../report/markdown-text.js';
import { renderReferenceContinuationMarkdown } from './report-reference.js';
import { signed } from '../report/format.js';

/** Markdown report of a continuation run (pure). Model output never appears here, only scores. */

const num = (x: number | null, digits = 3) => signed(x, digits, '—');

function pValue(p: number | null): string {
  if (p === null) return '—';
  return p < 0.001 ? '< 0.001' : p.toFixed(3);
}

function estimateCells(e: PairedEstimate): string {
  const ci = e.ci ? `[${num(e.ci[0])}, ${num(e.ci[1])}]` : '—';
  const method = e.method === null ? (e.reason ?? '—') : e.method === 'exact' ? 'exact' : `${e.resamples} resamples`;
  // A test that cannot reach p < α says so in its row (docs/continuation.md).
  const reach = e.warning ? ' · cannot reach p < α' : '';
  return `${e.role} | ${e.n} | ${num(e.mean)} | ${ci} | ${pValue(e.p)} | ${method}${reach}`;
}

/** The primary contrast's verdict in words: detected, not detected, or underpowered (docs/continuation.md, "Power"). */
export function primaryVerdict(
  e: PairedEstimate,
  power: { mde: number | null; effectOfInterest: number; underpowered: boolean | null } | undefined,
  a: string,
  b: string,
): string {
  if (e.mean === null || e.ci === null) return `not computable (${e.reason ?? 'no interval'})`;
  if (e.ci[0] > 0 || e.ci[1] < 0) return `${a} context ${e.mean > 0 ? 'raises' : 'lowers'} fidelity over ${b}`;
  if (power?.underpowered && power.mde !== null) {
    return `underpowered: no ${a} − ${b} difference detected, but this run could only detect |Δ| ≥ ${power.mde.toFixed(2)} (effect of interest ${power.effectOfInterest}); add cutpoints`;
  }
  return `no detectable ${a} − ${b} difference${power?.mde != null ? ` (this run detects |Δ| ≥ ${power.mde.toFixed(2)} at 80% power)` : ''}`;
}

function escapeCell(text: string): string {
  return markdownText(text);
}

export function renderContinuationMarkdown(report: ContinuationReport): string {
  const lines: string[] = [];
  lines.push('# Tool-using continuation audit', '');
  if (report.simulated) {
    lines.push('> **Simulated targets (`sim:`): nothing was measured.** The numbers show the audit works, not how any model behaves.', '');
  }
  lines.push(
    `Run \`${report.runId}\` · session \`${report.session ?? '?'}\` · cross arm from \`${report.crossSession ?? 'the same session (half a session away)'}\``,
  );
  lines.push(
    `Tools offered: ${report.tools.map((t) => `\`${t}\``).join(', ') || '—'} (${report.toolSource ?? '?'}) · task labels: ${report.taskSource ?? '?'}`,
  );
  lines.push('');
  lines.push(
    'Argument fidelity (0–1) of the next tool call against the one recorded in the transcript, paired by cutpoint. ' +
      '**Complete case**: cutpoints where both arms returned a parseable call. **ITT** (intention to treat): every cutpoint ' +
      'where both arms were generated, an unparseable, prose or missing answer scoring 0. Two-sided paired sign-flip test; its inverted 95% interval (excludes 0 exactly when p < 0.05).',
  );
  lines.push('');
  if (report.judge) {
    const j = report.judge;
    lines.push(
      `Judge \`${j.model ?? '?'}\` on free-text and command arguments below an exact match: ${j.questions} distinct questions, ` +
        `${j.equivalent} equivalent (scored 1), ${j.different} different, ${j.invalid} unreadable, ${j.unanswered} unanswered (deterministic score kept).`,
      '',
    );
  }
  for (const note of report.notes) lines.push(`- note: ${note}`);
  if (report.notes.length > 0) lines.push('');
  for (const t of report.analysis.targets) {
    lines.push(`## ${t.target}`, '');
    lines.push(`${t.cutpoints} cutpoints (${t.sameTaskCutpoints} same-task, ${t.crossTaskCutpoints} cross-task).`, '');
    const primary = t.contrasts.find((c) => c.primary);
    if (primary) {
      lines.push(
        `**Primary contrast, recent − cross:** complete case ${num(primary.completeCase.mean)} (n = ${primary.completeCase.n}, p = ${pValue(primary.completeCase.p)}), ITT ${num(primary.itt.mean)} (n = ${primary.itt.n}, p = ${pValue(primary.itt.p)}).`,
        '',
      );
      lines.push(`Verdict (complete case): ${primaryVerdict(primary.completeCase, t.power?.completeCase, primary.a, primary.b)}.`, '');
      lines.push(`Verdict (ITT): ${primaryVerdict(primary.itt, t.power?.itt, primary.a, primary.b)}.`, '');
    }
    for (const w of t.warnings) lines.push(`- warning: ${escapeCell(w)}`);
    if (t.warnings.length > 0) lines.push('');
    lines.push('### Attrition per arm', '');
    lines.push(
      '| arm | attempted | generated | parseable calls | unparseable | prose | missing | not generated | mean fidelity (calls) | mean fidelity (ITT) |',
    );
    lines.push('|---|---|---|---|---|---|---|---|---|---|');
    for (const a of t.attrition) {
      lines.push(
        `| ${a.arm} | ${a.attempted} | ${a.generated} | ${a.calls} | ${a.unparseable} | ${a.prose} | ${a.missing} | ${a.notGenerated} | ${a.meanFidelity === null ? '—' : a.meanFidelity.toFixed(3)} | ${a.meanFidelityItt === null ? '—' : a.meanFidelityItt.toFixed(3)} |`,
      );
    }
    lines.push('', '### Every contrast', '');
    lines.push(
      'Only the two **primary** rows (recent − cross over all cutpoints, complete case and ITT) test the pre-specified question. ' +
        'Every other row is **exploratory**: its p-value is unadjusted, one of many per target, and by chance alone about one in twenty will fall below 0.05.',
      '',
    );
    lines.push('| contrast | analysis | stratum | role | n | Δ fidelity | 95% CI | p | test |');
    lines.push('|---|---|---|---|---|---|---|---|---|');
    for (const c of t.contrasts) {
      const name = `${c.a} − ${c.b}${c.primary ? ' (primary)' : ''}`;
      for (const kind of ['completeCase', 'itt'] as const) {
        const label = kind === 'completeCase' ? 'complete case' : 'ITT';
        lines.push(`| ${name} | ${label} | all | ${estimateCells(c[kind])} |`);
        lines.push(`| ${name} | ${label} | same-task | ${estimateCells(c.strata.sameTask[kind])} |`);
        lines.push(`| ${name} | ${label} | cross-task | ${estimateCells(c.strata.crossTask[kind])} |`);
      }
    }
    lines.push('');
  }
  if (report.reference) lines.push(renderReferenceContinuationMarkdown(report));
  lines.push('## Cutpoints', '');
  lines.push('| cutpoint | line | position | ground-truth tool | task | recent window task | stratum |');
  lines.push('|---|---|---|---|---|---|---|');
  for (const c of report.cutpoints) {
    const stratum = c.sameTask === null ? '—' : c.sameTask ? 'same-task' : 'cross-task';
    lines.push(
      `| ${c.id} | ${c.line} | ${(100 * c.fraction).toFixed(0)}% | \`${escapeCell(c.groundTruth.name)}\` | ${escapeCell(c.task)} | ${escapeCell(c.windowTask ?? '—')} | ${stratum} |`,
    );
  }
  lines.push('');
  return lines.join('\n');
}
