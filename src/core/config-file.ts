import { readFileSync } from 'node:fs';
import { isMap, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { ConfigError } from './errors.js';

/**
 * Reads a YAML (or JSON) experiment config, applies `key=value` overrides from
 * flags, and validates it with a zod schema. Errors name file:line:key.
 */
export interface LoadedConfig<T> {
  config: T;
  file: string;
}

export function parseOverride(assignment: string): { path: string[]; value: unknown } {
  const eq = assignment.indexOf('=');
  if (eq <= 0) throw new ConfigError(`override "${assignment}" must look like key.path=value`, { field: '--set' });
  const path = assignment.slice(0, eq).split('.').filter(Boolean);
  const raw = assignment.slice(eq + 1);
  let value: unknown = raw;
  try {
    value = parseDocument(raw).toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch {
    value = raw;
  }
  return { path, value: value ?? raw };
}

function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node: Record<string, unknown> = target;
  path.forEach((key, index) => {
    if (index === path.length - 1) {
      node[key] = value;
      return;
    }
    const next = node[key];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  });
}

/**
 * Builds a config from `key=value` overrides alone (no file), e.g. from CLI flags, and
 * validates it. Errors name the key and say it came from the command line.
 */
export function configFromOverrides<T>(schema: z.ZodType<T>, overrides: readonly string[]): T {
  const data: Record<string, unknown> = {};
  for (const assignment of overrides) {
    const { path, value } = parseOverride(assignment);
    setPath(data, path, value);
  }
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = (issue?.path ?? []).map((p) => String(p)).join('.');
    throw new ConfigError(`${issue?.message ?? 'invalid value'} (from the command line)`, { field: key || '(root)' });
  }
  return parsed.data;
}

export function loadConfigFile<T>(
  file: string,
  schema: z.ZodType<T>,
  overrides: readonly string[] = [],
): LoadedConfig<T> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read config: ${(error as Error).message}`, { file });
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0) {
    const first = doc.errors[0];
    const line = first?.linePos?.[0]?.line;
    throw new ConfigError(`YAML syntax: ${first?.message.split('\n')[0] ?? 'invalid'}`, { file, line });
  }
  const raw = (yamlToJs(doc, file) ?? {}) as unknown;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError('the config must be a mapping of keys to values', { file, line: 1 });
  }
  const data = raw as Record<string, unknown>;
  const overridden = new Set<string>();
  for (const assignment of overrides) {
    const { path, value } = parseOverride(assignment);
    setPath(data, path, value);
    overridden.add(path.join('.'));
  }
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = (issue?.path ?? []).map((p) => (typeof p === 'symbol' ? String(p) : p)) as (string | number)[];
    const key = path.join('.');
    const fromFlag = [...overridden].some((o) => key === o || key.startsWith(`${o}.`));
    const line = fromFlag ? undefined : lineOf(doc, path, lineCounter);
    throw new ConfigError(`${issue?.message ?? 'invalid value'}${fromFlag ? ' (from a --set flag)' : ''}`, {
      file,
      line,
      field: key || '(root)',
    });
  }
  return { config: parsed.data, file };
}

/**
 * Most alias expansions accepted in a config. A YAML "billion laughs" document (aliases
 * of aliases) would otherwise grow to gigabytes; the yaml library refuses it, and the
 * refusal becomes a one-line config error instead of an internal error with a stack.
 */
export const MAX_YAML_ALIASES = 100;

function yamlToJs(doc: ReturnType<typeof parseDocument>, file: string): unknown {
  try {
    return doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new ConfigError(`YAML: ${/alias/i.test(message ?? '') ? `too many alias expansions (at most ${MAX_YAML_ALIASES}; a YAML alias bomb?)` : message}`, { file });
  }
}

function lineOf(doc: ReturnType<typeof parseDocument>, path: (string | number)[], counter: LineCounter): number | undefined {
  // Walk as deep as the document goes; report the deepest existing node.
  for (let depth = path.length; depth >= 0; depth--) {
    const node = depth === 0 ? doc.contents : doc.getIn(path.slice(0, depth), true);
    if (node && (isScalar(node) || isMap(node) || isSeq(node)) && node.range) {
      return counter.linePos(node.range[0]).line;
    }
  }
  return undefined;
}
