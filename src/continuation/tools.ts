import { parseDocument } from 'yaml';
import { InputError } from '../core/errors.js';
import { isObject } from '../core/guards.js';
import type { ToolDefinition } from '../models/types.js';
import type { Session } from '../sessions/types.js';
import { readUserText, userFileReason } from '../core/user-files.js';
import { getOrInsert } from '../core/get-or-insert.js';

/**
 * The tools the target is offered (pure apart from reading a schema file): the session's
 * own tool names with input schemas reconstructed from the recorded calls, or a
 * user-supplied schema file.
 *
 * Reconstruction: for each tool name called on the main chain, every argument seen in any
 * call becomes a property typed by the JSON types its values had (several types → a list);
 * arguments present in every call are `required`. A tool whose recorded input is a plain
 * string (Codex `apply_patch`) gets one string argument `input`. Names providers refuse
 * (outside [A-Za-z0-9_-], longer than 64) are left out and listed in `skipped`.
 */

export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
export const STRING_INPUT_ARGUMENT = 'input';

export interface ReconstructedTools {
  tools: ToolDefinition[];
  skipped: string[];
  /** Calls seen per tool. */
  calls: Record<string, number>;
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value === 'object' ? 'object' : typeof value;
}

/** The argument object the target sees for a recorded input (a string input is wrapped). */
export function argumentsOf(input: unknown): Record<string, unknown> {
  if (isObject(input)) return input;
  return { [STRING_INPUT_ARGUMENT]: input };
}

export function reconstructTools(session: Session): ReconstructedTools {
  const seen = new Map<string, { calls: number; types: Map<string, Set<string>>; present: Map<string, number> }>();
  for (const message of session.messages) {
    if (message.role !== 'assistant') continue;
    for (const block of message.blocks) {
      if (block.type !== 'tool_call') continue;
      const entry = getOrInsert(seen, block.name, () => ({ calls: 0, types: new Map(), present: new Map() }));
      entry.calls += 1;
      for (const [key, value] of Object.entries(argumentsOf(block.input))) {
        getOrInsert(entry.types, key, () => new Set()).add(jsonType(value));
        entry.present.set(key, (entry.present.get(key) ?? 0) + 1);
      }
    }
  }
  const tools: ToolDefinition[] = [];
  const skipped: string[] = [];
  const calls: Record<string, number> = {};
  for (const name of [...seen.keys()].sort()) {
    const entry = seen.get(name)!;
    calls[name] = entry.calls;
    if (!TOOL_NAME.test(name)) {
      skipped.push(name);
      continue;
    }
    const properties: Record<string, unknown> = {};
    for (const key of [...entry.types.keys()].sort()) {
      const types = [...entry.types.get(key)!].sort();
      properties[key] = { type: types.length === 1 ? types[0] : types };
    }
    const required = [...entry.present.entries()]
      .filter(([, n]) => n === entry.calls)
      .map(([key]) => key)
      .sort();
    tools.push({
      name,
      description: `The ${name} tool of the session (schema reconstructed from ${entry.calls} recorded call${entry.calls === 1 ? '' : 's'}).`,
      inputSchema: { type: 'object', properties, required },
    });
  }
  return { tools, skipped, calls };
}

/**
 * A schema file: JSON or YAML, a list (or `tools:` list) of `{ name, description?,
 * input_schema | inputSchema | parameters }` — the Anthropic and OpenAI spellings both work.
 */
export function loadToolSchemaFile(file: string): ToolDefinition[] {
  let data: unknown;
  try {
    data = parseDocument(readUserText(file)).toJS();
  } catch (error) {
    throw new InputError(`cannot read the tool schema file: ${userFileReason(error)}`, { file });
  }
  return toolDefinitionsFrom(data, file);
}

/** Tool definitions from parsed data: a list (or `{ tools: [...] }`) of Anthropic-, OpenAI- or plain-shaped tools. */
export function toolDefinitionsFrom(data: unknown, file: string): ToolDefinition[] {
  const list = Array.isArray(data) ? data : (data as { tools?: unknown } | null)?.tools;
  if (!Array.isArray(list) || list.length === 0) throw new InputError('expected a list of tools (or `tools:` with a list)', { file, field: 'tools' });
  return list.map((raw, i): ToolDefinition => {
    const entry = (raw as { type?: string; function?: unknown })?.type === 'function' ? (raw as { function: unknown }).function : raw;
    const e = entry as { name?: unknown; description?: unknown; input_schema?: unknown; inputSchema?: unknown; parameters?: unknown };
    if (typeof e?.name !== 'string' || !TOOL_NAME.test(e.name)) {
      throw new InputError(`tool name must match ${TOOL_NAME.source}, got ${JSON.stringify(e?.name)}`, { file, field: `tools.${i}.name` });
    }
    const schema = e.input_schema ?? e.inputSchema ?? e.parameters ?? { type: 'object', properties: {} };
    if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
      throw new InputError('the input schema must be a JSON Schema object', { file, field: `tools.${i}.input_schema` });
    }
    const tool: ToolDefinition = { name: e.name, inputSchema: schema as Record<string, unknown> };
    if (typeof e.description === 'string') tool.description = e.description;
    return tool;
  });
}
