import type { MemoryReport } from '../memory-drift/analysis.js';
import type { GapEstimate, Maybe, PersonaReport } from '../persona-drift/analysis.js';
import type { ReportVerdict } from '../gate/verdict.js';
import { markdownText } from './markdown-text.js';

/**
 * `echolens compare a.db b.db`: the headline numbers of two stores side by
 * side (the latest persona and memory run of each): drift gaps per target and
 * judge, tier elevations per target, each side's verdict. Pure.
 */

export interface CompareSide {
  label: string;
  personaRun?: string;
  memoryRun?: string;
  persona?: PersonaReport;
  memory?: MemoryReport;
  verdicts: ReportVerdict[];
}

export interface CompareRow {
  table: 'persona drift' | 'memory elevation';
  subject: string;
  a: string;
  b: string;
  /** B − A of the point estimates, when both exist. */
  difference: number | null;
}

const f = (x: number) => (x >= 0 ? `+${x.toFixed(2)}` : x.toFixed(2));
const gapText = (g: Maybe<GapEstimate> | undefined): string => (g === undefined ? '—' : 'error' in g ? `n/a (${g.error})` : `${f(g.estimate)} [${f(g.ci[0])}, ${f(g.ci[1])}]`);

export function compareRows(a: CompareSide, b: CompareSide): CompareRow[] {
  const rows: CompareRow[] = [];
  const drift = (side: CompareSide) => new Map((side.persona?.drift ?? []).map((d) => [`${d.target} (judge ${d.judge})`, d.gap]));
  const da = drift(a);
  const db = drift(b);
  for (const subject of [...new Set([...da.keys(), ...db.keys()])]) {
    const ga = da.get(subject);
    const gb = db.get(subject);
    const both = ga && gb && !('error' in ga) && !('error' in gb) ? gb.estimate - ga.estimate : null;
    rows.push({ table: 'persona drift', subject, a: gapText(ga), b: gapText(gb), difference: both });
  }
  const elevations = (side: CompareSide) => {
    const out = new Map<string, { estimate: number; ci: readonly [number, number] } | { error: string }>();
    for (const t of side.memory?.targets ?? []) {
      for (const tier of t.metrics.dtw.tiers) out.set(`${t.target} · ${tier.tier} DTW elevation`, tier.elevation);
    }
    return out;
  };
  const ea = elevations(a);
  const eb = elevations(b);
  const pct = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(0)}%`;
  const text = (e: { estimate: number; ci: readonly [number, number] } | { error: string } | undefined) =>
    e === undefined ? '—' : 'error' in e ? `n/a (${e.error})` : `${pct(e.estimate)} [${pct(e.ci[0])}, ${pct(e.ci[1])}]`;
  for (const subject of [...new Set([...ea.keys(), ...eb.keys()])]) {
    const x = ea.get(subject);
    const y = eb.get(subject);
    const both = x && y && !('error' in x) && !('error' in y) ? y.estimate - x.estimate : null;
    rows.push({ table: 'memory elevation', subject, a: text(x), b: text(y), difference: both });
  }
  return rows;
}

const cell = markdownText;

function verdictText(side: CompareSide): string {
  if (side.verdicts.length === 0) return 'no runs';
  const fail = side.verdicts.some((v) => v.verdict === 'fail');
  const sim = side.verdicts.some((v) => v.simulated);
  return `${fail ? 'FAIL' : 'PASS'}${sim ? ' (SIMULATED models)' : ''}`;
}

export function renderCompareMarkdown(a: CompareSide, b: CompareSide): string {
  const rows = compareRows(a, b);
  const lines = [
    '# echolens compare',
    '',
    `- A: ${a.label} — persona run ${a.personaRun ?? '—'}, memory run ${a.memoryRun ?? '—'}; verdict ${verdictText(a)}`,
    `- B: ${b.label} — persona run ${b.personaRun ?? '—'}, memory run ${b.memoryRun ?? '—'}; verdict ${verdictText(b)}`,
    '',
  ];
  if (a.verdicts.some((v) => v.simulated) || b.verdicts.some((v) => v.simulated)) {
    lines.push('> **Simulated models** (`sim:`) in at least one side: those numbers measure no real model.', '');
  }
  if (rows.length === 0) {
    lines.push('Neither store holds a persona or memory result to compare.');
  } else {
    lines.push('Each side with its own 95% CI; B − A is the difference of the point estimates (no CI: the runs are analysed separately).', '');
    lines.push('| table | subject | A | B | B − A |', '|---|---|---|---|---|');
    for (const r of rows) {
      const diff = r.difference === null ? '—' : r.table === 'memory elevation' ? `${r.difference >= 0 ? '+' : ''}${(100 * r.difference).toFixed(0)} pp` : f(r.difference);
      lines.push(`| ${r.table} | ${cell(r.subject)} | ${cell(r.a)} | ${cell(r.b)} | ${diff} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}
