import { resolve } from 'node:path';
import { scrubSecretShapes } from '../sessions/redact/answer-secrets.js';
import { hashCanonical } from '../core/canonical-json.js';
import { InputError } from '../core/errors.js';
import { isObject } from '../core/guards.js';
import { packageVersion } from '../core/version.js';
import { gitCommit } from '../experiment/runtime.js';
import type { CellOutcome, RunStore } from '../store/run-store.js';
import type { CellLabels, CellSpec, RunManifest } from '../store/types.js';
import { CONTEXT_ARMS, type PersonaConfig, personaConfigSchema, personaProcedure } from './config.js';
import { ARCHIVE_STRESSOR, type ArchiveCell, archiveArmName, CONTENT_POSITION } from './interchange-cells.js';
import { archivePathPart } from './interchange-confine.js';
import type { ArchiveRead } from './interchange-files.js';
import { JUDGE_LABELS } from './judge.js';
import { decodePersonaTargetLabels, isPersonaTargetCell } from './labels.js';
import { PERSONA_EXPERIMENT, personaCellsAndVerdicts } from './run.js';
import { getOrInsert } from '../core/get-or-insert.js';
import { definedFields } from '../core/copy-defined.js';

/**
 * The store side of the ContextEcho interchange: an archive becomes a persona run whose cells hold
 * the archived responses and verdicts (no model is called), and any persona run becomes files in
 * the authors' layouts. docs/interchange.md describes both directions.
 */

/** The file an export writes beside the cells so that an import restores the run's design exactly. */
export const EXPORT_MANIFEST = 'echolens-run.json';

export interface ExportManifest {
  schema: 'echolens.persona-export/1';
  runId: string;
  config: unknown;
  sessions: unknown;
  /** The run's units of inference (forks merged), when the run recorded them. */
  units?: unknown;
}

const NO_USAGE = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };

function targetLabels(c: ArchiveCell): CellLabels {
  return {
    experiment: PERSONA_EXPERIMENT,
    stage: 'target',
    ...definedFields(c, ['target', 'session', 'position', 'positionValue'] as const),
    compactionIndex: c.compaction?.index ?? null,
    compactionSide: c.compaction?.side ?? null,
    ...definedFields(c, ['arm', 'mitigation', 'distance'] as const),
    surface: c.surface ?? 'probe',
    ...definedFields(c, ['item', 'category', 'paraphrase', 'sample', 'systemPrompt'] as const),
    bareProbe: c.probeText,
    importedFrom: c.file,
  };
}

/**
 * The request recorded for an imported cell. The archive keeps no prompt (the session prefix is not
 * in it), so the request names the source file and the cell's place in the design: every imported
 * cell has its own key (a content-position file holds many cells), and an identical response judged
 * differently in two cells never shares a stored verdict.
 */
function importedRequest(model: string, c: ArchiveCell, user: string): CellSpec['request'] {
  return {
    model,
    messages: [
      {
        role: 'system',
        content: `echolens import (contextecho layout): the recorded ${model === c.target ? 'response' : 'verdict'} of ${c.file}; ${JSON.stringify([c.target, c.session, c.position, c.arm, c.mitigation, c.distance, c.systemPrompt, c.item, c.paraphrase])}`,
      },
      { role: 'user', content: user },
    ],
    params: {},
    sample: c.sample,
  };
}

/** The judge output an imported verdict is stored as: what echolens's judge parser reads back. */
function verdictText(j: ArchiveCell['judgements'][number]): string {
  if (j.score === null) return JSON.stringify({ score: -1, label: j.label, reason: j.reason });
  return JSON.stringify({ score: j.score, label: JUDGE_LABELS[j.score], reason: j.reason });
}

function outcome(status: CellOutcome['status'], text: string | null, model: string, usage = NO_USAGE): CellOutcome {
  const now = new Date().toISOString();
  return {
    status,
    attempts: 0,
    text,
    reasoning: null,
    finishReason: null,
    responseModel: model,
    usage,
    latencyMs: null,
    costUsd: null,
    errorClass: status === 'failed' ? 'imported' : null,
    errorMessage: status === 'failed' ? 'the cell had no answer in the imported archive' : null,
    startedAt: now,
    finishedAt: now,
  };
}

/** The config recorded for an archive without an echolens export manifest. */
function archiveConfig(read: ArchiveRead, source: string, procedure: 'echolens' | 'reference'): PersonaConfig {
  const arms = [...new Set(read.cells.map((c) => c.arm))].filter((a): a is (typeof CONTEXT_ARMS)[number] => (CONTEXT_ARMS as readonly string[]).includes(a));
  const judges = [...new Set(read.cells.flatMap((c) => c.judgements.map((j) => j.judge)))].sort();
  if (judges.length === 0) {
    // A persona run is defined by its judged probes; a run without one verdict has nothing to analyse or re-judge against.
    throw new InputError(`no cell of the archive has a judge verdict (${read.cells.length} cells read): there is nothing to analyse`, {
      file: source,
      field: 'judge',
    });
  }
  return personaConfigSchema.parse({
    name: 'contextecho-import',
    sessions: [source],
    targets: [...new Set(read.cells.map((c) => c.target))].sort(),
    judges,
    ...(arms.length > 0 ? { arms: arms.sort() } : {}),
    procedure,
  });
}

function exportedConfig(manifest: ExportManifest, procedure: 'echolens' | 'reference' | undefined): PersonaConfig {
  const parsed = personaConfigSchema.safeParse(procedure === undefined ? manifest.config : { ...(manifest.config as Record<string, unknown>), procedure });
  if (!parsed.success)
    throw new InputError(`the recorded config is not a persona config: ${parsed.error.issues[0]?.message ?? ''}`, { file: EXPORT_MANIFEST, field: 'config' });
  return parsed.data;
}

/** Reads an export manifest value (from echolens-run.json), or throws naming the field. */
export function parseExportManifest(value: unknown): ExportManifest {
  if (!isObject(value) || value.schema !== 'echolens.persona-export/1') {
    throw new InputError('not an echolens persona export manifest (schema echolens.persona-export/1)', { file: EXPORT_MANIFEST, field: 'schema' });
  }
  return value as unknown as ExportManifest;
}

/**
 * Records an archive as one persona run, in one transaction: the run, its target cells (the
 * archived responses) and judge cells (the archived verdicts). Any error rolls everything back.
 * `procedure` defaults to the exported run's own, else `reference` (the authors' estimators).
 */
export async function importArchive(
  store: RunStore,
  read: ArchiveRead,
  options: {
    source: string;
    exportManifest?: ExportManifest;
    procedure?: 'echolens' | 'reference';
    /**
     * Applied to every archived response and verdict reason before it is stored (`persona import
     * --redact-responses`, or an exported run whose config had `redactResponses: true`): the
     * personal-data redaction. Secrets of known shapes are scrubbed from them always.
     */
    redactText?: (text: string) => string;
  },
) {
  // The archive's answers are model output like any other: what the store keeps of them, in their
  // own cells and inside the judge requests that quote them.
  const stored = (text: string) => {
    const scrubbed = scrubSecretShapes(text).text;
    return options.redactText ? options.redactText(scrubbed) : scrubbed;
  };
  const source = resolve(options.source);
  const config = options.exportManifest
    ? exportedConfig(options.exportManifest, options.procedure)
    : archiveConfig(read, source, options.procedure ?? 'reference');
  const procedure = personaProcedure(config);
  const cells = read.cells;
  const runId = `persona-import-${hashCanonical({ cells: cells.map(({ file: _file, ...rest }) => rest), config }).slice(0, 12)}`;
  const existing = await store.getRun(runId);
  if (existing) throw new InputError(`this archive is already in the store as run ${runId}`, { file: options.source });
  const manifest: RunManifest = {
    experiment: PERSONA_EXPERIMENT,
    config,
    seed: config.seed,
    versions: { echolens: packageVersion(), node: process.version },
    gitCommit: gitCommit(),
    options: {
      imported: {
        layout: 'contextecho',
        source,
        files: read.files.length,
        perCellFiles: read.layouts.perCell,
        contentPositionFiles: read.layouts.contentPosition,
        ...(read.layouts.crossCompaction ? { crossCompactionFiles: read.layouts.crossCompaction } : {}),
        ...(read.layouts.anchorVariants ? { anchorVariantFiles: read.layouts.anchorVariants } : {}),
        modelCalls: 0,
        ...(options.exportManifest ? { exportedRun: options.exportManifest.runId } : {}),
      },
      procedure,
      sessions: options.exportManifest?.sessions ?? [{ id: 'S1', file: source }],
      ...(options.exportManifest?.units !== undefined ? { units: options.exportManifest.units } : {}),
    },
  };
  const targetSpecs = cells.map((c) => ({ request: importedRequest(c.target, c, c.probeText), labels: targetLabels(c) }));
  const judges = new Set<string>();
  const judgeCells = await store.transaction(async () => {
    await store.createRun(manifest, { id: runId });
    const targetKeys = await store.registerCells(runId, targetSpecs);
    await store.recordResults(
      cells.map((c, i) => ({
        key: targetKeys[i] as string,
        outcome: outcome(c.status, c.status === 'failed' ? null : stored(c.response), c.target, {
          ...NO_USAGE,
          inputTokens: c.inputTokens,
          outputTokens: c.outputTokens,
        }),
      })),
    );
    const judgeSpecs: CellSpec[] = [];
    const judgeOutcomes: CellOutcome[] = [];
    cells.forEach((c, i) => {
      if (c.status !== 'done') return;
      for (const j of c.judgements) {
        judges.add(j.judge);
        judgeSpecs.push({
          request: importedRequest(j.judge, c, `PROBE:\n${c.probeText}\n\nRESPONSE:\n${stored(c.response)}`),
          labels: { experiment: PERSONA_EXPERIMENT, stage: 'judge', judge: j.judge, targetKey: targetKeys[i] as string, attempt: 0, archiveLabel: j.label },
        });
        judgeOutcomes.push(outcome('done', verdictText(typeof j.reason === 'string' ? { ...j, reason: stored(j.reason) } : j), j.judge));
      }
    });
    const judgeKeys = await store.registerCells(runId, judgeSpecs);
    await store.recordResults(judgeKeys.map((key, i) => ({ key, outcome: judgeOutcomes[i] as CellOutcome })));
    await store.setRunStatus(runId, 'done', { imported: true, targetCells: cells.length, judgeCells: judgeSpecs.length, modelCalls: 0 });
    return judgeSpecs.length;
  });
  return { runId, targetCells: cells.length, judgeCells, targets: config.targets, judges: [...judges].sort(), procedure: procedure.name };
}

const safe = archivePathPart;

/** The call's timing and token fields, as the authors' files hold them. */
const callFields = (result: Pick<CellOutcome, 'latencyMs' | 'usage'>) => ({
  wall_clock_sec: result.latencyMs === null ? null : result.latencyMs / 1000,
  input_tokens: result.usage.inputTokens,
  output_tokens: result.usage.outputTokens,
});

export interface ExportResult {
  files: Array<{ path: string; value: unknown }>;
  cells: number;
  /** Cells of surfaces the layouts cannot hold (stressors, contracts), by surface. */
  skipped: Record<string, number>;
}

/**
 * A persona run in the authors' per-cell layout (every probe cell; the headline judge's verdict in
 * the authors' fields, every judge in the `echolens` block), a content-position file per target
 * whose scratch arm was asked at one position (the conditions at that position), and
 * echolens-run.json.
 */
export async function exportRun(store: RunStore, runId: string): Promise<ExportResult> {
  const run = await store.requireRun(runId);
  if (run.experiment !== PERSONA_EXPERIMENT) throw new InputError(`run ${runId} is a ${run.experiment} run, not a persona run`, { file: store.file });
  const { cells, verdicts } = await personaCellsAndVerdicts(store, runId);
  const targetCells = cells.filter((c) => isPersonaTargetCell(c.labels));
  const decoded = targetCells.map((c) => ({ cell: c, l: decodePersonaTargetLabels(c.labels, c.key) }));
  const skipped: Record<string, number> = Object.create(null);
  // S2 stressor cells go to the authors' cross-compaction (no mitigation) and anchor-variant (real arm, a mitigation) layouts.
  const stressorFile = (l: (typeof decoded)[number]['l']): string | null => {
    if (l.surface !== 'stressor' || l.item !== ARCHIVE_STRESSOR || l.sample !== 0 || l.paraphrase > 99) return null;
    const v = `v${String(l.paraphrase).padStart(2, '0')}`;
    if (l.mitigation === 'none' && (l.arm === 'real' || l.arm === 'filler')) return `${l.arm === 'real' ? 'claude' : 'filler'}.json\u0000${v}`;
    if (l.mitigation !== 'none' && l.arm === 'real') return `cell.json\u0000${v}`;
    return null;
  };
  const stressorCells = decoded.filter(({ l }) => stressorFile(l) !== null);
  const probes = decoded.filter(({ l }) => {
    if (l.surface === 'probe') return true;
    if (stressorFile(l) !== null) return false;
    skipped[l.surface] = (skipped[l.surface] ?? 0) + 1;
    return false;
  });
  const distinct = (f: (l: (typeof decoded)[number]['l']) => string) => new Set(probes.map(({ l }) => f(l))).size;
  const manySessions = distinct((l) => l.session) > 1;
  const manyDistances = distinct((l) => l.distance) > 1;
  const manyPrompts = distinct((l) => l.systemPrompt ?? '') > 1;
  const allJudges = [...new Set(cells.filter((c) => c.labels.stage === 'judge').map((c) => String(c.labels.judge)))].sort();
  const headlineJudge = allJudges[0];
  const files: ExportResult['files'] = [];
  const paths = new Set<string>();
  const byTarget = new Map<string, Array<{ record: Record<string, unknown>; position: string; session: string }>>();
  for (const { cell, l } of probes) {
    const status = cell.result.status === 'pending' ? 'failed' : cell.result.status;
    const judged = verdicts.get(cell.key) ?? new Map();
    const judgements = allJudges
      .filter((j) => judged.has(j))
      .map((j) => {
        const v = judged.get(j);
        return { judge: j, score: v?.verdict?.score ?? null, label: v?.verdict?.label ?? null, reason: v?.verdict?.reason ?? v?.error ?? '' };
      });
    const headline = judgements.find((j) => j.judge === headlineJudge);
    const armDir = [
      archiveArmName(l.arm),
      l.mitigation !== 'none' ? l.mitigation : null,
      manyDistances ? l.distance : null,
      manyPrompts ? (l.systemPrompt ?? 'default') : null,
    ]
      .filter((x): x is string => x !== null)
      .map(safe)
      .join('__');
    const positionDir = safe(manySessions ? `${l.session}__${l.position}` : l.position);
    const name = `${safe(l.item)}${l.paraphrase > 0 ? `_p${l.paraphrase}` : ''}${l.sample > 0 ? `_v${String(l.sample).padStart(2, '0')}` : ''}.json`;
    const path = ['results', 'probes_at_crosscompaction', safe(l.target), positionDir, armDir, name].join('/');
    if (paths.has(path)) throw new InputError(`two cells of run ${runId} map to the same archive file`, { file: path });
    paths.add(path);
    const text = cell.result.text ?? '';
    const record = {
      probe_id: l.item,
      probe_category: l.category,
      probe_text: typeof cell.labels.bareProbe === 'string' ? cell.labels.bareProbe : '',
      arm: archiveArmName(l.arm),
      position: l.position,
      target: safe(l.target),
      session: l.session,
      response_text: text,
      response_len: text.length,
      ...callFields(cell.result),
      // The authors' fields carry the headline judge; −1 marks an unusable verdict, as in their files.
      score: headline === undefined ? null : (headline.score ?? -1),
      label: headline?.label ?? null,
      reason: headline?.reason ?? '',
      echolens: {
        target: l.target,
        session: l.session,
        positionValue: l.positionValue,
        compaction:
          l.compactionIndex !== null && l.compactionIndex !== undefined && l.compactionSide ? { index: l.compactionIndex, side: l.compactionSide } : null,
        arm: l.arm,
        mitigation: l.mitigation,
        distance: l.distance,
        systemPrompt: l.systemPrompt ?? null,
        category: l.category,
        paraphrase: l.paraphrase,
        sample: l.sample,
        status,
        judgements,
        order: files.length,
      },
    };
    files.push({ path, value: record });
    if (l.mitigation === 'none' && l.paraphrase === 0 && l.sample === 0) {
      getOrInsert(byTarget, l.target, () => []).push({ record, position: l.position, session: l.session });
    }
  }
  for (const [target, all] of byTarget) {
    // The consolidation script reads one context slice per condition, every condition against
    // scratch: a target gets the file only with scratch measured at one position, and the file
    // holds the conditions at that position (its per-cell cells elsewhere stay in the tree only).
    const slice = (r: { position: string; session: string }) => `${r.session}\u0000${r.position}`;
    const scratchAt = new Set(all.filter((r) => (r.record.echolens as { arm: string }).arm === 'scratch').map(slice));
    if (scratchAt.size !== 1) continue;
    const records = all.filter((r) => scratchAt.has(slice(r)));
    // Condition names are data (`__proto__` is a name like any other): a map without a prototype.
    const conditions: Record<string, { results: unknown[] }> = Object.create(null);
    for (const { record } of records) {
      const arm = String(record.arm);
      const condition = conditions[arm] ?? { results: [] };
      conditions[arm] = condition;
      condition.results.push({
        probe_id: record.probe_id,
        category: record.probe_category,
        probe_text: record.probe_text,
        score: record.score,
        label: record.label,
        reason: record.reason,
        response_full: record.response_text,
        // As the authors' runners mark a cell whose target call failed.
        ...((record.echolens as { status: string }).status === 'failed' ? { error: 'no answer (failed cell)' } : {}),
      });
    }
    files.push({
      path: `docs/CONTENT_POSITION_${safe(target)}.json`,
      value: { target, position: records[0]?.position ?? CONTENT_POSITION, echolens_export: true, full_results: conditions },
    });
  }
  const manyStressorSessions = new Set(stressorCells.map(({ l }) => l.session)).size > 1;
  for (const { cell, l } of stressorCells) {
    const [name, v] = (stressorFile(l) as string).split('\u0000') as [string, string];
    const positionDir = safe(manyStressorSessions ? `${l.session}__${l.position}` : l.position);
    const base = l.mitigation === 'none' ? ['results', 'cross_compaction'] : ['results', 'anchor_variants', safe(l.mitigation)];
    const path = [...base, safe(l.target), positionDir, v, name].join('/');
    // The authors' stressor runner writes no file for a failed call; two cells on one file (several prompts or distances) keep the first.
    if (paths.has(path) || cell.result.status === 'failed' || cell.result.status === 'pending') {
      skipped.stressor = (skipped.stressor ?? 0) + 1;
      continue;
    }
    paths.add(path);
    const text = cell.result.text ?? '';
    files.push({
      path,
      value: {
        response_text: text,
        response_len: [...text].length,
        ...callFields(cell.result),
      },
    });
  }
  const options = run.manifest.options as { sessions?: unknown; units?: unknown } | undefined;
  const manifest: ExportManifest = { schema: 'echolens.persona-export/1', runId, config: run.manifest.config, sessions: options?.sessions ?? [] };
  if (options?.units !== undefined) manifest.units = options.units;
  files.push({ path: EXPORT_MANIFEST, value: manifest });
  return { files, cells: probes.length, skipped };
}
