import type { RunStore } from '../store/run-store.js';
import type { MaterialsRecord } from './files.js';

/**
 * What every report says about a run's texts and procedure, read from its
 * manifest: the materials (echolens's or a clone of the authors' repository)
 * with each file's SHA-256, and the procedure with each difference resolved.
 */
export interface RunMaterials {
  materials: MaterialsRecord | null;
  procedure: unknown;
  /** Where each condition's stimuli came from, when the run mixed the authors' materials with other sets (DriftLens). */
  conditionSources?: StimulusSource[];
}

/** One condition and the set its strings came from: `materials` (the authors'), `builtin` (echolens) or `file` (the user's). */
export interface StimulusSource {
  condition: string;
  tier: string;
  source: 'materials' | 'builtin' | 'file';
  file: string;
}

/** What a reader sees for each source. */
export const STIMULUS_SOURCE_LABELS: Readonly<Record<StimulusSource['source'], string>> = Object.freeze({
  materials: "authors' materials",
  builtin: 'echolens built-in',
  file: 'user file',
});

export function runMaterialsOf(manifestOptions: unknown): RunMaterials {
  const options = (manifestOptions ?? {}) as { materials?: MaterialsRecord; procedure?: unknown; labelerInput?: unknown; conditionSources?: StimulusSource[] };
  const procedure =
    options.labelerInput !== undefined ? { name: options.procedure ?? 'echolens', labelerInput: options.labelerInput } : (options.procedure ?? null);
  return { materials: options.materials ?? null, procedure, ...(options.conditionSources ? { conditionSources: options.conditionSources } : {}) };
}

/** The conditions' sources as a Markdown table, and the d_rel noise floor they make up. */
function conditionSourcesMarkdown(sources: readonly StimulusSource[]): string[] {
  const noise = sources.filter((s) => s.tier === 'noise');
  const floor =
    noise.length === 0
      ? 'none'
      : `${noise.map((s) => s.condition).join(', ')} (${[...new Set(noise.map((s) => STIMULUS_SOURCE_LABELS[s.source]))].join(', ')})`;
  return [
    '',
    'Stimuli of each condition (the authors release persona strings only; the other tiers come from echolens or the user):',
    '',
    '| condition | tier | source | file |',
    '| --- | --- | --- | --- |',
    ...sources.map((s) => `| ${s.condition} | ${s.tier} | ${STIMULUS_SOURCE_LABELS[s.source]} | \`${s.file}\` |`),
    '',
    `Noise floor of d_rel (μ_noise, σ_noise): ${floor}.`,
  ];
}

export async function runMaterials(store: RunStore, runId: string): Promise<RunMaterials> {
  return runMaterialsOf((await store.requireRun(runId)).manifest.options);
}

function procedureText(procedure: unknown): string {
  if (procedure === null || typeof procedure !== 'object') return 'echolens (not recorded: the run predates the procedure keys)';
  return Object.entries(procedure as Record<string, unknown>)
    .map(([key, value]) => `${key} ${value === null ? 'list' : String(value)}`)
    .join(', ');
}

/** A Markdown section naming the materials (files and hashes) and the procedure. */
export function materialsMarkdown(info: RunMaterials): string {
  const lines = ['## Materials and procedure', ''];
  const m = info.materials;
  if (m === null) lines.push('Materials: not recorded (the run predates materials records); echolens built-in texts.');
  else {
    lines.push(
      m.source === 'echolens' ? 'Materials: echolens built-in texts.' : `Materials: the authors' ${m.repository} repository, local clone at \`${m.root}\`.`,
    );
    lines.push('', '| file | SHA-256 |', '| --- | --- |', ...m.files.map((f) => `| \`${f.path}\` | \`${f.sha256}\` |`));
    for (const note of m.notes) lines.push('', `Note: ${note}`);
  }
  if (info.conditionSources !== undefined) lines.push(...conditionSourcesMarkdown(info.conditionSources));
  lines.push('', `Procedure: ${procedureText(info.procedure)}.`, '');
  return lines.join('\n');
}

/** One line for the HTML manifest table. */
export function materialsSummary(info: RunMaterials): string {
  const m = info.materials;
  const head = m === null ? 'not recorded' : m.source === 'echolens' ? 'echolens built-in texts' : `${m.repository} clone at ${m.root}`;
  const files = m === null ? '' : `; ${m.files.map((f) => `${f.path} sha256:${f.sha256.slice(0, 16)}`).join(', ')}`;
  const sources =
    info.conditionSources === undefined
      ? ''
      : `; stimuli: ${info.conditionSources.map((c) => `${c.condition} (${STIMULUS_SOURCE_LABELS[c.source]})`).join(', ')}`;
  return `${head}${files}${sources}`;
}

export function procedureSummary(info: RunMaterials): string {
  return procedureText(info.procedure);
}
