import type { LiveProbePage } from '../../experiment/audit.js';
import { html, type RawHtml, raw } from '../html.js';
import { snippet } from './pages.js';

const isSim = (model: string) => model.startsWith('sim:');

/** Says which of the probe's models are simulations, when any is. */
function simulatedBanner(page: LiveProbePage): RawHtml {
  const { target, judge } = page;
  return html`<p class="banner" id="sim-banner"><strong>Simulated models.</strong> ${isSim(target) ? html`The target <code>${target}</code>` : 'The target'}${isSim(target) && isSim(judge) ? ' and ' : ' '}${isSim(judge) ? html`the judge <code>${judge}</code>` : ''} are deterministic simulations with planted effects: this live probe shows what the audit measures, not how any real model behaves. Pass <code>--target</code> and <code>--judge</code> to use real models.</p>`;
}

/** The body of an audit's live-probe page (the viewer wraps it in its page; the viewer's script drives the form). */
export function liveProbeBody(page: LiveProbePage, context: { simulated: boolean }): RawHtml {
  const positionOptions = page.sessions.map(
    (s) =>
      html`<optgroup label="${s.id} · ${s.name}">${s.positions.map(
        (p, i) =>
          html`<option value="${s.index}:${i}"${s.index === 0 && i === Math.floor(s.positions.length / 2) ? raw(' selected') : ''}>${s.id} · ${p.label} (step ${p.value} of ${s.total})</option>`,
      )}</optgroup>`,
  );
  const presets = page.presets.map((p) => html`<option value="${p.text}">${p.id} · ${p.category} — ${snippet(p.text, 70)}</option>`);
  const switches = page.switches.map((s) => html`<label><input type="checkbox" id="${s.id}"${s.checked ? raw(' checked') : ''}> ${s.label}</label>`);
  const hiddenArms = new Set(page.switches.filter((s) => s.arm !== undefined && !s.checked).map((s) => s.arm));
  return html`${context.simulated ? simulatedBanner(page) : html``}
<p class="note">${page.note} Target <code id="target-model">${page.target}</code>, judge <code id="judge-model">${page.judge}</code>.</p>
<form class="controls" id="probe-form">
<label>session and position<select id="position" name="position">${positionOptions}</select></label>
<label>built-in probe<select id="preset"><option value="">(type your own)</option>${presets}</select></label>
<div class="row">${switches}</div>
<label class="wide">probe<textarea id="probe" name="probe" maxlength="${page.maxProbeChars}">${page.presets[0]?.text ?? ''}</textarea></label>
<div class="row wide"><button type="submit" id="run">Run</button><button type="button" id="stop" disabled>Stop</button><span class="status-line" id="status"></span></div>
</form>
<noscript><p class="error">The live probe needs JavaScript (the viewer's own script, /app.js).</p></noscript>
<div class="arms" id="arms">
${page.arms.map(
  (arm) =>
    html`<section class="arm" id="arm-${arm.id}"${hiddenArms.has(arm.id) ? raw(' hidden') : ''}><h3>${arm.title}</h3><div class="context"></div><pre class="text stream" data-deltas="0"></pre><div class="verdict"></div></section>`,
)}
</div>`;
}
