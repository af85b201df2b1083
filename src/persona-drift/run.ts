import { configPath } from '../core/config-path.js';
import { dirname, resolve } from 'node:path';
import { configFromOverrides, loadConfigFile } from '../core/config-file.js';
import { ConfigError } from '../core/errors.js';
import type { AuditRunSummary, StagedAuditRunner } from '../experiment/audit.js';
import { auditRunId } from '../experiment/analyze-run.js';
import type { ParsedItem, StageRuntime } from '../experiment/runtime.js';
import type { PreflightProblem } from '../experiment/preflight.js';
import { estimateCells, type PlanEstimate } from '../models/estimate.js';
import { loadPriceTable } from '../models/prices.js';
import type { ReadSessionOptions } from '../sessions/read.js';
import type { Session } from '../sessions/types.js';
import type { RunInfo, RunStore } from '../store/run-store.js';
import type { CellSpec } from '../store/types.js';
import { type AnalysisOptions, analyzePersona, type PersonaObservation, type PersonaReport } from './analysis.js';
import { runStressorChecker } from './checkers.js';
import { framingLevels, type PersonaConfig, personaConfigSchema, personaProcedure } from './config.js';
import { type HarnessName, harnessOfTool } from './harness.js';
import { checkContract } from './contracts.js';
import { judgeItem, judgeParser, separateJudgeDraws } from './judge.js';
import { decodePersonaTargetLabels, isPersonaTargetCell, resolveJudgeVerdicts } from './labels.js';
import { isBuiltinMaterials } from '../materials/files.js';
import { checkSameMaterials, loadPersonaMaterials, type PersonaMaterials } from './materials.js';
import { planJudgeCell, planTargetCells } from './plan.js';
import { sessionContextFacts, sessionPlanInput } from './sessions-input.js';
import { assignPersonaUnits, checkUnitsResume, type PersonaUnits, personaUnitOf } from './units.js';
import { linkSessionFamilies } from '../sessions/units.js';
import { getOrInsert } from '../core/get-or-insert.js';
import { definedFields } from '../core/copy-defined.js';

export const PERSONA_EXPERIMENT = 'persona';

function resolveSessionPaths(config: PersonaConfig, base: string): PersonaConfig {
  const place = (path: string) => configPath(path, base);
  return {
    ...config,
    sessions: config.sessions.map(place),
    ...(config.materials !== undefined && !isBuiltinMaterials(config.materials) ? { materials: place(config.materials) } : {}),
  };
}

/** Loads a config; session paths may use `~/` and are relative to the config file's folder. */
export function loadPersonaConfig(file: string, overrides: readonly string[] = []): PersonaConfig {
  return resolveSessionPaths(loadConfigFile(file, personaConfigSchema, overrides).config, dirname(resolve(file)));
}

/** A config from command-line overrides alone (every other key at its default); paths relative to the cwd. */
export function personaConfigFromFlags(overrides: readonly string[]): PersonaConfig {
  return resolveSessionPaths(configFromOverrides(personaConfigSchema, overrides), process.cwd());
}

/**
 * Reading options the procedure asks of the session readers. `includeSidechains` keeps Claude
 * Code subagent lines on the main timeline (`sidechains: 'inline'`). The compaction summary
 * already counts as one agent step in every mode (the reference's counter), so
 * `compactionSummaryAsStep` needs no reader option; it is recorded with the procedure.
 */
export function procedureReadOptions(config: PersonaConfig): ReadSessionOptions | undefined {
  const procedure = personaProcedure(config);
  return procedure.includeSidechains ? { sidechains: 'inline' } : undefined;
}

export async function readConfigSessions(config: PersonaConfig): Promise<Session[]> {
  // The transcript readers, the preflight and the run lifecycle load when a run needs them: a report
  // of a run reads none of them (issue #44).
  const { readSession } = await import('../sessions/read.js');
  const sessions: Session[] = [];
  const readOptions = procedureReadOptions(config);
  for (const [index, file] of config.sessions.entries()) {
    try {
      sessions.push(await (readOptions ? readSession(file, readOptions) : readSession(file)));
    } catch (error) {
      throw new ConfigError(`cannot read session: ${(error as Error).message}`, { field: `sessions.${index}` });
    }
  }
  return sessions;
}

export function planPersona(
  config: PersonaConfig,
  sessions: readonly Session[],
  materials: PersonaMaterials = loadPersonaMaterials(config.materials),
): CellSpec[] {
  const texts = definedFields(materials, ['acknowledgement', 'fillerFlatTemplate']);
  const inputs = sessions.map((session, index) => sessionPlanInput(session, config, sessions, `S${index + 1}`, texts));
  const planned = planTargetCells(config, materials.stimuli, inputs, {
    systemPrompts: materials.systemPrompts,
    stressorSystemPrompt: personaProcedure(config).stressorSystemPrompt,
  });
  // Units share no draws: forks merged, shared requests drawn per unit (units.ts).
  const { specs, units } = assignPersonaUnits(
    planned,
    sessions.map((session, index) => ({ label: `S${index + 1}`, session })),
  );
  plannedUnits.set(sessions, units);
  return specs;
}

/**
 * Forks among a config's sessions, for `persona calibrate`: sessions that join another's unit
 * (members beyond the first of each family). Null when the transcripts cannot be read.
 */
export async function configForkCount(config: PersonaConfig): Promise<number | null> {
  let sessions: Session[];
  try {
    sessions = await readConfigSessions(config);
  } catch {
    return null;
  }
  return linkSessionFamilies(sessions.map((session, index) => ({ label: `S${index + 1}`, session })))
    .families()
    .reduce((n, family) => n + family.members.length - 1, 0);
}

/** The units of the last plan of each sessions list (the manifest records them). */
const plannedUnits = new WeakMap<readonly Session[], PersonaUnits>();

/** How the plan of these sessions assigns units of inference (plans them when not planned yet). */
export function personaUnits(config: PersonaConfig, sessions: readonly Session[]): PersonaUnits {
  const known = plannedUnits.get(sessions);
  if (known) return known;
  planPersona(config, sessions);
  return plannedUnits.get(sessions) as PersonaUnits;
}

/** The probed positions of each session for the manifest: every selector that chose them, and what each distance replays. */
export function manifestPositions(config: PersonaConfig, sessions: readonly Session[]) {
  return sessions.map((session, index) => {
    const input = sessionPlanInput(session, config, sessions, `S${index + 1}`);
    return input.positions.map((position) => ({
      label: position.label,
      value: position.value,
      selectedBy: position.selectedBy ?? [position.label],
      continuations: config.distances
        .filter((d) => d.messages > 0)
        .map((d) => ({ distance: d.name, ...(input.continuationInfo?.(position, d.messages) ?? {}) })),
    }));
  });
}

/** Counts cells and estimates tokens and dollars; calls nothing. Judge calls are estimated per probe cell. */
export function dryRunPersona(config: PersonaConfig, specs: readonly CellSpec[], priceFile?: string) {
  const materials = loadPersonaMaterials(config.materials);
  const judgeTexts = { judgeRubric: materials.judgeRubric, procedure: personaProcedure(config) };
  const probeCells = specs.filter((s) => s.labels.surface === 'probe');
  const judgeSpecs: CellSpec[] = [];
  for (const judge of config.judges) {
    for (const spec of probeCells) {
      const response = `${judgeSpecs.length} ${'x'.repeat(Math.min(2400, 4 * (spec.request.params.maxTokens ?? 600)))}`;
      judgeSpecs.push(planJudgeCell(config, judge, 'estimate', spec.labels, response, 0, undefined, judgeTexts));
    }
  }
  const prices = loadPriceTable(priceFile ? { file: priceFile } : {});
  return {
    targetCells: specs.length,
    judgeCells: judgeSpecs.length,
    estimate: estimateCells([...specs, ...judgeSpecs], prices),
  };
}

export interface PersonaPreflight {
  sessions: Session[];
  specs: CellSpec[];
  /** Every model the run calls (targets, judges, labelers), as the config names them. */
  models: string[];
  /** The grid's estimate, computed when a budget is set. */
  estimate?: PlanEstimate;
  /** Missing API keys a dry run let through. */
  keyWarnings?: PreflightProblem[];
}

/**
 * Preflight of a persona run: every target and judge reference resolves, every
 * needed API key is set, every session file exists and reads, and the grid's
 * expected cost fits the budget. Throws PreflightError listing every problem;
 * nothing is called or recorded. `runPersona` and `--dry-run` both run it.
 */
export async function preflightPersona(config: PersonaConfig, runtime: StageRuntime = {}, sessions?: readonly Session[]): Promise<PersonaPreflight> {
  const models = [...config.targets.map((ref, i) => ({ ref, field: `targets.${i}` })), ...config.judges.map((ref, i) => ({ ref, field: `judges.${i}` }))];
  const files = sessions ? [] : config.sessions.map((path, i) => ({ path, field: `sessions.${i}` }));
  const { runPreflight } = await import('../experiment/preflight.js');
  const checked = await runPreflight({
    models,
    files,
    runtime,
    ...(sessions ? { given: [...sessions] } : {}),
    read: () => readConfigSessions(config),
    fallbackField: 'sessions',
    plan: (read) => planPersona(config, read),
    maxCostUsd: runtime.maxCostUsd ?? config.limits.maxCostUsd,
    estimate: (_read, specs) => dryRunPersona(config, specs, runtime.priceFile).estimate,
  });
  const { input, ...rest } = checked;
  return { sessions: input, ...rest };
}

/** What a persona run did, besides the shared run fields. */
export interface PersonaRunCounts {
  targetCells: number;
  judgeCells: number;
  invalidJudgements: number;
}

export interface PersonaRunResult extends PersonaRunCounts, AuditRunSummary {}

/** The persona audit's run stages (the lifecycle around them is runAudit's). */
export const personaRunner: StagedAuditRunner<PersonaConfig, Session[], PersonaRunCounts> = {
  name: PERSONA_EXPERIMENT,
  limits: (config) => config.limits,
  prepare: readConfigSessions,
  async preflight(config, runtime) {
    const { sessions: input, ...rest } = await preflightPersona(config, runtime);
    return { input, ...rest };
  },
  plan: (config, sessions) => planPersona(config, sessions),
  manifestOptions: (config, sessions) => {
    const positions = manifestPositions(config, sessions);
    return {
      decisions: 'docs/decisions.md#d13–#d20: counters, compaction pre/post, flat prefix default, structure-matched filler, gap CI on Δ, bare-probe judge',
      materials: loadPersonaMaterials(config.materials).record,
      procedure: personaProcedure(config),
      units: personaUnits(config, sessions),
      sessions: sessions.map((session, index) => ({
        id: `S${index + 1}`,
        file: session.file,
        tool: session.tool,
        models: session.models,
        counters: session.counters,
        compactions: session.compactions.map((c) => c.counters[config.counter]),
        ...sessionContextFacts(session, config),
        positions: positions[index],
      })),
    };
  },
  checkResume(run, config, sessions, db) {
    const options = run.manifest.options as { materials?: PersonaMaterials['record']; units?: PersonaUnits } | undefined;
    checkSameMaterials(options?.materials, loadPersonaMaterials(config.materials).record, run.id);
    checkUnitsResume(options?.units, personaUnits(config, sessions), run.id, db);
  },
  // Target cells, then one judge cell per answered probe and judge (planned: every probe answered).
  stages: (config, _input, specs) => [
    { name: 'targets', expected: specs.length },
    { name: 'judges', expected: specs.filter((s) => s.labels.surface === 'probe').length * config.judges.length },
  ],
  async execute({ config, specs, stage, parsedStage }) {
    const materials = loadPersonaMaterials(config.materials);
    const procedure = personaProcedure(config);
    const judgeTexts = { judgeRubric: materials.judgeRubric, procedure };
    const parseJudge = judgeParser(procedure.judgeParse);
    const targets = await stage(specs, 'targets');
    if (targets.stopReason !== null) return { targetCells: specs.length, judgeCells: 0, invalidJudgements: 0 };
    const items: ParsedItem<number>[] = [];
    const itemUnits: string[] = [];
    const unitOf = personaUnitOf(specs);
    specs.forEach((spec, index) => {
      const result = targets.results[index];
      if (spec.labels.surface !== 'probe' || result?.status !== 'done' || result.text === null) return;
      for (const judge of config.judges) {
        itemUnits.push(unitOf(spec.labels));
        items.push(judgeItem(planJudgeCell(config, judge, result.key, spec.labels, result.text, 0, undefined, judgeTexts), parseJudge));
      }
    });
    separateJudgeDraws(items, itemUnits);
    const judged = await parsedStage(items, config.judgeRetries, 'judges');
    return { targetCells: specs.length, judgeCells: items.length, invalidJudgements: judged.outcomes.filter((o) => o?.status === 'invalid').length };
  },
};

export async function runPersona(config: PersonaConfig, db: string, runtime: StageRuntime = {}, sessions?: readonly Session[]): Promise<PersonaRunResult> {
  const { sessions: read, specs, estimate } = await preflightPersona(config, runtime, sessions);
  const { runCheckedAudit } = await import('../experiment/run-audit.js');
  return runCheckedAudit(personaRunner, config, db, runtime, { input: read, specs, estimate, configMaxCostUsd: config.limits.maxCostUsd });
}

/** A persona run's materials, its cells and the judge verdicts resolved from them. */
export async function personaCellsAndVerdicts(store: RunStore, runId: string) {
  const { materials, parseJudgeOutput } = await personaRunTexts(store, runId);
  const cells = await store.cellResultsOfRun(runId);
  const verdicts = resolveJudgeVerdicts(cells, {
    parse: parseJudgeOutput,
    labels: (cell) => cell.labels,
    key: (cell) => cell.key,
    text: (cell) => (cell.result.status === 'done' ? cell.result.text : null),
  });
  return { materials, cells, verdicts };
}

/** Reads a persona run back from the store as analysis observations. */
export async function collectPersonaObservations(store: RunStore, runId: string): Promise<PersonaObservation[]> {
  const { materials, cells, verdicts } = await personaCellsAndVerdicts(store, runId);
  const stimuli = materials.stimuli;
  const stressors = new Map<string, (typeof stimuli.stressors)[number]>(stimuli.stressors.map((s) => [s.id, s]));
  const contracts = new Map(stimuli.contracts.map((c) => [c.id, c]));
  const observations: PersonaObservation[] = [];
  for (const cell of cells) {
    if (!isPersonaTargetCell(cell.labels)) continue;
    const l = decodePersonaTargetLabels(cell.labels, cell.key);
    const status = cell.result.status === 'pending' ? 'failed' : cell.result.status;
    const text = cell.result.text ?? '';
    let check: PersonaObservation['check'];
    if (status === 'done' && l.surface === 'stressor') {
      const stressor = stressors.get(l.item);
      if (stressor) check = runStressorChecker(stressor.checker, text, stressor.expected);
    } else if (status === 'done' && l.surface === 'contract') {
      const contract = contracts.get(l.item);
      if (contract) {
        const { pass, reason } = checkContract(contract, text);
        check = { pass, reason };
      }
    }
    const scores: Record<string, number | null> = {};
    for (const [judge, v] of verdicts.get(cell.key) ?? []) scores[judge] = v.verdict?.score ?? null;
    observations.push({
      target: l.target,
      session: l.session,
      position: l.position,
      positionValue: l.positionValue,
      ...(l.compactionIndex !== null && l.compactionIndex !== undefined && l.compactionSide
        ? { compaction: { index: l.compactionIndex, side: l.compactionSide } }
        : {}),
      arm: l.arm,
      mitigation: l.mitigation,
      distance: l.distance,
      ...(typeof l.systemPrompt === 'string' ? { systemPrompt: l.systemPrompt } : {}),
      ...(typeof l.continuationMessages === 'number'
        ? { continuation: { messages: l.continuationMessages, clipped: typeof l.continuationClipped === 'string' ? l.continuationClipped : null } }
        : {}),
      surface: l.surface,
      ...(typeof l.framed === 'boolean' ? { framed: l.framed } : {}),
      ...(l.anchorArm !== undefined && l.anchorPlacement !== undefined && l.anchorTurns !== undefined && l.anchorTokens !== undefined
        ? { anchor: { arm: l.anchorArm, size: l.anchorSize ?? null, tokens: l.anchorTokens, placement: l.anchorPlacement, turns: l.anchorTurns } }
        : {}),
      item: l.item,
      category: l.category,
      paraphrase: l.paraphrase,
      sample: l.sample,
      status,
      text,
      scores,
      ...(check ? { check } : {}),
    });
  }
  return observations;
}

const recordedConfigs = new WeakMap<object, ReturnType<typeof personaConfigSchema.safeParse>>();

/**
 * The run's recorded config, validated once per manifest: a report reads it for the materials and
 * again for the analysis settings (the schema's parse is a tenth of a second). Callers must not
 * change the parsed config.
 */
function recordedPersonaConfig(run: RunInfo): ReturnType<typeof personaConfigSchema.safeParse> {
  return getOrInsert(recordedConfigs, run.manifest as object, () => personaConfigSchema.safeParse(run.manifest.config));
}

/** The latest persona run in a store, or the one named. */
export async function personaRunId(store: RunStore, runId?: string): Promise<string> {
  return auditRunId(store, PERSONA_EXPERIMENT, runId);
}

/**
 * The materials and judge parser a recorded run used (read again from the same clone,
 * which must not have changed since the run).
 */
export async function personaRunTexts(
  store: RunStore,
  runId: string,
): Promise<{ materials: PersonaMaterials; parseJudgeOutput: ReturnType<typeof judgeParser> }> {
  const run = await store.requireRun(runId);
  const config = recordedPersonaConfig(run);
  if (!config.success) return { materials: loadPersonaMaterials(undefined), parseJudgeOutput: judgeParser('strict') };
  const materials = loadPersonaMaterials(config.data.materials);
  const recorded = (run.manifest.options as { materials?: PersonaMaterials['record'] } | undefined)?.materials;
  checkSameMaterials(recorded, materials.record, runId);
  return { materials, parseJudgeOutput: judgeParser(personaProcedure(config.data).judgeParse) };
}

/** Analyses persona observations with the analysis settings recorded in the run's config. */
export function analyzePersonaRun(observations: readonly PersonaObservation[], run: RunInfo, options: AnalysisOptions = {}): PersonaReport {
  const config = recordedPersonaConfig(run);
  const patterns = config.success ? loadPersonaMaterials(config.data.materials).fingerprintPatterns : undefined;
  const analysis = config.success
    ? {
        ...(patterns ? { fingerprintPatterns: patterns } : {}),
        ...config.data.analysis,
        seed: config.data.seed,
        systemPrompts: config.data.systemPrompts,
        distances: config.data.distances.map((d) => d.name),
        procedure: personaProcedure(config.data).name,
        referenceMinusOne: config.data.reference?.minusOne ?? 'keep',
        framing: framingLevels(config.data),
      }
    : {};
  const harnesses = manifestHarnesses(run);
  const report = analyzePersona(observations, { ...analysis, ...(harnesses ? { harnesses } : {}), ...options });
  const units = (run.manifest.options as { units?: PersonaUnits } | undefined)?.units;
  if (units !== undefined) report.units = units;
  return report;
}

/** The harness of each session (Claude Code or Codex) from the tool the run manifest recorded. */
function manifestHarnesses(run: RunInfo): Record<string, HarnessName> | undefined {
  const sessions = (run.manifest.options as { sessions?: Array<{ id?: unknown; tool?: unknown }> } | undefined)?.sessions;
  if (!Array.isArray(sessions)) return undefined;
  const out: Record<string, HarnessName> = {};
  for (const s of sessions) {
    const harness = typeof s.tool === 'string' ? harnessOfTool(s.tool) : null;
    if (typeof s.id === 'string' && harness) out[s.id] = harness;
  }
  return out;
}

export async function personaReport(store: RunStore, runId: string, options: AnalysisOptions = {}): Promise<PersonaReport> {
  return analyzePersonaRun(await collectPersonaObservations(store, runId), await store.requireRun(runId), options);
}
