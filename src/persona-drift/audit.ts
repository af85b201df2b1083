import { spendText } from '../core/money.js';
import { isPresent } from '../core/maybe.js';
import type { Audit, AuditSummaryLine } from '../experiment/audit.js';
import { estimateLines } from '../models/estimate.js';
import { type PersonaSessionInfo, personaDocument } from './document.js';
import type { Session } from '../sessions/types.js';
import type { PersonaObservation, PersonaReport } from './analysis.js';
import { type PersonaConfig, personaConfigSchema } from './config.js';
import { personaCsvRows } from './report-csv.js';
import { analyzePersonaRun, collectPersonaObservations, dryRunPersona, loadPersonaConfig, type PersonaRunCounts, personaRunner, personaUnits } from './run.js';
import { personaCompare, personaOverTime } from './compare.js';
import { personaGate } from './gate.js';
import { PERSONA_STARTER } from './init-template.js';
import { personaDesignCounts, personaDesignPower, personaPowerLine } from './design-power.js';
import { personaLiveProbe, personaViewer } from './viewer.js';
import { describePersonaUnits } from './units.js';
import { personaExtrasSummary } from './extras-render.js';
import { pValue, signed } from '../report/format.js';
import { confidenceNote } from './claim-text.js';

/** What the persona audit reads back from a run. */
export interface PersonaCollected {
  observations: PersonaObservation[];
  /** The sessions recorded in the run manifest (ids, files, compaction counters). */
  sessions: PersonaSessionInfo[];
}

/** Sessions as the analysis counts them (forks merged): 1 when positions are the unit. */
const sessionUnits = (u: { unitOfInference: 'session' | 'position'; units: number }) => (u.unitOfInference === 'session' ? u.units : 1);

/** The persona-drift (ContextEcho) audit on the shared protocol. */
export const personaAudit: Audit<PersonaConfig, Session[], PersonaCollected, PersonaReport, PersonaRunCounts> = {
  ...personaRunner,
  title: 'Persona drift (ContextEcho)',
  description: 'snapshot real agentic sessions at positions, probe the assistant register against matched filler, judge it',
  command: 'persona',
  configSchema: personaConfigSchema,
  loadConfig: loadPersonaConfig,
  dryRun(config, sessions, priceFile) {
    const specs = personaRunner.plan(config, sessions);
    const dry = dryRunPersona(config, specs, priceFile);
    return {
      lines: [
        `plan: ${dry.targetCells} target cells (${dry.estimate.duplicates} duplicates), up to ${dry.judgeCells} judge cells`,
        ...describePersonaUnits(personaUnits(config, sessions)).map((line) => `units: ${line}`),
        personaPowerLine(
          personaDesignPower(
            personaDesignCounts(specs, {
              units: sessionUnits(personaUnits(config, sessions)),
              targets: config.targets.length,
              primaryCategory: config.analysis.primaryCategory,
            }),
            { effect: config.analysis.strongThreshold },
          ),
          config.analysis.strongThreshold,
        ),
        ...estimateLines(dry.estimate),
        "before spending: `echolens persona calibrate <config>` shows the false-positive rate, CI coverage, power and minimum detectable Δ of every test this design's report makes (simulated, no model calls)",
      ],
    };
  },
  describeResult: (run, db) =>
    `${run.resumed ? 'resumed' : 'started'} run ${run.runId} in ${db}: ${run.result.targetCells} target cells, ${run.result.judgeCells} judgements requested, ${run.result.invalidJudgements} invalid ones excluded, spend ${spendText(run.spendUsd, run.unpricedCells)}`,
  collect: async (store, run) => ({
    observations: await collectPersonaObservations(store, run.id),
    sessions: (run.manifest.options as { sessions?: PersonaSessionInfo[] } | undefined)?.sessions ?? [],
  }),
  analyze: (collected, run, options) => analyzePersonaRun(collected.observations, run, options.B ? { B: options.B } : {}),
  gate: personaGate,
  initTemplate: { file: 'persona.yaml', text: PERSONA_STARTER },
  compare: personaCompare,
  overTime: personaOverTime,
  viewer: personaViewer,
  liveProbe: personaLiveProbe,
  render: {
    document: ({ report, collected }) => personaDocument(report, collected),
    csvRows: ({ report }) => personaCsvRows(report),
    json: ({ report }) => report,
    viewerSummary: ({ report }) => [
      ...report.drift.map(
        (d): AuditSummaryLine => ({
          label: `drift gap Δ · ${d.target} · ${d.judge}`,
          value: isPresent(d.gap)
            ? `${signed(d.gap.estimate)} [${signed(d.gap.claim.interval[0])}, ${signed(d.gap.claim.interval[1])}]${confidenceNote(d.gap.claim)}, p ${pValue(d.gap.claim.p)}${d.strongDrift ? ' · strong drift' : ''}`
            : `n/a (${d.gap.error})`,
        }),
      ),
      ...personaExtrasSummary(report),
    ],
  },
};
