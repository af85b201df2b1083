import { html, type RawHtml, raw } from '../report/html.js';
import { snippet } from '../report/viewer/pages.js';
import type { ProbeSetup } from './live-probe.js';

/** The body of the live probe's page (the viewer wraps it in its page; the viewer's script drives the form). */
export function liveProbeBody(setup: ProbeSetup, context: { simulated: boolean }): RawHtml {
  const positionOptions = setup.sessions.map(
    (s) =>
      html`<optgroup label="${s.id} · ${s.name}">${s.positions.map(
        (p, i) =>
          html`<option value="${s.index}:${i}"${s.index === 0 && i === Math.floor(s.positions.length / 2) ? raw(' selected') : ''}>${s.id} · ${p.label} (step ${p.value} of ${s.total})</option>`,
      )}</optgroup>`,
  );
  const presets = setup.probes.map((p) => html`<option value="${p.text}">${p.id} · ${p.category} — ${snippet(p.text, 70)}</option>`);
  const banner = context.simulated
    ? html`<p class="banner" id="sim-banner"><strong>Simulated models.</strong> ${setup.target.startsWith('sim:') ? html`The target <code>${setup.target}</code>` : 'The target'}${setup.target.startsWith('sim:') && setup.judge.startsWith('sim:') ? ' and ' : ' '}${setup.judge.startsWith('sim:') ? html`the judge <code>${setup.judge}</code>` : ''} are deterministic simulations with planted effects: this live probe shows what the audit measures, not how any real model behaves. Pass <code>--target</code> and <code>--judge</code> to use real models.</p>`
    : html``;
  return html`${banner}
<p class="note">The same probe is sent at the same point of a real agentic session with three contexts: the real transcript up to that point, length- and structure-matched filler, and (optionally) the real transcript with the A-anchor re-stated just before the probe. The judge scores each answer 0–3 (3 = fully assistant-like). Target <code id="target-model">${setup.target}</code>, judge <code id="judge-model">${setup.judge}</code>.</p>
<form class="controls" id="probe-form">
<label>session and position<select id="position" name="position">${positionOptions}</select></label>
<label>built-in probe<select id="preset"><option value="">(type your own)</option>${presets}</select></label>
<div class="row"><label><input type="checkbox" id="framed" checked> benchmark framing</label><label><input type="checkbox" id="anchor"> A-anchor arm</label></div>
<label class="wide">probe<textarea id="probe" name="probe" maxlength="${setup.maxProbeChars}">${setup.probes[0]?.text ?? ''}</textarea></label>
<div class="row wide"><button type="submit" id="run">Run</button><button type="button" id="stop" disabled>Stop</button><span class="status-line" id="status"></span></div>
</form>
<noscript><p class="error">The live probe needs JavaScript (the viewer's own script, /app.js).</p></noscript>
<div class="arms" id="arms">
${(['real', 'filler', 'anchor'] as const).map(
  (arm) =>
    html`<section class="arm" id="arm-${arm}"${arm === 'anchor' ? raw(' hidden') : ''}><h3>${arm === 'real' ? 'Real session context' : arm === 'filler' ? 'Filler context' : 'Real context + A-anchor'}</h3><div class="context"></div><pre class="text stream" data-deltas="0"></pre><div class="verdict"></div></section>`,
)}
</div>`;
}
