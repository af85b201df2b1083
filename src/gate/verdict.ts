import type { RunInfo } from '../store/run-store.js';
import { evaluateGate, type GateCheck, overallVerdict, type Verdict } from './evaluate.js';

export { overallVerdict };
import { resolveRegisteredGate } from './registered.js';
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
  /** Why the verdict is "not computable" (the answers fail the sanity check, gate/sanity.ts); absent otherwise. */
  notComputable?: string;
}

/**
 * `reports` holds the run's analysis under its audit's name (`{ persona: … }`,
 * `{ continuation: … }`); the registered audit of that name makes the checks.
 */
export function reportVerdict(
  run: RunInfo,
  reports: Readonly<Record<string, unknown>>,
  cells: { total: number; unfinished: number },
  notComputable: string | null = null,
): ReportVerdict {
  const simulated = isSimulatedRun(run);
  const report = reports[run.experiment];
  const input = {
    runId: run.id,
    experiment: run.experiment,
    simulated,
    ...(report === undefined ? {} : { report }),
    cells,
    ...(notComputable === null ? {} : { notComputable }),
  };
  const result = evaluateGate([input], resolveRegisteredGate(gateOfRun(run)));
  return {
    verdict: result.verdict,
    simulated,
    failed: result.checks.filter((c) => c.status === 'fail'),
    skipped: result.checks.filter((c) => c.status === 'skipped'),
    checks: result.checks.length,
    ...(notComputable === null ? {} : { notComputable }),
  };
}

/** Markdown lines: the verdict with its failed checks, the simulated banner, and the manifest in one line. */
export function verdictMarkdown(run: RunInfo, verdict: ReportVerdict): string {
  const lines = [
    verdict.notComputable !== undefined
      ? `**Verdict: NOT COMPUTABLE** — ${verdict.notComputable}. Check the endpoint (and any cache in front of it) and run again; no statistic of this run means anything.`
      : `**Verdict: ${verdict.verdict.toUpperCase()}** (${verdict.failed.length} of ${verdict.checks} gate checks failed; \`echolens gate\` for thresholds)`,
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
