import { spendText } from '../core/money.js';
import type { Audit, AuditSummaryLine } from '../experiment/audit.js';
import { estimateLines } from '../models/estimate.js';
import { memoryDocument } from './document.js';
import { MIN_QUESTIONS, type MemoryReport } from './analysis.js';
import { type MemoryConfig, memoryConfigSchema } from './config.js';
import { analyzeMemoryCollection, collectMemorySamples, type MemoryCollection } from './observations.js';
import { memoryCsvRows } from './report-csv.js';
import { dryRunMemory, loadMemoryConfig, type MemoryRunCounts, type MemoryRunInput, memoryRunner } from './run.js';
import { dryRunReplicates, memoryDesignPower, memoryPowerLine } from './calibrate.js';
import { memoryCompare, memoryOverTime } from './compare.js';
import { memoryGate } from './gate.js';
import { MEMORY_STARTER } from './init-template.js';
import { memoryViewer } from './viewer.js';
import { percent } from '../report/format.js';

/** The memory-drift (DriftLens) audit on the shared protocol. */
export const memoryAudit: Audit<MemoryConfig, MemoryRunInput, MemoryCollection, MemoryReport, MemoryRunCounts> = {
  ...memoryRunner,
  title: 'Memory drift (DriftLens)',
  description: 'inject user memories and measure how far the reasoning trajectory moves on persona-independent questions',
  command: 'memory',
  configSchema: memoryConfigSchema,
  loadConfig: loadMemoryConfig,
  dryRun(config, input, priceFile) {
    const dry = dryRunMemory(config, input.stimuli, memoryRunner.plan(config, input), priceFile);
    return {
      lines: [
        `plan: ${dry.questions} questions × ${dry.conditions} conditions × ${config.targets.length} target(s) → ${dry.generationCells} generation cells (${dry.estimate.duplicates} duplicates), about ${dry.labelerCells} labeler cells (+ re-asks)${dry.judgeCells ? `, ${dry.judgeCells} refusal-judge cells` : ''}`,
        memoryPowerLine(
          memoryDesignPower(config, input.stimuli, { replicates: dryRunReplicates(dry.generationCells / config.targets.length), minQuestions: MIN_QUESTIONS }),
          MIN_QUESTIONS,
        ),
        ...estimateLines(dry.estimate),
      ],
    };
  },
  describeResult(run, db) {
    const r = run.result;
    const methods = Object.entries(r.stepMethods)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    return (
      `${run.resumed ? 'resumed' : 'started'} run ${run.runId} in ${db}: ${r.generationCells} generation cells ` +
      `(${r.emptyGenerations} empty, ${r.failedGenerations} failed, ${r.noSteps} without steps; steps by ${methods || 'none'}), ` +
      `${r.labelerItems} responses sent to the labeler (${r.invalidLabelings} invalid after re-asks, ${r.unansweredLabelings} unanswered), spend ${spendText(run.spendUsd, run.unpricedCells)}`
    );
  },
  collect: (store, run) => collectMemorySamples(store, run.id),
  analyze: (collection, _run, options) => analyzeMemoryCollection(collection, options.B ? { B: options.B } : {}),
  gate: memoryGate,
  initTemplate: { file: 'memory.yaml', text: MEMORY_STARTER },
  compare: memoryCompare,
  overTime: memoryOverTime,
  viewer: memoryViewer,
  render: {
    // The analysis, then what happened to every generation cell: the same sections `memory report` prints.
    document: ({ run, report, collected }) => memoryDocument(report, { runId: run.id, collection: collected }),
    csvRows: ({ report }) => memoryCsvRows(report),
    json: ({ report }) => report,
    viewerSummary: ({ report }) => [
      { label: 'scored observations', value: `${report.counts.scored} of ${report.counts.observations}` },
      ...report.targets.flatMap((t) =>
        t.metrics.dtw.tiers.map(
          (tier): AuditSummaryLine => ({
            label: `DTW elevation over the no-memory floor · ${t.target} · ${tier.tier}`,
            value:
              'error' in tier.elevation
                ? `n/a (${tier.elevation.error})`
                : `${percent(tier.elevation.estimate, 0)} [${percent(tier.elevation.ci[0], 0)}, ${percent(tier.elevation.ci[1], 0)}]`,
          }),
        ),
      ),
      ...report.targets.map(
        (t): AuditSummaryLine => ({
          label: `instrument validity · ${t.target}`,
          value: `${t.validity.overall} (specificity ${t.validity.specificity.verdict}, sensitivity ${t.validity.sensitivity.verdict}, convergent ${t.validity.convergent.verdict})`,
        }),
      ),
    ],
  },
};
