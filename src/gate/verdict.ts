import type { MemoryReport } from '../memory-drift/analysis.js';
import type { PersonaReport } from '../persona-drift/analysis.js';
import type { RunInfo } from '../store/run-store.js';
import { resolveGate } from './config.js';
import { evaluateGate, type GateCheck, type Verdict } from './evaluate.js';
import { gateOfRun, isSimulatedRun } from './run-info.js';

/**
 * The verdict every JSON and Markdown report carries: the gate (the run's own
 * `gate:` section over the defaults) applied to the report already computed.
 */
export interface ReportVerdict {
  verdict: Verdict;
  /** True when the run used a `sim:` model: the verdict measures nothing real. */
  simulated: boolean;
  failed: GateCheck[];
  skipped: GateCheck[];
  checks: number;
}

export function reportVerdict(
  run: RunInfo,
  reports: { persona?: PersonaReport; memory?: MemoryReport },
  cells: { total: number; unfinished: number },
): ReportVerdict {
  const simulated = isSimulatedRun(run);
  const result = evaluateGate([{ runId: run.id, experiment: run.experiment, simulated, ...reports, cells }], resolveGate(gateOfRun(run)));
  return {
    verdict: result.verdict,
    simulated,
    failed: result.checks.filter((c) => c.status === 'fail'),
    skipped: result.checks.filter((c) => c.status === 'skipped'),
    checks: result.checks.length,
  };
}

/** Markdown lines: the verdict with its failed checks, the simulated banner, and the manifest in one line. */
export function verdictMarkdown(run: RunInfo, verdict: ReportVerdict): string {
  const lines = [
    `**Verdict: ${verdict.verdict.toUpperCase()}** (${verdict.failed.length} of ${verdict.checks} gate checks failed; \`echolens gate\` for thresholds)`,
    ...verdict.failed.map((c) => `- ❌ ${c.subject} ${c.name}: ${c.message}`),
    '',
  ];
  if (verdict.simulated) {
    lines.push('> **Simulated models** (`sim:`): deterministic simulations with planted effects; these numbers measure no real model.', '');
  }
  const m = run.manifest;
  lines.push(
    `Manifest: run \`${run.id}\`, echolens ${m.versions.echolens ?? '?'}, Node ${m.versions.node ?? '?'}, git ${m.gitCommit ?? 'unknown'}, seed ${m.seed}, simulated: ${verdict.simulated}.`,
    '',
  );
  return `${lines.join('\n')}\n`;
}
