import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { configFromOverrides, loadConfigFile } from '../core/config-file.js';
import { ConfigError } from '../core/errors.js';
import type { AuditRunner } from '../experiment/audit.js';
import { auditRunId, runAudit } from '../experiment/run-audit.js';
import type { ParsedItem, StageRuntime } from '../experiment/runtime.js';
import { estimateCells, type PlanEstimate } from '../models/estimate.js';
import { loadPriceTable } from '../models/prices.js';
import { readSession } from '../sessions/read.js';
import type { Session } from '../sessions/types.js';
import type { RunInfo, RunStore } from '../store/run-store.js';
import type { CellSpec } from '../store/types.js';
import { type AnalysisOptions, analyzePersona, type PersonaObservation, type PersonaReport } from './analysis.js';
import { runStressorChecker } from './checkers.js';
import { type PersonaConfig, personaConfigSchema } from './config.js';
import { checkContract } from './contracts.js';
import { buildJudgeReask, parseJudgeOutput } from './judge.js';
import { decodePersonaTargetLabels, isPersonaTargetCell, resolveJudgeVerdicts } from './labels.js';
import { planJudgeCell, planTargetCells } from './plan.js';
import { sessionPlanInput } from './sessions-input.js';
import { loadPersonaStimuli } from './stimuli.js';

export const PERSONA_EXPERIMENT = 'persona';

function resolveSessionPaths(config: PersonaConfig, base: string): PersonaConfig {
  return {
    ...config,
    sessions: config.sessions.map((path) => {
      if (path === '~' || path.startsWith('~/')) return join(homedir(), path.slice(1));
      return isAbsolute(path) ? path : resolve(base, path);
    }),
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

export async function readConfigSessions(config: PersonaConfig): Promise<Session[]> {
  const sessions: Session[] = [];
  for (const [index, file] of config.sessions.entries()) {
    try {
      sessions.push(await readSession(file));
    } catch (error) {
      throw new ConfigError(`cannot read session: ${(error as Error).message}`, { field: `sessions.${index}` });
    }
  }
  return sessions;
}

export function planPersona(config: PersonaConfig, sessions: readonly Session[]): CellSpec[] {
  const stimuli = loadPersonaStimuli();
  const inputs = sessions.map((session, index) => sessionPlanInput(session, config, sessions, `S${index + 1}`));
  return planTargetCells(config, stimuli, inputs);
}

export interface PersonaDryRun {
  targetCells: number;
  judgeCells: number;
  estimate: PlanEstimate;
}

/** Counts cells and estimates tokens and dollars; calls nothing. Judge calls are estimated per probe cell. */
export function dryRunPersona(config: PersonaConfig, specs: readonly CellSpec[], priceFile?: string): PersonaDryRun {
  const probeCells = specs.filter((s) => s.labels.surface === 'probe');
  const judgeSpecs: CellSpec[] = [];
  for (const judge of config.judges) {
    for (const spec of probeCells) {
      const response = `${judgeSpecs.length} ${'x'.repeat(Math.min(2400, 4 * (spec.request.params.maxTokens ?? 600)))}`;
      judgeSpecs.push(planJudgeCell(config, judge, 'estimate', spec.labels, response));
    }
  }
  const prices = loadPriceTable(priceFile ? { file: priceFile } : {});
  return {
    targetCells: specs.length,
    judgeCells: judgeSpecs.length,
    estimate: estimateCells([...specs, ...judgeSpecs], prices),
  };
}

/** What a persona run did, besides the shared run fields. */
export interface PersonaRunCounts {
  targetCells: number;
  judgeCells: number;
  invalidJudgements: number;
}

export interface PersonaRunResult extends PersonaRunCounts {
  runId: string;
  resumed: boolean;
  interrupted: boolean;
  spendUsd: number;
}

/** The persona audit's run stages (the lifecycle around them is runAudit's). */
export const personaRunner: AuditRunner<PersonaConfig, Session[], PersonaRunCounts> = {
  name: PERSONA_EXPERIMENT,
  limits: (config) => config.limits,
  prepare: readConfigSessions,
  plan: planPersona,
  manifestOptions: (config, sessions) => ({
    decisions: 'docs/decisions.md#d13–#d20: counters, compaction pre/post, flat prefix default, structure-matched filler, gap CI on Δ, bare-probe judge',
    sessions: sessions.map((session, index) => ({
      id: `S${index + 1}`,
      file: session.file,
      tool: session.tool,
      models: session.models,
      counters: session.counters,
      compactions: session.compactions.map((c) => c.counters[config.counter]),
    })),
  }),
  async execute({ config, specs, stage, parsedStage }) {
    const targets = await stage(specs, 'targets');
    if (targets.stopReason !== null) return { targetCells: specs.length, judgeCells: 0, invalidJudgements: 0 };
    const items: ParsedItem<number>[] = [];
    specs.forEach((spec, index) => {
      const result = targets.results[index];
      if (spec.labels.surface !== 'probe' || result?.status !== 'done' || result.text === null) return;
      for (const judge of config.judges) {
        items.push({
          spec: planJudgeCell(config, judge, result.key, spec.labels, result.text),
          parse: (text) => {
            const verdict = parseJudgeOutput(text);
            return verdict.ok ? { ok: true, value: verdict.score } : { ok: false, error: verdict.error };
          },
          reask: buildJudgeReask,
        });
      }
    });
    const judged = await parsedStage(items, config.judgeRetries, 'judges');
    return { targetCells: specs.length, judgeCells: items.length, invalidJudgements: judged.outcomes.filter((o) => o?.status === 'invalid').length };
  },
};

export async function runPersona(
  config: PersonaConfig,
  db: string,
  runtime: StageRuntime = {},
  sessions?: readonly Session[],
): Promise<PersonaRunResult> {
  const run = await runAudit(personaRunner, config, db, { runtime, ...(sessions ? { input: [...sessions] } : {}) });
  return { runId: run.runId, resumed: run.resumed, ...run.result, interrupted: run.interrupted, spendUsd: run.spendUsd };
}

/** Reads a persona run back from the store as analysis observations. */
export function collectPersonaObservations(store: RunStore, runId: string): PersonaObservation[] {
  const stimuli = loadPersonaStimuli();
  const cells = store.cellsOfRun(runId);
  const verdicts = resolveJudgeVerdicts(cells, {
    labels: (cell) => cell.labels,
    key: (cell) => cell.key,
    text: (cell) => (cell.result.status === 'done' ? cell.result.text : null),
  });
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
        const r = checkContract(contract, text);
        check = { pass: r.pass, reason: r.reason };
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
      surface: l.surface,
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

/** The latest persona run in a store, or the one named. */
export function personaRunId(store: RunStore, runId?: string): string {
  return auditRunId(store, PERSONA_EXPERIMENT, runId);
}

/** Analyses persona observations with the analysis settings recorded in the run's config. */
export function analyzePersonaRun(observations: readonly PersonaObservation[], run: RunInfo, options: AnalysisOptions = {}): PersonaReport {
  const config = personaConfigSchema.safeParse(run.manifest.config);
  const analysis = config.success
    ? {
        B: config.data.analysis.B,
        seed: config.data.seed,
        primaryCategory: config.data.analysis.primaryCategory,
        strongThreshold: config.data.analysis.strongThreshold,
        tostMargin: config.data.analysis.tostMargin,
      }
    : {};
  return analyzePersona(observations, { ...analysis, ...options });
}

export function personaReport(store: RunStore, runId: string, options: AnalysisOptions = {}): PersonaReport {
  return analyzePersonaRun(collectPersonaObservations(store, runId), store.requireRun(runId), options);
}
