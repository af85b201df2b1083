import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinAudits } from '../../audits.js';
import { registerBuiltinSimProfiles } from '../../builtin-sims.js';
import { escapeHtml } from '../html.js';
import { cellsText } from '../report.js';
import { resultDocumentSchema } from './schema.js';
import type { ResultDocument } from './types.js';
import { useStoreViewer } from '../viewer/testing/store-viewer.js';
import { cliStdout as cli, markdownOfRun, reportFormats } from '../../cli/testing/surfaces.js';

// The every-surface consistency test (issue 42): the demo store rendered in every format — the HTML,
// Markdown, JSON and CSV reports, the demo's terminal summary, the viewer's run list and report page,
// `gate`, `compare` and `runs list` — states each run's headline fields (cell counts, cost, SIMULATED,
// verdict, estimate, interval, p, MDE, underpowered) as the run's result document has them.
registerBuiltinAudits();
registerBuiltinSimProfiles();

const dir = mkdtempSync(join(tmpdir(), 'echolens-surfaces-'));
const db = join(dir, 'demo', 'demo.db');
const out: Record<string, string> = {};
let docs: ResultDocument[] = [];
const served = useStoreViewer();

const signed = (x: number, digits: number) => (x >= 0 ? `+${x.toFixed(digits)}` : x.toFixed(digits));
const docOf = (audit: string) => docs.find((d) => d.run.audit === audit) as ResultDocument;
const mdOf = (runId: string) => markdownOfRun(out.md as string, runId);

beforeAll(async () => {
  out.demo = await cli(['demo', '--out-dir', join(dir, 'demo')]);
  Object.assign(out, await reportFormats(db, dir));
  out.runs = await cli(['runs', 'list', db]);
  out.runsJson = await cli(['runs', 'list', db, '--json']);
  out.gate = await cli(['gate', db, '--format', 'json'], [0, 1]);
  out.compare = await cli(['compare', db, db, '--json']);
  const json = JSON.parse(out.json as string) as { runs: Array<{ document: unknown }> };
  docs = json.runs.map((r) => resultDocumentSchema.parse(r.document));
  await served.open(db);
  out.viewerRuns = await (await fetch(new URL('/', served.viewer.url))).text();
}, 600_000);

describe('every surface states the result document', () => {
  it('holds one valid document per audit of the demo', () => {
    expect(docs.map((d) => d.run.audit).sort()).toEqual(['continuation', 'memory', 'persona']);
  });

  it.each(['persona', 'memory', 'continuation'])('%s: cell counts, cost and SIMULATED agree everywhere', async (audit) => {
    const doc = docOf(audit);
    const { cells, done, failed, pending } = doc.counts;
    expect(doc.provenance.simulated).toBe(true);
    expect(doc.cost.usd).toBe(0);
    // Markdown: the spend line, the banner.
    const md = mdOf(doc.run.id);
    expect(md).toContain(`Spend $0.0000; cells ${cellsText(doc)};`);
    expect(md).toContain('> **Simulated models**');
    // HTML report: the metadata table and the first-screen card's tag.
    expect(out.html).toContain(`<td>${cellsText(doc)}</td>`);
    expect(out.html).toMatch(new RegExp(`data-run="${doc.run.id}"[^>]*><div class="audit"><a [^>]*>[^<]*</a> <span class="tag">simulated</span>`, 'u'));
    // JSON report: the accounting beside the document.
    const entry = (JSON.parse(out.json!) as { runs: Array<{ runId: string; simulated: boolean; accounting: Record<string, unknown> }> }).runs.find(
      (r) => r.runId === doc.run.id,
    );
    expect(entry?.simulated).toBe(true);
    expect(entry?.accounting).toMatchObject({ cells, distinctRequests: doc.counts.distinctRequests, spendUsd: doc.cost.usd });
    // runs list (text and JSON).
    const line = out.runs!.split('\n').find((l) => l.startsWith(`${doc.run.id} `)) ?? '';
    expect(line).toContain(`cells ${cells} (done ${done}, failed ${failed}, pending ${pending})`);
    expect(line).toContain('[SIMULATED]');
    const listed = (JSON.parse(out.runsJson!) as Array<{ id: string; simulated: boolean; cells: { total: number } }>).find((r) => r.id === doc.run.id);
    expect(listed).toMatchObject({ simulated: true, cells: { total: cells } });
    // gate: the failed-cells check counts the same cells.
    const gate = JSON.parse(out.gate!) as { simulated: boolean; checks: Array<{ run: string; name: string; message: string }> };
    expect(gate.simulated).toBe(true);
    expect(gate.checks.find((c) => c.run === doc.run.id && c.name === 'max-failed-cells')?.message).toContain(`${failed + pending} of ${cells} cells`);
    // viewer run list: the same cells and the SIMULATED mark in the run's row.
    const row = out.viewerRuns!.split('<tr>').find((r) => r.includes(`>${doc.run.id}</code>`)) ?? '';
    expect(row).toContain(`>${cells.toLocaleString('en-US')} cell`);
    expect(row).toContain('>SIMULATED</span>');
    // compare: both sides' verdict says simulated.
    const pair = (JSON.parse(out.compare!) as { pairs: Array<{ audit: string; a: { run: string; verdict: { simulated: boolean } } }> }).pairs.find(
      (p) => p.audit === audit,
    );
    expect(pair?.a).toMatchObject({ run: doc.run.id, verdict: { simulated: true } });
    // viewer report page: the same first screen and metadata as the report.
    const page = await (await fetch(new URL(`/report?s=0&r=${doc.run.id}`, served.viewer.url))).text();
    expect(page).toContain(`<td>${cellsText(doc)}</td>`);
    for (const v of doc.verdicts) expect(page).toContain(`<div class="verdict">${v.verdict}</div>`);
  });

  it.each(['persona', 'memory', 'continuation'])('%s: each verdict and its numbers read the same in the report, the viewer and the run list', (audit) => {
    const doc = docOf(audit);
    const md = mdOf(doc.run.id);
    for (const v of doc.verdicts) {
      expect(md).toContain(`- **${v.subject}: ${v.verdict}** — ${v.numbers.map((n) => `${n.label} ${n.value}`).join('; ')}`);
      expect(out.html).toContain(`<div class="verdict">${escapeHtml(v.verdict)}</div>`);
      for (const n of v.numbers) expect(out.html).toContain(`<span class="value">${escapeHtml(n.value)}</span>`);
      expect(out.viewerRuns).toContain(escapeHtml(`${v.subject}: ${v.verdict}`));
    }
  });

  it('persona: the drift gap, its interval and p agree in the CSV, the gate and the terminal summary', () => {
    const doc = docOf('persona');
    const [v] = doc.verdicts;
    expect(v).toBeDefined();
    const { estimate, interval, p, pAdjusted } = v!;
    expect(estimate).not.toBeNull();
    const row = doc.estimates.find((e) => e.table === 'drift' && e.label === 'position-averaged');
    expect(row).toMatchObject({ estimate, interval, p, pAdjusted });
    const csv = out.csv!.split('\n').find((l) => l.startsWith(`${doc.run.id},persona,drift,`));
    expect(csv?.split(',').slice(7, 12).map(Number)).toEqual([estimate, interval![0], interval![1], row!.n, p].map((x) => Number(Number(x).toPrecision(6))));
    const gate = JSON.parse(out.gate!) as { checks: Array<{ run: string; name: string; message: string }> };
    expect(gate.checks.find((c) => c.run === doc.run.id && c.name === 'significant-drift')?.message).toContain(
      `Δ = ${signed(estimate!, 3)} [95% CI ${signed(interval![0], 3)}, ${signed(interval![1], 3)}]`,
    );
    expect(out.demo).toContain(`${v!.verdict} — Δ = ${signed(estimate!, 2)} [95% CI ${signed(interval![0], 2)}, ${signed(interval![1], 2)}]`);
    expect(v!.fragile).toBe(false);
  });

  it('continuation: the MDE and the underpowered verdict are one number in the report, the gate, the viewer and the terminal summary', () => {
    const doc = docOf('continuation');
    const [v] = doc.verdicts;
    expect(v?.mde).not.toBeNull();
    expect(v!.underpowered).toBe(true);
    const mde = `|Δ| ≥ ${v!.mde!.toFixed(2)}`;
    expect(v!.verdict).toContain(mde);
    expect(mdOf(doc.run.id)).toContain(`**${v!.subject}: ${v!.verdict}**`);
    const gate = JSON.parse(out.gate!) as { checks: Array<{ run: string; name: string; message: string }> };
    const check = gate.checks.find((c) => c.run === doc.run.id && c.name === 'significant-action-change')?.message ?? '';
    expect(check).toContain(`underpowered: it detects only ${mde}`);
    // The verdict's estimate is the gated one (ITT), with the same interval, p and n as the CSV row.
    expect(check).toContain(`(ITT) ${signed(v!.estimate!, 3)} [95% CI ${signed(v!.interval![0], 3)}, ${signed(v!.interval![1], 3)}], p = ${v!.p!.toFixed(4)}`);
    const row = doc.estimates.find((e) => e.table === 'contrast/itt' && e.label === 'all (primary)');
    expect(row).toMatchObject({ estimate: v!.estimate, interval: v!.interval, p: v!.p });
    expect(out.demo).toContain(`intention to treat ${signed(v!.estimate!, 2)} (n ${row!.n}, p ${v!.p!.toFixed(3)})`);
    const own = (JSON.parse(out.compare!) as { rows: Array<{ audit: string; statistic: string; ownA: string }> }).rows.find(
      (r) => r.audit === 'continuation' && r.statistic.endsWith('intention to treat'),
    );
    expect(own?.ownA).toBe(signed(v!.estimate!, 2));
  });

  it('memory: the tier elevations agree in the report, the gate and the terminal summary', () => {
    const doc = docOf('memory');
    const [v] = doc.verdicts;
    const gate = JSON.parse(out.gate!) as { checks: Array<{ run: string; name: string; message: string }> };
    for (const [tier, label, gateName, demoName] of [
      ['persona', 'DTW elevation · persona cues', 'significant-elevation:persona', 'persona'],
      ['life_event', 'DTW elevation · life events', 'significant-elevation:life_event', 'life events'],
    ] as const) {
      const value = v!.numbers.find((n) => n.label === label)?.value ?? '';
      const m = /^([+-][\d.]+)% \[([+-][\d.]+)%, ([+-][\d.]+)%\]/u.exec(value);
      expect(m, `${label}: ${value}`).not.toBeNull();
      const [, est, lo, hi] = m!;
      expect(gate.checks.find((c) => c.run === doc.run.id && c.name === gateName)?.message).toContain(`${tier} DTW elevation ${est}% [95% CI ${lo}%, ${hi}%]`);
      // The demo prints whole percents of the same numbers; the document one decimal (compare the
      // numbers, not a re-rounded string: 771.5 in the document may be 771.49… → +771% in the demo).
      const said = new RegExp(`${demoName} ([+-]\\d+)% \\(95% CI ([+-]\\d+)%…([+-]\\d+)%\\)`, 'u').exec(out.demo!);
      expect(said, `${demoName} in the demo summary`).not.toBeNull();
      for (const [shown, exact] of [
        [said![1], est],
        [said![2], lo],
        [said![3], hi],
      ] as const)
        expect(Math.abs(Number(shown) - Number(exact))).toBeLessThanOrEqual(0.55);
    }
    expect(v!.mde).not.toBeNull();
    expect(mdOf(doc.run.id)).toContain(`DTW: elevation ${(100 * v!.mde!).toFixed(1)} %`);
  });
});
