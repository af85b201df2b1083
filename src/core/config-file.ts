import { isMap, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { ConfigError } from './errors.js';
import { didYouMean } from './suggest.js';
import { readUserText, userFileReason } from './user-files.js';

/**
 * Reads a YAML (or JSON) experiment config, applies `key=value` overrides from
 * flags, and validates it with a zod schema. Errors name file:line:key.
 */
export interface LoadedConfig<T> {
  config: T;
  file: string;
}

/** How `--set` reads a value (the flag's help and the config docs say the same). */
export const OVERRIDE_VALUE_RULE =
  'a JSON scalar (null, true, false, 3, "text") is that value, a [list] or {mapping} (YAML flow style) is parsed, anything else is text';

/**
 * The value of a `key=value` override: a JSON scalar is that value (`null` is null, `true` a
 * boolean, `3` a number, `"3"` the text 3); a list or mapping in YAML flow style (`[a, b]`,
 * `{ uniform: 3 }`, JSON too) is parsed; anything else is the text as written (`sim:judge`,
 * `~`, `yes`, `0x10`: no YAML-only spellings of null, booleans or numbers).
 */
export function parseOverrideValue(raw: string): unknown {
  try {
    const json: unknown = JSON.parse(raw);
    if (json === null || typeof json !== 'object') return json;
  } catch {
    // not JSON
  }
  try {
    const doc = parseDocument(raw);
    const value: unknown = doc.errors.length === 0 ? doc.toJS({ maxAliasCount: MAX_YAML_ALIASES }) : undefined;
    if (value !== null && typeof value === 'object') return value;
  } catch {
    // not YAML either (an alias bomb): the text
  }
  return raw;
}

export function parseOverride(assignment: string): { path: string[]; value: unknown } {
  const eq = assignment.indexOf('=');
  if (eq <= 0) throw new ConfigError(`override "${assignment}" must look like key.path=value`, { field: '--set' });
  const path = assignment.slice(0, eq).split('.').filter(Boolean);
  return { path, value: parseOverrideValue(assignment.slice(eq + 1)) };
}

function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  // A numeric segment indexes into an existing list (`positions.0.uniform=3`), never turning it into a mapping.
  let node: Record<string, unknown> | unknown[] = target;
  path.forEach((key, index) => {
    const slot: string | number = Array.isArray(node) && /^\d+$/u.test(key) ? Number(key) : key;
    const container = node as Record<string | number, unknown>;
    if (index === path.length - 1) {
      container[slot] = value;
      return;
    }
    const next = container[slot];
    if (next === null || typeof next !== 'object') container[slot] = {};
    node = container[slot] as Record<string, unknown> | unknown[];
  });
}

/** The keys a schema accepts at a path (through defaults, optionals, pipes, lists), or [] when unknown. */
export function schemaKeysAt(schema: unknown, path: readonly (string | number)[]): string[] {
  let node = schema as { _zod?: { def: Record<string, unknown> }; shape?: Record<string, unknown> } | undefined;
  const unwrap = () => {
    for (let guard = 0; guard < 20 && node?._zod; guard++) {
      const def = node._zod.def;
      const inner = (def.innerType ?? (def.type === 'pipe' ? def.in : undefined)) as typeof node | undefined;
      if (!inner) break;
      node = inner;
    }
  };
  for (const segment of path) {
    unwrap();
    if (!node?._zod) return [];
    const def = node._zod.def;
    if (def.type === 'array') node = def.element as typeof node;
    else if (def.type === 'object' && node.shape) node = node.shape[String(segment)] as typeof node;
    else return [];
  }
  unwrap();
  return node?._zod?.def.type === 'object' && node.shape ? Object.keys(node.shape) : [];
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
    // The same message as in a config file: an unknown key gets its did-you-mean and the valid keys.
    const { path, message } = describeIssues(schema, data, parsed.error.issues);
    const key = path.map((p) => String(p)).join('.');
    throw new ConfigError(`${message} (from a --set flag)`, { field: key || '(root)' });
  }
  return parsed.data;
}

export function loadConfigFile<T>(file: string, schema: z.ZodType<T>, overrides: readonly string[] = []): LoadedConfig<T> {
  let text: string;
  try {
    text = readUserText(file, { maxBytes: 16 * 1024 * 1024, what: 'a config' });
  } catch (error) {
    throw new ConfigError(`cannot read config: ${userFileReason(error)}`, { file });
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0) {
    const first = doc.errors[0];
    // Without prettyErrors the parser gives offsets only: turn the first into line and column.
    const at = first?.linePos?.[0] ?? (first?.pos?.[0] === undefined ? undefined : lineCounter.linePos(first.pos[0]));
    const line = at?.line;
    const column = at?.col;
    throw new ConfigError(`YAML syntax${column === undefined ? '' : ` (column ${column})`}: ${first?.message.split('\n')[0] ?? 'invalid'}`, { file, line });
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
    const { path, message } = describeIssues(schema, data, parsed.error.issues);
    const key = path.join('.');
    const fromFlag = [...overridden].some((o) => key === o || key.startsWith(`${o}.`));
    const line = fromFlag ? undefined : lineOf(doc, path, lineCounter);
    throw new ConfigError(`${message}${fromFlag ? ' (from a --set flag)' : ''}`, {
      file,
      line,
      field: key || '(root)',
    });
  }
  return { config: parsed.data, file };
}

type Issue = z.core.$ZodIssue;

/**
 * The one message a config error shows. An unknown key goes first, even when zod lists a missing
 * key before it: a misspelt required key (`targest:`) is both, and "did you mean targets" is the
 * fix; the required keys left missing at the same level are named after it.
 */
function describeIssues(schema: z.ZodType, data: unknown, issues: readonly Issue[]): { path: (string | number)[]; message: string } {
  const pathOf = (issue: Issue) => issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p)) as (string | number)[];
  const unknownIssue = issues.find((i) => i.code === 'unrecognized_keys' && i.keys.length > 0);
  if (unknownIssue === undefined || unknownIssue.code !== 'unrecognized_keys') {
    const issue = issues[0];
    return { path: issue ? pathOf(issue) : [], message: issue?.message ?? 'invalid value' };
  }
  const at = pathOf(unknownIssue);
  const unknown = unknownIssue.keys[0] as string;
  const known = schemaKeysAt(schema, at);
  let message = `unknown key "${unknown}"${didYouMean(unknown, known)}${known.length > 0 ? `; valid keys here: ${known.join(', ')}` : ''}`;
  const missing = issues
    .filter((i) => i.code === 'invalid_type' && i.path.length === at.length + 1 && at.every((p, k) => i.path[k] === p))
    .map((i) => String(i.path[at.length]))
    .filter((name) => valueAt(data, [...at, name]) === undefined);
  if (missing.length > 0) message += `; missing required key${missing.length === 1 ? '' : 's'}: ${missing.join(', ')}`;
  return { path: [...at, unknown], message };
}

function valueAt(data: unknown, path: readonly (string | number)[]): unknown {
  let node = data;
  for (const segment of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[segment];
  }
  return node;
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
    throw new ConfigError(`YAML: ${/alias/i.test(message ?? '') ? `too many alias expansions (at most ${MAX_YAML_ALIASES}; a YAML alias bomb?)` : message}`, {
      file,
    });
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
