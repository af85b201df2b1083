import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { registerBuiltinAudits } from '../audits.js';
import { packageRoot } from '../core/version.js';
import { type ContinuationConfig, continuationConfigSchema } from '../continuation/config.js';
import { continuationReport, runContinuation } from '../continuation/run.js';
import { type MemoryConfig, memoryConfigSchema } from '../memory-drift/config.js';
import { memoryReport } from '../memory-drift/observations.js';
import { runMemory } from '../memory-drift/run.js';
import type { GapEstimate } from '../persona-drift/analysis.js';
import { type PersonaConfig, personaConfigSchema } from '../persona-drift/config.js';
import { personaReport, runPersona } from '../persona-drift/run.js';
import { renderReport } from '../report/report.js';
import { openStore } from '../store/run-store.js';
import type { StageRuntime } from '../experiment/runtime.js';
import { signed as sign } from '../report/format.js';
import { closing } from '../core/closing.js';

/**
 * `echolens demo` (an entry point, like the CLI: it registers the built-in audits): the audits end to end on bundled inputs. The offline
 * default uses SIMULATED models (`sim:`), which measure nothing and exist to
 * show the machinery and its planted effects; `--target` (with `--judge`,
 * `--labeler`) runs the same demo on real models.
 */

export interface DemoOptions {
  outDir: string;
  target?: string;
  judge?: string;
  labeler?: string;
  /** Start from an empty store instead of resuming the previous demo's cells. */
  fresh?: boolean;
  runtime?: StageRuntime;
}

export interface DemoHeadline {
  audit: 'persona' | 'memory' | 'continuation';
  text: string;
}

export interface DemoResult {
  db: string;
  reportPath: string;
  simulated: boolean;
  headlines: DemoHeadline[];
}

export function demoMemoryConfig(options: DemoOptions): MemoryConfig {
  return memoryConfigSchema.parse({
    name: 'echolens-demo-memory',
    targets: [options.target ?? 'sim:memory'],
    labeler: options.labeler ?? 'sim:labeler',
    // A seeded slice of the built-in questions and of the conditions keeps the demo fast while
    // leaving enough questions for the question-level bootstrap of a near-zero noise floor.
    questions: { source: 'builtin', sample: options.target ? 8 : 30 },
    conditions: [
      'filler',
      'whitespace',
      'punctuation',
      'gender',
      'trans_status',
      'age',
      'occupation',
      'disability',
      'serious_illness',
      'bereavement',
      'job_loss',
    ],
    k: 2,
    analysis: { B: 2000 },
  });
}

async function memoryDemo(db: string, options: DemoOptions, runtime: StageRuntime): Promise<DemoHeadline[]> {
  const run = await runMemory(demoMemoryConfig(options), db, runtime);
  return closing(openStore(db, { readonly: true }), async (store) => {
    const report = await memoryReport(store, run.runId);
    return report.targets.map((t): DemoHeadline => {
      const tier = (name: string, metric: 'dtw' | 'sri') => {
        const s = t.metrics[metric].tiers.find((x) => x.tier === name);
        if (!s || 'error' in s.elevation) return 'n/a';
        // With the CI: a small floor makes the ratio volatile (noise −30% with a CI across 0 is no effect).
        const pct = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(0)}%`;
        const [lo, hi] = s.elevation.claim.interval;
        return `${pct(s.elevation.estimate)} (95% CI ${pct(lo)}…${pct(hi)})`;
      };
      return {
        audit: 'memory',
        text: `memory drift: ${t.target}: DTW elevation over the no-memory floor — noise ${tier('noise', 'dtw')}, persona ${tier('persona', 'dtw')}, life events ${tier('life_event', 'dtw')}; validity ${t.validity.overall} (specificity ${t.validity.specificity.verdict}, sensitivity ${t.validity.sensitivity.verdict}, convergent ${t.validity.convergent.verdict})`,
      };
    });
  });
}

export function demoPersonaConfig(options: DemoOptions): PersonaConfig {
  return personaConfigSchema.parse({
    name: 'echolens-demo-persona',
    sessions: [join(packageRoot(), 'data', 'demo', 'claude-session.jsonl')],
    positions: [{ uniform: 6 }],
    arms: ['real', 'filler'],
    mitigations: ['none', 'a-anchor', 'placebo_iso_recipe'],
    probes: { categories: ['coding_self'], paraphrases: 2 },
    stressors: { ids: ['S2'], paraphrases: 5 },
    contracts: ['C2_yaml', 'C6_json'],
    samples: options.target ? 1 : 3,
    targets: [options.target ?? 'sim:persona'],
    judges: [options.judge ?? 'sim:judge'],
    analysis: { B: 2000 },
  });
}

/**
 * The continuation section: the bundled Claude Code transcript cut at 25 tool calls, the
 * bundled Codex transcript (written for this project) as the cross arm.
 */
export function demoContinuationConfig(options: DemoOptions): ContinuationConfig {
  return continuationConfigSchema.parse({
    name: 'echolens-demo-continuation',
    session: join(packageRoot(), 'data', 'demo', 'claude-session.jsonl'),
    crossSession: join(packageRoot(), 'data', 'demo', 'codex-session.jsonl'),
    targets: [options.target ?? 'sim:continuation'],
    cutpoints: { count: options.target ? 10 : 25 },
    windowTokens: 1000,
  });
}

async function continuationDemo(db: string, options: DemoOptions, runtime: StageRuntime): Promise<DemoHeadline[]> {
  const run = await runContinuation(demoContinuationConfig(options), db, runtime);
  return closing(openStore(db, { readonly: true }), async (store) => {
    const report = await continuationReport(store, run.runId);
    return report.analysis.targets.map((t) => {
      const p = t.contrasts.find((c) => c.primary);
      const cc = p?.completeCase;
      const itt = p?.itt;
      const fmt = (e: typeof cc) => (e && e.mean !== null ? `${sign(e.mean)} (n ${e.n}, p ${e.p === null ? 'n/a' : e.p.toFixed(3)})` : 'n/a');
      return {
        audit: 'continuation' as const,
        text: `tool-using continuation: ${t.target}: argument fidelity recent − cross, complete case ${fmt(cc)}, intention to treat ${fmt(itt)}`,
      };
    });
  });
}

export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  // The demo is an entry point (like the CLI): its report reads the registry.
  registerBuiltinAudits();
  const outDir = resolve(options.outDir);
  mkdirSync(outDir, { recursive: true });
  const db = join(outDir, 'demo.db');
  if (options.fresh) for (const suffix of ['', '-wal', '-shm']) rmSync(`${db}${suffix}`, { force: true });
  const runtime: StageRuntime = { progress: false, ...options.runtime };
  const simulated = !options.target;
  const headlines: DemoHeadline[] = [];

  const personaConfig = demoPersonaConfig(options);
  const persona = await runPersona(personaConfig, db, runtime);
  await closing(openStore(db, { readonly: true }), async (store) => {
    const report = await personaReport(store, persona.runId);
    for (const d of report.drift) {
      const gap = d.gap as GapEstimate | { error: string };
      headlines.push({
        audit: 'persona',
        text:
          'error' in gap
            ? `persona drift: ${d.target}: gap not computable (${gap.error})`
            : // The claim's interval and p (Holm-consistent when the demo has several targets): they agree with the verdict.
              `persona drift: ${d.target} judged by ${d.judge}: ${d.verdict.kind} — Δ = ${sign(gap.estimate)} [${Number((gap.claim.confidence * 100).toFixed(2))}% CI ${sign(gap.claim.interval[0])}, ${sign(gap.claim.interval[1])}] over ${gap.units} ${gap.level}s, ${gap.claim.family > 1 ? 'Holm ' : 'sign-flip '}p = ${gap.claim.p.toPrecision(2)}${d.strongDrift ? ', strong drift' : ''}`,
      });
    }
    for (const m of report.mitigations.filter((x) => x.mitigation === 'a-anchor')) {
      const vs = m.vsControl as GapEstimate | { error: string };
      if (!('error' in vs)) {
        headlines.push({
          audit: 'persona',
          text: `persona drift: A-anchor raises the register by ${sign(vs.estimate)} [${sign(vs.ci[0])}, ${sign(vs.ci[1])}] over the unanchored real context`,
        });
      }
    }
  });

  headlines.push(...(await memoryDemo(db, options, runtime)));
  headlines.push(...(await continuationDemo(db, options, runtime)));

  const reportHtml = await closing(openStore(db, { readonly: true }), (store) =>
    renderReport(store, 'html', { title: simulated ? 'echolens demo (simulated models)' : 'echolens demo' }),
  );
  const reportPath = join(outDir, 'report.html');
  writeFileSync(reportPath, reportHtml);
  return { db, reportPath, simulated, headlines };
}
