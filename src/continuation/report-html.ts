import { documentVerdict } from '../report/document/build.js';
import type { DocumentVerdict } from '../report/document/types.js';
import { forestSpec, type IntervalRow, shortLabel } from '../report/charts.js';
import { figure, html, type RawHtml, table } from '../report/html.js';
import { vegaLiteToSvg } from '../report/svg.js';
import type { PairedEstimate } from './analysis.js';
import { primaryVerdict } from './report-markdown.js';
import type { ContinuationReport } from './run.js';
import { pValue as pv, signed as signedNumber } from '../report/format.js';

/** The continuation audit's HTML: its first-screen headline and its report section (pure apart from chart rendering). */

const signed = (x: number | null) => signedNumber(x, 3);
export const continuationCiText = (e: PairedEstimate): string => (e.ci ? `${signed(e.mean)} [${signed(e.ci[0])}, ${signed(e.ci[1])}]` : signed(e.mean));

/**
 * Per target: the primary contrast (recent − cross argument fidelity) with its
 * 95% interval, complete case and intention to treat, and the parseable calls
 * per arm — every number read from `report.analysis`, as in the JSON. The
 * verdict reads the intention-to-treat estimate, the one the gate checks, so the
 * headline's MDE and the gate's are one number (docs/continuation.md).
 */
export function continuationVerdicts(report: ContinuationReport): DocumentVerdict[] {
  const level = `${Math.round(100 * (1 - report.analysis.alpha))}%`;
  return report.analysis.targets.map((t): DocumentVerdict => {
    const p = t.contrasts.find((c) => c.primary);
    if (!p) return documentVerdict({ subject: t.target, verdict: 'not computable', tone: 'neutral', numbers: [] });
    const itt = p.itt;
    const power = t.power?.itt;
    const excludesZero = itt.ci !== null && (itt.ci[0] > 0 || itt.ci[1] < 0);
    const calls = (arm: string) => t.attrition.find((a) => a.arm === arm);
    const callText = [p.a, p.b].map((arm) => {
      const a = calls(arm);
      return a ? `${arm} ${a.calls}/${a.attempted}` : `${arm} n/a`;
    });
    return documentVerdict({
      subject: t.target,
      verdict: primaryVerdict(itt, power, p.a, p.b),
      tone: itt.mean === null || itt.ci === null || !excludesZero ? 'neutral' : 'alert',
      estimate: itt.mean,
      interval: itt.ci,
      p: itt.p,
      mde: power?.mde ?? null,
      effectOfInterest: power?.effectOfInterest ?? null,
      underpowered: itt.mean !== null && itt.ci !== null && !excludesZero && power?.underpowered === true && power.mde !== null,
      numbers: [
        {
          label: `${p.a} − ${p.b} fidelity, ITT [${level} CI]`,
          value: continuationCiText(itt),
          detail: `n ${itt.n} cutpoints, sign-flip p ${pv(itt.p)}`,
        },
        {
          label: `${p.a} − ${p.b} fidelity, complete case [${level} CI]`,
          value: continuationCiText(p.completeCase),
          detail: `n ${p.completeCase.n} cutpoints, sign-flip p ${pv(p.completeCase.p)}`,
        },
        {
          label: 'parseable calls',
          value: callText.join(' · '),
          detail: `${t.cutpoints} cutpoints (${t.sameTaskCutpoints} same-task, ${t.crossTaskCutpoints} cross-task)`,
        },
      ],
    });
  });
}

export async function continuationHtmlSection(report: ContinuationReport): Promise<RawHtml> {
  const parts: RawHtml[] = [];
  if (report.simulated) parts.push(html`<p class="note"><strong>Simulated targets: nothing was measured.</strong></p>`);
  parts.push(
    html`<p class="note">Argument fidelity (0–1) of the next tool call against the call recorded in the transcript, at ${report.cutpoints.length} cutpoints of <code>${report.session ?? '?'}</code>; cross arm from <code>${report.crossSession ?? 'the same session, half a session away'}</code>. Complete case = both arms returned a parseable call; ITT = every generated pair, unparseable / prose / missing scored 0. Paired sign-flip test and its inverted 95% interval (it excludes 0 exactly when p < 0.05). Tools: ${report.tools.join(', ')} (${report.toolSource ?? '?'}).</p>`,
  );
  const rows: IntervalRow[] = [];
  for (const t of report.analysis.targets) {
    for (const c of t.contrasts) {
      for (const kind of ['completeCase', 'itt'] as const) {
        const e = c[kind];
        const group = kind === 'completeCase' ? 'complete case' : 'ITT';
        if (e.mean !== null && e.ci) {
          rows.push({
            label: `${shortLabel(t.target, 24)} · ${c.a} − ${c.b}`,
            estimate: e.mean,
            lo: e.ci[0],
            hi: e.ci[1],
            group,
            tip: `${t.target}, ${c.a} − ${c.b} (${group}, ${e.role}): ${continuationCiText(e)}, n ${e.n}, p ${pv(e.p)}${e.role === 'exploratory' ? ' (unadjusted)' : ''}`,
          });
        }
      }
    }
  }
  if (rows.length > 0) {
    parts.push(html`<h3 id="continuation-contrasts">Argument fidelity differences between arms</h3>`);
    parts.push(
      figure(
        await vegaLiteToSvg(forestSpec(rows, { xTitle: 'Δ argument fidelity (a − b)' })),
        'Point = mean paired difference, bar = 95% interval over cutpoints (the sign-flip test inverted).',
      ),
    );
  }
  for (const t of report.analysis.targets) {
    parts.push(html`<h3>${t.target}: attrition per arm</h3>`);
    parts.push(
      table(t.attrition, [
        { header: 'arm', value: (a) => a.arm },
        { header: 'generated', value: (a) => `${a.generated}/${a.attempted}`, numeric: true },
        { header: 'parseable calls', value: (a) => a.calls, numeric: true },
        { header: 'unparseable', value: (a) => a.unparseable, numeric: true },
        { header: 'prose', value: (a) => a.prose, numeric: true },
        { header: 'missing', value: (a) => a.missing, numeric: true },
        {
          header: 'mean fidelity (calls / ITT)',
          value: (a) => `${a.meanFidelity?.toFixed(3) ?? 'n/a'} / ${a.meanFidelityItt?.toFixed(3) ?? 'n/a'}`,
          numeric: true,
        },
      ]),
    );
    parts.push(html`<h3>${t.target}: contrasts (${t.sameTaskCutpoints} same-task, ${t.crossTaskCutpoints} cross-task cutpoints)</h3>`);
    for (const w of t.warnings) parts.push(html`<p class="note">Warning: ${w}</p>`);
    parts.push(
      html`<p class="note">Primary: recent − cross over all cutpoints (complete case and ITT). Every other row, and every stratum column, is exploratory: unadjusted p-values, one of many per target.</p>`,
    );
    parts.push(
      table(t.contrasts, [
        { header: 'contrast', value: (c) => `${c.a} − ${c.b}${c.primary ? ' (primary)' : ''}` },
        { header: 'role', value: (c) => (c.primary ? 'primary (all cutpoints); strata exploratory' : 'exploratory') },
        { header: 'complete case Δ [CI]', value: (c) => continuationCiText(c.completeCase), numeric: true },
        { header: 'n / p', value: (c) => `${c.completeCase.n} / ${pv(c.completeCase.p)}`, numeric: true },
        { header: 'ITT Δ [CI]', value: (c) => continuationCiText(c.itt), numeric: true },
        { header: 'n / p', value: (c) => `${c.itt.n} / ${pv(c.itt.p)}`, numeric: true },
        {
          header: 'same-task Δ (CC / ITT)',
          value: (c) => `${signed(c.strata.sameTask.completeCase.mean)} / ${signed(c.strata.sameTask.itt.mean)}`,
          numeric: true,
        },
        {
          header: 'cross-task Δ (CC / ITT)',
          value: (c) => `${signed(c.strata.crossTask.completeCase.mean)} / ${signed(c.strata.crossTask.itt.mean)}`,
          numeric: true,
        },
      ]),
    );
  }
  for (const t of report.reference?.targets ?? []) {
    // procedure: reference — the authors' scoring beside the calibrated one (report-reference.ts has the Markdown).
    const calibrated = report.analysis.targets.find((c) => c.target === t.target);
    parts.push(html`<h3>${t.target}: the authors’ scoring (procedure: reference; the verdict uses the calibrated fidelity)</h3>`);
    parts.push(
      table(t.analysis.contrasts, [
        { header: 'contrast', value: (c) => `${c.a} − ${c.b}${c.primary ? ' (primary)' : ''}` },
        {
          header: 'complete case Δ, calibrated',
          value: (c) => continuationCiText(calibrated?.contrasts.find((x) => x.a === c.a && x.b === c.b)?.completeCase ?? c.completeCase),
          numeric: true,
        },
        { header: 'complete case Δ, authors', value: (c) => continuationCiText(c.completeCase), numeric: true },
        {
          header: 'ITT Δ, calibrated',
          value: (c) => continuationCiText(calibrated?.contrasts.find((x) => x.a === c.a && x.b === c.b)?.itt ?? c.itt),
          numeric: true,
        },
        { header: 'ITT Δ, authors', value: (c) => continuationCiText(c.itt), numeric: true },
      ]),
    );
    parts.push(
      table(t.arms, [
        { header: 'arm', value: (a) => a.arm },
        { header: 'tool match (M1)', value: (a) => `${a.toolMatches}/${a.generated}`, numeric: true },
        { header: 'argument similarity of matching calls (M2)', value: (a) => a.argSimilarity?.toFixed(3) ?? 'n/a', numeric: true },
      ]),
    );
  }
  return html`${parts}`;
}
