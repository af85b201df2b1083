import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { configFromOverrides, loadConfigFile } from '../core/config-file.js';
import { ConfigError } from '../core/errors.js';
import {
  installStopSignals,
  openExperimentRun,
  type ParsedItem,
  runParsedStage,
  runStage,
  type StageRuntime,
} from '../experiment/runtime.js';
import { estimateCells, type PlanEstimate } from '../models/estimate.js';
import { loadPriceTable } from '../models/prices.js';
import { readSession } from '../sessions/read.js';
import type { Session } from '../sessions/types.js';
import type { RunStore } from '../store/run-store.js';
import type { CellSpec } from '../store/types.js';
import { type AnalysisOptions, analyzePersona, type PersonaObservation, type PersonaReport } from './analysis.js';
import { runStressorChecker } from './checkers.js';
import { type PersonaConfig, personaConfigSchema } from './config.js';
import { checkContract } from './contracts.js';
import { buildJudgeReask, parseJudgeOutput } from './judge.js';
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

export interface PersonaRunResult {
  runId: string;
  resumed: boolean;
  targetCells: number;
  judgeCells: number;
  invalidJudgements: number;
  interrupted: boolean;
  spendUsd: number;
}

export async function runPersona(
  config: PersonaConfig,
  db: string,
  runtime: StageRuntime = {},
  sessions?: readonly Session[],
): Promise<PersonaRunResult> {
  const read = sessions ?? (await readConfigSessions(config));
  const specs = planPersona(config, read);
  const { store, runId, resumed } = openExperimentRun(db, PERSONA_EXPERIMENT, config, config.seed, {
    decisions: 'DECISIONS 13-20: counters, compaction pre/post, flat prefix default, structure-matched filler, gap CI on Δ, bare-probe judge',
    sessions: read.map((session, index) => ({
      id: `S${index + 1}`,
      file: session.file,
      tool: session.tool,
      models: session.models,
      counters: session.counters,
      compactions: session.compactions.map((c) => c.counters[config.counter]),
    })),
  });
  const signals = runtime.signal ? undefined : installStopSignals();
  const stageRuntime: StageRuntime = {
    ...runtime,
    ...(signals ? { signal: signals.signal, hardSignal: signals.hardSignal } : {}),
    concurrency: runtime.concurrency ?? config.limits.concurrency,
    requestsPerMinute: runtime.requestsPerMinute ?? config.limits.requestsPerMinute,
    tokensPerMinute: runtime.tokensPerMinute ?? config.limits.tokensPerMinute,
    maxCostUsd: runtime.maxCostUsd ?? config.limits.maxCostUsd,
    timeoutMs: runtime.timeoutMs ?? config.limits.timeoutMs,
  };
  try {
    const targets = await runStage(store, runId, specs, { ...stageRuntime, label: 'targets' });
    let spend = targets.spendUsd;
    if (targets.stopReason !== null) {
      return { runId, resumed, targetCells: specs.length, judgeCells: 0, invalidJudgements: 0, interrupted: true, spendUsd: spend };
    }
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
    const judged = await runParsedStage(store, runId, items, config.judgeRetries, { ...stageRuntime, label: 'judges' });
    spend += judged.stages.reduce((sum, s) => sum + s.spendUsd, 0);
    const interrupted = judged.stages.some((s) => s.stopReason !== null);
    return {
      runId,
      resumed,
      targetCells: specs.length,
      judgeCells: items.length,
      invalidJudgements: judged.outcomes.filter((o) => o?.status === 'invalid').length,
      interrupted,
      spendUsd: spend,
    };
  } finally {
    signals?.dispose();
    store.close();
  }
}

/** Reads a persona run back from the store as analysis observations. */
export function collectPersonaObservations(store: RunStore, runId: string): PersonaObservation[] {
  const stimuli = loadPersonaStimuli();
  const cells = store.cellsOfRun(runId);
  const verdicts = new Map<string, Map<string, { attempt: number; score: number | null }>>();
  for (const cell of cells) {
    if (cell.labels.stage !== 'judge' || cell.result.status !== 'done' || cell.result.text === null) continue;
    const targetKey = String(cell.labels.targetKey);
    const judge = String(cell.labels.judge);
    const attempt = Number(cell.labels.attempt ?? 0);
    const verdict = parseJudgeOutput(cell.result.text);
    const byJudge = verdicts.get(targetKey) ?? new Map();
    const previous = byJudge.get(judge);
    // A parsed verdict wins; otherwise the latest attempt decides (invalid → null).
    if (!previous || (verdict.ok && (previous.score === null || attempt > previous.attempt)) || (previous.score === null && attempt > previous.attempt)) {
      byJudge.set(judge, { attempt, score: verdict.ok ? verdict.score : null });
    }
    verdicts.set(targetKey, byJudge);
  }
  const stressors = new Map<string, (typeof stimuli.stressors)[number]>(stimuli.stressors.map((s) => [s.id, s]));
  const contracts = new Map(stimuli.contracts.map((c) => [c.id, c]));
  const observations: PersonaObservation[] = [];
  for (const cell of cells) {
    const l = cell.labels;
    if (l.stage !== 'target' || l.experiment !== PERSONA_EXPERIMENT) continue;
    const status = cell.result.status === 'pending' ? 'failed' : cell.result.status;
    const text = cell.result.text ?? '';
    const surface = l.surface as PersonaObservation['surface'];
    let check: PersonaObservation['check'];
    if (status === 'done' && surface === 'stressor') {
      const stressor = stressors.get(String(l.item));
      if (stressor) check = runStressorChecker(stressor.checker, text, stressor.expected);
    } else if (status === 'done' && surface === 'contract') {
      const contract = contracts.get(String(l.item));
      if (contract) {
        const r = checkContract(contract, text);
        check = { pass: r.pass, reason: r.reason };
      }
    }
    const scores: Record<string, number | null> = {};
    for (const [judge, v] of verdicts.get(cell.key) ?? []) scores[judge] = v.score;
    observations.push({
      target: String(l.target),
      session: String(l.session),
      position: String(l.position),
      positionValue: Number(l.positionValue),
      ...(l.compactionIndex !== null && l.compactionIndex !== undefined
        ? { compaction: { index: Number(l.compactionIndex), side: l.compactionSide as 'pre' | 'post' } }
        : {}),
      arm: String(l.arm),
      mitigation: String(l.mitigation),
      distance: String(l.distance),
      surface,
      item: String(l.item),
      category: String(l.category),
      paraphrase: Number(l.paraphrase),
      sample: Number(l.sample),
      status: status as PersonaObservation['status'],
      text,
      scores,
      ...(check ? { check } : {}),
    });
  }
  return observations;
}

/** The latest persona run in a store, or the one named. */
export function personaRunId(store: RunStore, runId?: string): string {
  if (runId) {
    store.requireRun(runId);
    return runId;
  }
  const runs = store.listRuns().filter((r) => r.experiment === PERSONA_EXPERIMENT);
  const latest = runs.sort((a, b) => b.startedAt.localeCompare(a.startedAt))[0];
  if (!latest) throw new ConfigError('the store holds no persona run', { field: 'run' });
  return latest.id;
}

export function personaReport(store: RunStore, runId: string, options: AnalysisOptions = {}): PersonaReport {
  const run = store.requireRun(runId);
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
  return analyzePersona(collectPersonaObservations(store, runId), { ...analysis, ...options });
}
