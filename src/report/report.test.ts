import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinAudits } from '../audits.js';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { packageRoot } from '../core/version.js';
import { registerSimProfile } from '../models/sim-registry.js';
import { personaConfigSchema } from '../persona-drift/config.js';
import { runPersona } from '../persona-drift/run.js';
import { openStore } from '../store/run-store.js';
import { escapeHtml, html } from './html.js';
import { renderReport } from './report.js';

const PAYLOAD = '<script>alert(1)</script><img src=x onerror="alert(2)"><a href="javascript:alert(3)">click</a> =HYPERLINK("http://127.0.0.1")';

describe('html escaping', () => {
  it('escapes every interpolated value', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&`)).toBe('&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;');
    expect(html`<p>${PAYLOAD}</p>`.html).not.toMatch(/<script|<img|<a /u);
  });
});

describe('report of a run whose model output is hostile', () => {
  let db: string;
  beforeAll(async () => {
    registerBuiltinSimProfiles();
    registerBuiltinAudits();
    // The payload with a part that depends on the whole request: one fixed answer to everything would (rightly) make the verdict "not computable".
    registerSimProfile({
      name: 'hostile',
      description: 'SIMULATION: answers with XSS payloads',
      answer: (request) => ({ text: `${PAYLOAD} (${JSON.stringify(request.messages).length})` }),
    });
    db = join(mkdtempSync(join(tmpdir(), 'echolens-report-')), 'hostile.db');
    const config = personaConfigSchema.parse({
      sessions: [join(packageRoot(), 'data', 'demo', 'claude-session.jsonl')],
      positions: [{ steps: [40, 70] }],
      targets: ['sim:hostile', 'sim:persona'],
      judges: ['sim:judge'],
      stressors: { ids: ['S2'], paraphrases: 2 },
      analysis: { B: 300 },
    });
    await runPersona(config, db, { progress: false, signal: new AbortController().signal });
  });

  it('renders HTML with a strict CSP, no script and inert payloads', async () => {
    const store = openStore(db, { readonly: true });
    const page = await renderReport(store, 'html');
    await store.close();
    expect(page).toMatch(/<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; script-src &#39;none&#39;/u);
    expect(page).not.toMatch(/<script/iu);
    expect(page).not.toMatch(/<img/iu);
    expect(page).not.toMatch(/<a href="javascript:/iu);
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page.match(/<svg/gu)?.length ?? 0).toBeGreaterThanOrEqual(4);
    expect(page).toContain('Simulated models.');
  });

  it('rounds CSV numbers to 6 significant digits and keeps integers exact', async () => {
    const { csvNumber } = await import('./report.js');
    expect(csvNumber(0.1 + 0.2)).toBe('0.3');
    expect(csvNumber(-0.123456789)).toBe('-0.123457');
    expect(csvNumber(1234567)).toBe('1234567');
    expect(csvNumber(0.000012345678)).toBe('0.0000123457');
    expect(csvNumber(Number.NaN)).toBe('');
  });

  it('carries the same numbers in JSON, Markdown and HTML', async () => {
    const store = openStore(db, { readonly: true });
    const json = JSON.parse(await renderReport(store, 'json')) as {
      runs: Array<{ persona: { drift: Array<{ target: string; gap: { estimate: number; ci: [number, number] } }> } }>;
    };
    const md = await renderReport(store, 'md');
    const page = await renderReport(store, 'html');
    const csv = await renderReport(store, 'csv');
    await store.close();
    const drift = json.runs[0]!.persona.drift.find((d) => d.target === 'sim:persona')!;
    const sign = (x: number) => (x >= 0 ? `+${x.toFixed(2)}` : x.toFixed(2));
    const text = `${sign(drift.gap.estimate)} [${sign(drift.gap.ci[0])}, ${sign(drift.gap.ci[1])}]`;
    expect(md).toContain(text);
    expect(page).toContain(text);
    // CSV: 6 significant digits (documented in docs/decisions.md), counts exact.
    expect(csv).toContain(`,drift,sim:persona,sim:judge,,position-averaged,${Number(drift.gap.estimate.toPrecision(6))},`);
    for (const line of csv.trim().split('\n').slice(1)) {
      for (const field of line.split(',')) {
        if (/^-?\d*\.\d+(e-?\d+)?$/u.test(field)) expect(field.replace(/^-?0*\.?0*|\.|e.*$/gu, '').length).toBeLessThanOrEqual(6);
      }
    }
  });

  it("puts a verdict card per target first, whose numbers are the JSON report's, and the metadata last as a table", async () => {
    const store = openStore(db, { readonly: true });
    const json = JSON.parse(await renderReport(store, 'json')) as {
      runs: Array<{
        persona: {
          drift: Array<{
            target: string;
            judge: string;
            gap: { estimate: number; claim: { interval: [number, number]; family: number; confidence: number } };
            verdict: { kind: string };
          }>;
        };
      }>;
    };
    const page = await renderReport(store, 'html');
    await store.close();
    const sign = (x: number) => (x >= 0 ? `+${x.toFixed(2)}` : x.toFixed(2));
    // Two targets: the card prints each target's claim, the Holm-consistent interval at its level.
    const label = (c: { family: number; confidence: number }) =>
      c.family > 1 ? `drift gap Δ [${Number((c.confidence * 100).toFixed(2))}% CI]` : 'drift gap Δ [95% CI]';
    const glance = page.slice(page.indexOf('id="at-a-glance"'), page.indexOf('<section class="run">'));
    expect(glance.length).toBeGreaterThan(0);
    for (const d of json.runs[0]!.persona.drift) {
      const card = glance.slice(glance.indexOf(`${d.target} · judged by ${d.judge}`));
      expect(card).toMatch(new RegExp(`^[^]*?<div class="verdict">${d.verdict.kind}</div>`, 'u'));
      expect(card).toContain(
        `<dd data-label="${label(d.gap.claim)}"><span class="value">${sign(d.gap.estimate)} [${sign(d.gap.claim.interval[0])}, ${sign(d.gap.claim.interval[1])}]</span>`,
      );
    }
    expect(page.indexOf('id="at-a-glance"')).toBeLessThan(page.indexOf('<figure'));
    expect(page.indexOf('id="metadata"')).toBeGreaterThan(page.lastIndexOf('<figure'));
    const meta = page.slice(page.indexOf('id="metadata"'));
    expect(meta).toContain('<th scope="row">targets</th><td>sim:hostile, sim:persona</td>');
    expect(meta).not.toMatch(/<td>\[&quot;|<td>\{&quot;/u);
    const md = await (async () => {
      const again = openStore(db, { readonly: true });
      try {
        return await renderReport(again, 'md');
      } finally {
        await again.close();
      }
    })();
    const d = json.runs[0]!.persona.drift[0]!;
    expect(md).toContain(
      `- **${d.target} · judged by ${d.judge}: ${d.verdict.kind}** — ${label(d.gap.claim)} ${sign(d.gap.estimate)} [${sign(d.gap.claim.interval[0])}, ${sign(d.gap.claim.interval[1])}]`,
    );
  });

  it('every JSON and Markdown report carries a verdict, the manifest and simulated: true', async () => {
    const store = openStore(db, { readonly: true });
    const json = JSON.parse(await renderReport(store, 'json'));
    const md = await renderReport(store, 'md');
    await store.close();
    expect(json.simulated).toBe(true);
    expect(['pass', 'fail']).toContain(json.verdict);
    expect(json.runs[0].simulated).toBe(true);
    expect(json.runs[0].verdict.verdict).toBe(json.verdict);
    expect(json.runs[0].manifest.experiment).toBe('persona');
    expect(md).toMatch(/\*\*Verdict: (PASS|FAIL)\*\*/);
    expect(md).toMatch(/Manifest: run `persona-[0-9a-f]+`, echolens .*simulated: true\./);
    expect(md).toContain('**Simulated models**');
  });

  it('defuses spreadsheet formulas from untrusted text in CSV', async () => {
    const store = openStore(db, { readonly: true });
    const csv = await renderReport(store, 'csv');
    await store.close();
    expect(csv.split('\n')[0]).toBe('run,experiment,table,target,judge,group,label,estimate,ci_low,ci_high,n,p,p_adjusted');
    expect(csv).not.toMatch(/(^|,)=HYPERLINK/mu);
  });
});
