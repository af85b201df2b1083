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
}

export function runMaterialsOf(manifestOptions: unknown): RunMaterials {
  const options = (manifestOptions ?? {}) as { materials?: MaterialsRecord; procedure?: unknown; labelerInput?: unknown };
  const procedure = options.labelerInput !== undefined ? { name: options.procedure ?? 'echolens', labelerInput: options.labelerInput } : (options.procedure ?? null);
  return { materials: options.materials ?? null, procedure };
}

export function runMaterials(store: RunStore, runId: string): RunMaterials {
  return runMaterialsOf(store.requireRun(runId).manifest.options);
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
    lines.push(m.source === 'echolens' ? 'Materials: echolens built-in texts.' : `Materials: the authors' ${m.repository} repository, local clone at \`${m.root}\`.`);
    lines.push('', '| file | SHA-256 |', '| --- | --- |', ...m.files.map((f) => `| \`${f.path}\` | \`${f.sha256}\` |`));
    for (const note of m.notes) lines.push('', `Note: ${note}`);
  }
  lines.push('', `Procedure: ${procedureText(info.procedure)}.`, '');
  return lines.join('\n');
}

/** One line for the HTML manifest table. */
export function materialsSummary(info: RunMaterials): string {
  const m = info.materials;
  const head = m === null ? 'not recorded' : m.source === 'echolens' ? 'echolens built-in texts' : `${m.repository} clone at ${m.root}`;
  const files = m === null ? '' : `; ${m.files.map((f) => `${f.path} sha256:${f.sha256.slice(0, 16)}`).join(', ')}`;
  return `${head}${files}`;
}

export function procedureSummary(info: RunMaterials): string {
  return procedureText(info.procedure);
}
