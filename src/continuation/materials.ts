import { formatLocation, InputError } from '../core/errors.js';
import { cloneRoot, CloneReader, isBuiltinMaterials, type MaterialsRecord } from '../materials/files.js';
import { moduleConstant, type PyValue } from '../materials/python-literal.js';
import { Shape } from '../materials/shape.js';
import type { ToolDefinition } from '../models/types.js';
import { toolDefinitionsFrom } from './tools.js';

/**
 * The ContextEcho authors' continuation texts, read at run time from a local clone of their
 * repository (nothing of it is part of echolens): in experiments/e07_downstream_pilot/run_continuation.py,
 *   SYSTEM_PROMPT  the system prompt of every arm,
 *   ACK_MESSAGE    the assistant turn after a prefix,
 *   TOOLS          the tool schemas offered (a list of {name, description, input_schema} dicts).
 * Each is used where the file defines it; a missing one keeps echolens's and is noted in the
 * manifest (the fixture clones of the tests define only some of them).
 */

export const CONTINUATION_MATERIALS_FILE = 'experiments/e07_downstream_pilot/run_continuation.py';

export interface ContinuationMaterials {
  systemPrompt: string | null;
  acknowledgement: string | null;
  tools: ToolDefinition[] | null;
  record: MaterialsRecord;
}

function defines(source: string, name: string): boolean {
  return new RegExp(`^${name}[ \\t]*(?::[^=\\n]*)?=(?!=)`, 'mu').test(source);
}

/** A Python literal (str, number, True/False/None, list, tuple, dict with string keys) as JSON data. */
function literalData(value: PyValue, shape: Shape, what: string): unknown {
  switch (value.kind) {
    case 'str':
      return shape.str(value, what, { nonEmpty: false });
    case 'num':
    case 'const':
      return value.value;
    case 'list':
    case 'tuple':
      return value.items.map((item, i) => literalData(item, shape, `${what}[${i}]`));
    case 'dict':
      return Object.fromEntries(shape.dict(value, what).map(([key, v]) => [key, literalData(v, shape, `${what}["${key}"]`)]));
    default:
      return shape.fail(value, `${what}: expected a literal value, found ${value.kind}`);
  }
}

export function loadContinuationMaterials(materials: string | undefined): ContinuationMaterials | null {
  if (isBuiltinMaterials(materials)) return null;
  const reader = new CloneReader(cloneRoot(materials as string), 'ContextEcho');
  const { text, file } = reader.read(CONTINUATION_MATERIALS_FILE);
  const shape = new Shape(file);
  const notes: string[] = [];
  const read = <T>(name: string, what: string, convert: (value: PyValue) => T): T | null => {
    if (!defines(text, name)) {
      notes.push(`${CONTINUATION_MATERIALS_FILE} defines no ${name}: echolens's ${what} is used`);
      return null;
    }
    return convert(moduleConstant(text, name, file));
  };
  const systemPrompt = read('SYSTEM_PROMPT', 'system prompt', (v) => shape.str(v, 'SYSTEM_PROMPT'));
  const acknowledgement = read('ACK_MESSAGE', 'acknowledgement turn', (v) => shape.str(v, 'ACK_MESSAGE'));
  const tools = read('TOOLS', 'tool set (reconstructed from the transcript)', (v) => {
    try {
      return toolDefinitionsFrom(literalData(v, shape, 'TOOLS'), file);
    } catch (error) {
      if (error instanceof InputError) {
        // Said again with the line of TOOLS and the field named after the constant.
        const bare = error.message.slice(formatLocation({ file: error.file, field: error.field }).length);
        throw new InputError(bare, { file, line: v.line, field: (error.field ?? 'tools').replace(/^tools/u, 'TOOLS') });
      }
      throw error;
    }
  });
  return { systemPrompt, acknowledgement, tools, record: reader.record(notes) };
}

/** With a clone, a config's own system prompt and tool file still win; say so rather than guess. */
export function materialsConflicts(
  config: { systemPrompt?: string | undefined; tools?: string | undefined },
  materials: ContinuationMaterials | null,
): string[] {
  if (materials === null) return [];
  const out: string[] = [];
  if (config.systemPrompt !== undefined && materials.systemPrompt !== null) out.push("systemPrompt in the config replaces the authors' SYSTEM_PROMPT");
  if (config.tools !== undefined && materials.tools !== null) out.push("tools in the config replaces the authors' TOOLS");
  return out;
}
