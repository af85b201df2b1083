import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinAudits } from '../audits.js';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { packageRoot } from '../core/version.js';
import { registerSimProfile } from '../models/sim-registry.js';
import type { GapEstimate, PersonaReport } from '../persona-drift/analysis.js';
import { createPersonaSimProfile } from '../persona-drift/sim.js';
import { resultDocumentSchema } from './document/schema.js';
import type { EstimateRow, ResultDocument } from './document/types.js';
import { escapeHtml } from './html.js';
import { pValue, signed } from './format.js';
import { useStoreViewer } from './viewer/testing/store-viewer.js';
import { cliStdout as cli, markdownOfRun, reportFormats } from '../cli/testing/surfaces.js';

// Issue 39, "every report surface shows one interval and one p per claim, and they agree": the
// demo store (memory, continuation, one-target persona) plus a three-target persona run, rendered
// as Markdown, HTML, JSON, CSV, the gate, compare, the viewer's run page and the terminal summary.
// For every claim the interval printed excludes 0 exactly when the deciding p (Holm-adjusted in a
// family) is below α, and every surface prints that same interval and p.
registerBuiltinAudits();
registerBuiltinSimProfiles();
registerSimProfile(createPersonaSimProfile({ name: 'persona-mild', drift: 0.25, baselineDrift: 0.02 }));

const ALPHA = 0.05;
const TARGETS = ['sim:persona', 'sim:persona-mild', 'sim:persona-null'];
const dir = mkdtempSync(join(tmpdir(), 'echolens-claim-surfaces-'));
const db = join(dir, 'demo', 'demo.db');
const out: Record<string, string> = {};
let docs: ResultDocument[] = [];
let personaReports: Array<{ runId: string; report: PersonaReport }> = [];
const served = useStoreViewer();

const excludesZero = (ci: readonly [number, number]) => ci[0] > 0 || ci[1] < 0;
const deciding = (row: Pick<EstimateRow, 'p' | 'pAdjusted'>) => row.pAdjusted ?? row.p;
const csvLines = () => out.csv!.split('\n').map((l) => l.split(','));
const round6 = (x: number) => Number(x.toPrecision(6));
const mdOf = (runId: string) => markdownOfRun(out.md as string, runId);

beforeAll(async () => {
  out.demo = await cli(['demo', '--out-dir', join(dir, 'demo')]);
  out.personaRun = await cli([
    'persona',
    'run',
    '--session',
    join(packageRoot(), 'data', 'demo', 'claude-session.jsonl'),
    ...TARGETS.flatMap((t) => ['--target', t]),
    '--judge',
    'sim:judge',
    '--set',
    'positions=[{uniform: 8}]',
    '--set',
    'samples=2',
    '--set',
    'analysis.B=2000',
    '--db',
    db,
  ]);
  Object.assign(out, await reportFormats(db, dir));
  out.gate = await cli(['gate', db, '--format', 'json'], [0, 1]);
  const json = JSON.parse(out.json as string) as { runs: Array<{ runId: string; document: unknown; persona?: PersonaReport }> };
  docs = json.runs.map((r) => resultDocumentSchema.parse(r.document));
  personaReports = json.runs.filter((r) => r.persona !== undefined).map((r) => ({ runId: r.runId, report: r.persona as PersonaReport }));
  const personaRuns = docs.filter((d) => d.run.audit === 'persona').map((d) => d.run.id);
  out.compare = await cli(['compare', db, db, '--run-a', personaRuns[0] as string, '--run-b', personaRuns[1] as string, '--json']);
  await served.open(db);
}, 900_000);

describe('one interval and one p per claim, on every surface', () => {
  it('the store holds a three-target persona run beside the demo', () => {
    const multi = personaReports.find((r) => r.report.drift.length === 3);
    expect(multi, 'three-target persona run').toBeDefined();
    expect(multi!.report.drift.map((d) => d.target).sort()).toEqual([...TARGETS].sort());
  });

  it('persona: each target’s claim (Holm across targets) is the interval and p of the document, CSV, Markdown, HTML, viewer, gate and terminal summary', async () => {
    const multi = personaReports.find((r) => r.report.drift.length === 3)!;
    const doc = docs.find((d) => d.run.id === multi.runId)!;
    const page = await (await fetch(new URL(`/report?s=0&r=${multi.runId}`, served.viewer.url))).text();
    const gate = JSON.parse(out.gate!) as { checks: Array<{ run: string; name: string; subject: string; message: string }> };
    let widened = 0;
    for (const d of multi.report.drift) {
      const g = d.gap as GapEstimate;
      expect('error' in d.gap).toBe(false);
      const c = g.claim;
      expect(c.family).toBe(3);
      expect(c.confidence).toBeGreaterThanOrEqual(0.95);
      // The claim agrees with itself: interval excludes 0 ⇔ deciding p < α.
      expect(excludesZero(c.interval)).toBe(c.p < ALPHA);
      if (c.interval[0] < g.ci[0] || c.interval[1] > g.ci[1]) widened++;
      // Result document: the verdict and the drift estimate row carry the claim.
      const v = doc.verdicts.find((x) => x.subject === `${d.target} · judged by ${d.judge}`)!;
      expect(v.interval).toEqual([c.interval[0], c.interval[1]]);
      expect(v.pAdjusted).toBe(c.p);
      const row = doc.estimates.find((e) => e.table === 'drift' && e.subject === d.target && e.judge === d.judge)!;
      expect(row.interval).toEqual([c.interval[0], c.interval[1]]);
      expect(deciding(row)).toBe(c.p);
      expect(excludesZero(row.interval!)).toBe(deciding(row)! < ALPHA);
      // CSV.
      const csv = csvLines().find((l) => l[0] === multi.runId && l[2] === 'drift' && l[3] === d.target)!;
      expect(csv.slice(8, 10).map(Number)).toEqual([round6(c.interval[0]), round6(c.interval[1])]);
      expect(Number(csv[12])).toBe(round6(c.p));
      // Markdown and HTML headline tables, the HTML verdict card and the viewer's run page: the
      // interval at two decimals beside the Holm p, and never the test-alone interval.
      const text = `${signed(g.estimate)} [${signed(c.interval[0])}, ${signed(c.interval[1])}]`;
      const md = mdOf(multi.runId);
      const mdRow = md.split('\n').find((l) => l.startsWith(`| ${d.target} | ${d.judge} | `))!;
      expect(mdRow).toContain(text);
      expect(mdRow).toContain(`| ${pValue(c.p)} |`);
      for (const surface of [out.html!, page]) {
        expect(surface).toContain(escapeHtml(text));
        expect(surface).toContain(`<span class="value">${escapeHtml(text)}</span>`);
      }
      if (c.interval[0] !== g.ci[0]) {
        const alone = `${signed(g.estimate)} [${signed(g.ci[0])}, ${signed(g.ci[1])}]`;
        if (alone !== text) expect(md).not.toContain(`| ${d.target} | ${d.judge} | ${alone}`);
      }
      // Gate: the significant-drift check states the same interval at three decimals and decides with it.
      const check = gate.checks.find((x) => x.run === multi.runId && x.name === 'significant-drift' && x.subject.startsWith(d.target))!;
      const level = `${Number((c.confidence * 100).toFixed(2))}% CI, Holm over 3 targets`;
      expect(check.message).toContain(
        `[${level} ${c.interval[0] >= 0 ? '+' : ''}${c.interval[0].toFixed(3)}, ${c.interval[1] >= 0 ? '+' : ''}${c.interval[1].toFixed(3)}]`,
      );
      expect(check.message.endsWith('no significant drift')).toBe(!(c.interval[0] > 0));
      // Terminal summary of `persona run`.
      expect(out.personaRun).toContain(
        `[${Number((c.confidence * 100).toFixed(2))}% CI ${signed(c.interval[0])}, ${signed(c.interval[1])}], Holm p = ${pValue(c.p)}`,
      );
    }
    // Not vacuous: the claims of a three-target family are wider than each test alone.
    expect(widened).toBeGreaterThan(0);
    // compare: run B's own estimate (the three-target run) is its report's, as printed.
    const rows = (JSON.parse(out.compare!) as { rows: Array<{ audit: string; statistic: string; ownB: string }> }).rows;
    const ownB = rows.filter((r) => r.audit === 'persona' && r.statistic.startsWith('drift gap')).map((r) => r.ownB);
    expect(ownB.length).toBeGreaterThan(0);
    for (const b of ownB) expect(multi.report.drift.map((d) => signed((d.gap as GapEstimate).estimate))).toContain(b);
  });

  it('persona: every estimate row of every persona run has an interval that agrees with its deciding p', () => {
    let checked = 0;
    for (const doc of docs.filter((d) => d.run.audit === 'persona')) {
      for (const row of doc.estimates) {
        if (row.interval === null || deciding(row) === null) continue;
        if (row.table === 'compaction_change') continue; // the TOST's 90% interval answers another question
        expect(excludesZero(row.interval), `${row.table} ${row.subject} ${row.label}`).toBe(deciding(row)! < ALPHA);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(5);
  });

  it('continuation: the primary contrasts print one interval and one p that agree, in the document, CSV, gate and Markdown', () => {
    const doc = docs.find((d) => d.run.audit === 'continuation')!;
    let checked = 0;
    for (const row of doc.estimates) {
      if (row.interval === null || deciding(row) === null) continue;
      expect(excludesZero(row.interval), `${row.table} ${row.label}`).toBe(deciding(row)! < ALPHA);
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
    const [v] = doc.verdicts;
    const row = doc.estimates.find((e) => e.table === 'contrast/itt' && e.label === 'all (primary)')!;
    expect(row).toMatchObject({ estimate: v!.estimate, p: v!.p });
    if (v!.interval !== null) {
      expect(row.interval).toEqual(v!.interval);
      expect(excludesZero(v!.interval)).toBe(v!.p! < ALPHA);
    }
    const gate = JSON.parse(out.gate!) as { checks: Array<{ run: string; name: string; message: string }> };
    const check = gate.checks.find((c) => c.run === doc.run.id && c.name === 'significant-action-change')?.message ?? '';
    expect(check).toContain(`p = ${v!.p!.toFixed(4)}`);
    // Markdown: the primary ITT row of the contrast table prints the same interval and p.
    const md = mdOf(doc.run.id);
    const three = (x: number) => (x >= 0 ? `+${x.toFixed(3)}` : x.toFixed(3));
    const ci = row.interval ? `[${three(row.interval[0])}, ${three(row.interval[1])}]` : '—';
    const p = row.p! < 0.001 ? '< 0.001' : row.p!.toFixed(3);
    expect(md).toContain(`| recent − cross (primary) | ITT | all | primary | ${row.n} | ${three(row.estimate!)} | ${ci} | ${p} |`);
    // CSV: the same row's interval and p.
    const csv = csvLines().find((l) => l[0] === doc.run.id && l[2] === 'contrast/itt' && l.includes('all (primary)'))!;
    expect(csv).toBeDefined();
    const numbers = csv.slice(7, 12).map((x) => (x === '' ? null : Number(x)));
    expect(numbers).toEqual([
      round6(row.estimate!),
      row.interval ? round6(row.interval[0]) : null,
      row.interval ? round6(row.interval[1]) : null,
      row.n,
      round6(row.p!),
    ]);
  });

  it('memory: every elevation and d_rel row prints an interval that agrees with its deciding p', () => {
    const doc = docs.find((d) => d.run.audit === 'memory')!;
    const disagreements: string[] = [];
    let checked = 0;
    for (const row of doc.estimates) {
      if (row.interval === null || deciding(row) === null) continue;
      if (excludesZero(row.interval) !== deciding(row)! < ALPHA)
        disagreements.push(`${row.table} ${row.group} ${row.label}: ${row.interval} p ${deciding(row)}`);
      checked++;
    }
    expect(checked).toBeGreaterThan(10);
    expect(disagreements).toEqual([]);
    // The d_rel rows (BH within tier) print their claim — the BH-consistent interval beside the BH
    // p — in the Markdown table and the HTML table, and it agrees with that p.
    const memory = (
      JSON.parse(out.json!) as {
        runs: Array<{
          runId: string;
          memory?: {
            targets: Array<{
              metrics: Record<
                string,
                {
                  dRel: Array<{
                    condition: string;
                    result: { dRel: number; claim?: { p: number; interval: [number | null, number | null]; confidence: number } };
                  }>;
                }
              >;
            }>;
          };
        }>;
      }
    ).runs.find((r) => r.runId === doc.run.id)!.memory!;
    const md = mdOf(doc.run.id);
    let claims = 0;
    for (const t of memory.targets) {
      for (const [metric, m] of Object.entries(t.metrics)) {
        for (const d of m.dRel) {
          const c = d.result.claim;
          if (!c) continue;
          const lo = c.interval[0] ?? Number.NEGATIVE_INFINITY;
          const hi = c.interval[1] ?? Number.POSITIVE_INFINITY;
          expect(lo > 0 || hi < 0, `${metric} ${d.condition}`).toBe(c.p < ALPHA);
          const text = `${signed(d.result.dRel)} [${signed(lo, 2, '−∞')}, ${signed(hi, 2, '+∞')}]`;
          // Markdown and HTML draw the same document table: the interval cell, then the p cell.
          const interval = `${text} (${Number((100 * c.confidence).toFixed(2))}%)`;
          expect(md).toContain(`${interval} | ${pValue(c.p).replace('<', '\\<')} |`);
          expect(out.html).toMatch(new RegExp(`${escapeRegExp(escapeHtml(interval))}</td>\\s*<td[^>]*>${escapeRegExp(escapeHtml(pValue(c.p)))}</td>`));
          claims++;
        }
      }
    }
    expect(claims).toBeGreaterThan(0);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
