import type { SeriesHeadline } from './baseline.js';
import type { DesignHistory, HistoryEntry } from './history.js';
import { escapeHtml, html, type RawHtml, raw } from './html.js';

/**
 * The trend of one design (the viewer's /trend page, and the HTML report of a design's latest
 * measurement): per headline statistic, each measurement's estimate with its interval over time,
 * with model-version changes marked; then the measurements as a table. A hand-written SVG (no
 * script, every text escaped: model ids are provider-reported and untrusted). Pure.
 */

const W = 760;
const H = 280;
const PAD = { left: 64, right: 72, top: 24, bottom: 70 };

const fmt = (h: Pick<SeriesHeadline, 'scale'>, x: number) => (h.scale === 'percent' ? `${(100 * x).toFixed(0)}%` : `${x >= 0 ? '+' : ''}${x.toFixed(2)}`);

/** The headlines of one statistic across the runs, in order (undefined where a run has none). */
function seriesAcross(runs: readonly HistoryEntry[], key: string): Array<SeriesHeadline | undefined> {
  return runs.map((r) => r.headlines.find((h) => `${h.statistic} · ${h.subject}` === key));
}

function chart(runs: readonly HistoryEntry[], key: string): RawHtml {
  const points = seriesAcross(runs, key);
  const values = points.flatMap((p) => (p && p.estimate !== null ? [p.estimate, ...(p.ci ?? [])] : []));
  if (values.length === 0) return html`<p class="muted">No estimate in any measurement.</p>`;
  let lo = Math.min(0, ...values);
  let hi = Math.max(0, ...values);
  if (hi - lo < 1e-9) {
    lo -= 1;
    hi += 1;
  }
  const span = hi - lo;
  lo -= span * 0.08;
  hi += span * 0.08;
  const x = (i: number) => PAD.left + (runs.length === 1 ? (W - PAD.left - PAD.right) / 2 : (i * (W - PAD.left - PAD.right)) / (runs.length - 1));
  const y = (v: number) => PAD.top + ((hi - v) * (H - PAD.top - PAD.bottom)) / (hi - lo);
  const parts: string[] = [];
  // Axes, zero line and ticks.
  parts.push(`<line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${H - PAD.bottom}" stroke="#57606a"/>`);
  parts.push(`<line x1="${PAD.left}" y1="${y(0)}" x2="${W - PAD.right}" y2="${y(0)}" stroke="#d0d7de" stroke-dasharray="3 3"/>`);
  const sample = points.find((p) => p !== undefined) as SeriesHeadline;
  for (let t = 0; t <= 4; t++) {
    const v = lo + ((hi - lo) * t) / 4;
    parts.push(`<text x="${PAD.left - 6}" y="${y(v) + 4}" font-size="11" text-anchor="end" fill="#57606a">${escapeHtml(fmt(sample, v))}</text>`);
  }
  // Model-version changes: a dashed vertical line before the run whose reported versions changed.
  runs.forEach((r, i) => {
    if (!r.modelChanged || i === 0) return;
    const mx = (x(i - 1) + x(i)) / 2;
    parts.push(
      `<g class="model-change"><title>${escapeHtml(`model version changed: ${modelsText(r)}`)}</title><line x1="${mx}" y1="${PAD.top}" x2="${mx}" y2="${H - PAD.bottom}" stroke="#b42318" stroke-dasharray="5 4"/><text x="${mx + 4}" y="${PAD.top + 10}" font-size="11" fill="#b42318">model changed</text></g>`,
    );
  });
  // The estimate line, then each measurement's interval and point.
  const line = points.flatMap((p, i) => (p && p.estimate !== null ? [`${x(i)},${y(p.estimate)}`] : []));
  if (line.length > 1) parts.push(`<polyline points="${line.join(' ')}" fill="none" stroke="#0a58ca" stroke-width="1.5"/>`);
  points.forEach((p, i) => {
    const run = runs[i] as HistoryEntry;
    const label = `${run.measuredAt.slice(0, 16).replace('T', ' ')}${run.tag ? ` [${run.tag}]` : ''}`;
    parts.push(
      `<text x="${x(i)}" y="${H - PAD.bottom + 16}" font-size="11" text-anchor="middle" fill="#1b1f24">${escapeHtml(run.measuredAt.slice(0, 10))}</text>`,
      `<text x="${x(i)}" y="${H - PAD.bottom + 29}" font-size="11" text-anchor="middle" fill="#57606a">${escapeHtml(run.measuredAt.slice(11, 16))} UTC</text>`,
    );
    if (run.tag) parts.push(`<text x="${x(i)}" y="${H - PAD.bottom + 43}" font-size="11" text-anchor="middle" fill="#57606a">${escapeHtml(run.tag)}</text>`);
    if (!p || p.estimate === null) return;
    const title = `${label}: ${fmt(p, p.estimate)}${p.ci ? ` [${fmt(p, p.ci[0])}, ${fmt(p, p.ci[1])}]` : ''} · ${modelsText(run)}`;
    const ci = p.ci ? `<line x1="${x(i)}" y1="${y(p.ci[0])}" x2="${x(i)}" y2="${y(p.ci[1])}" stroke="#0a58ca" stroke-width="2"/>` : '';
    parts.push(
      `<g class="measurement"><title>${escapeHtml(title)}</title>${ci}<circle cx="${x(i)}" cy="${y(p.estimate)}" r="5" fill="${run.modelChanged ? '#b42318' : '#0a58ca'}"/></g>`,
    );
  });
  return raw(
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${escapeHtml(`${key} over time`)}">${parts.join('')}</svg>`,
  );
}

function modelsText(r: HistoryEntry): string {
  return (
    Object.entries(r.models)
      .map(([m, v]) => `${m} → ${v.length === 0 ? '(not reported)' : v.join(', ')}`)
      .join('; ') || 'no model reported'
  );
}

/** The trend of a design: one chart per headline statistic, then the measurements. */
export function trendSection(design: DesignHistory, options: { runHref?: (run: string) => string } = {}): RawHtml {
  const keys = [...new Set(design.runs.flatMap((r) => r.headlines.map((h) => `${h.statistic} · ${h.subject}`)))];
  const charts = keys.map(
    (key) =>
      html`<figure class="chart trend"><figcaption><strong>${key}</strong>: each measurement's estimate with its 95% interval, oldest first; a red dashed line marks a change of the model version the provider reported.</figcaption>${chart(design.runs, key)}</figure>`,
  );
  const rows = design.runs.map((r) => {
    const run = options.runHref ? html`<a href="${options.runHref(r.run)}">${r.run}</a>` : html`<code>${r.run}</code>`;
    const estimates = r.headlines.map(
      (h, i) =>
        html`${i > 0 ? html`<br>` : ''}${h.subject}: ${h.estimate === null ? 'n/a' : fmt(h, h.estimate)}${h.ci ? ` [${fmt(h, h.ci[0])}, ${fmt(h, h.ci[1])}]` : ''}`,
    );
    return html`<tr class="${r.modelChanged ? 'model-changed' : ''}"><td>${r.measuredAt.replace('T', ' ').slice(0, 19)}</td><td>${run}</td><td>${r.tag ?? ''}</td><td>${r.incomplete ?? r.status}</td><td>${estimates.length > 0 ? estimates : '—'}</td><td>${modelsText(r)}${r.modelChanged ? html` <strong class="yes">(changed)</strong>` : ''}</td></tr>`;
  });
  return html`<section class="trend" id="trend-${design.design}"><h2>Over time: ${design.audit} design <code>${design.design}</code></h2><p class="note">${design.runs.length} measurement${design.runs.length === 1 ? '' : 's'} of the same design (<code>run --fresh</code> adds one). Compare two with <code>echolens compare &lt;run.db&gt; --baseline first</code>.</p>${charts}<table><thead><tr><th>measured</th><th>run</th><th>tag</th><th>status</th><th>headline estimate [95% CI]</th><th>model versions reported</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}
