import type { ToolCall } from '../models/types.js';
import type { GroundTruthCall } from './cutpoints.js';
import { argumentsOf } from './tools.js';

/**
 * Argument fidelity of an emitted tool call against the recorded ground truth (pure,
 * deterministic; docs/continuation.md explains every rule).
 *
 * Status of an answer:
 * - `call`: a parseable call (the first one when several were emitted; `extraCalls` counts the rest);
 * - `unparseable`: the call's arguments were not valid JSON, or it named a tool not offered;
 * - `prose`: text but no call;
 * - `missing`: no answer (empty output, or the call failed).
 *
 * Fidelity of a `call`, in [0, 1]: 0 when the tool name differs; otherwise the mean, over
 * the union of the flattened argument paths of both calls (nested keys dotted, list items
 * indexed), of a per-value score — 0 for a path only one side has; both sides without
 * arguments → 1. Per value:
 * - path-like (key names a path, or the value looks like one): 1 when equal after
 *   normalisation (separators, `./`, `..`, trailing slash; a relative path matching the tail
 *   of an absolute one), 0.5 when only the file name matches, else 0;
 * - command-like (key `command`/`cmd`/`script`, or a shell argv list joined): 1 when equal
 *   after whitespace normalisation, else the Jaccard overlap of their shell tokens;
 * - other strings: 1 when equal after trimming, else the Jaccard overlap of lower-cased word tokens;
 * - numbers, booleans, null: 1 when equal, else 0.
 */

export type CallStatus = 'call' | 'unparseable' | 'prose' | 'missing';

export interface ArgumentScore {
  path: string;
  kind: 'path' | 'command' | 'text' | 'scalar' | 'absent';
  score: number;
  /** Set when the optional judge was asked about this argument (continuation/judge.ts): its verdict. */
  judged?: 'equivalent' | 'different' | 'invalid' | 'unanswered';
}

export interface CallScore {
  status: CallStatus;
  /** Defined for `call` only. */
  fidelity: number | null;
  nameMatch: boolean | null;
  emittedName: string | null;
  arguments: ArgumentScore[];
  extraCalls: number;
}

const PATH_KEYS = /(^|_|\.)(path|file|file_path|filepath|filename|dir|directory|cwd|workdir|notebook_path|working_directory)$/i;
const COMMAND_KEYS = /(^|\.)(command|cmd|script)(\.\d+)?$/i;

/** Flattens a value to `path → leaf` (objects dotted, arrays indexed). Empty objects/arrays are leaves. */
export function flatten(value: unknown, prefix = '', out: Map<string, unknown> = new Map()): Map<string, unknown> {
  if (Array.isArray(value)) {
    if (value.length === 0) out.set(prefix, []);
    value.forEach((item, i) => {
      flatten(item, prefix === '' ? String(i) : `${prefix}.${i}`, out);
    });
  } else if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0 && prefix !== '') out.set(prefix, {});
    for (const [key, member] of entries) flatten(member, prefix === '' ? key : `${prefix}.${key}`, out);
  } else if (prefix !== '') {
    out.set(prefix, value);
  }
  return out;
}

/** Shell argv lists (`["bash","-lc","…"]`) become one command string before flattening. */
function joinCommands(args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    out[key] = COMMAND_KEYS.test(key) && Array.isArray(value) && value.every((v) => typeof v === 'string') ? value.join(' ') : value;
  }
  return out;
}

export function normalisePath(path: string): string {
  const absolute = path.startsWith('/');
  const out: string[] = [];
  for (const part of path.replace(/\\/g, '/').split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length > 0 && out.at(-1) !== '..') out.pop();
      else if (!absolute) out.push('..');
      continue;
    }
    out.push(part);
  }
  return (absolute ? '/' : '') + out.join('/');
}

function looksLikePath(value: string): boolean {
  return !/\s/.test(value) && /^(\.{0,2}\/|~\/|[A-Za-z]:\\)?[\w.@+-]+([/\\][\w.@+-]+)+\/?$/.test(value);
}

export function pathScore(a: string, b: string): number {
  if (a === b) return 1;
  const x = normalisePath(a);
  const y = normalisePath(b);
  if (x === y) return 1;
  // A relative path that names the tail of an absolute one.
  const [long, short] = x.length >= y.length ? [x, y] : [y, x];
  if (!short.startsWith('/') && short !== '' && long.endsWith(`/${short}`)) return 1;
  const base = (p: string) => p.split('/').at(-1) ?? '';
  return base(x) !== '' && base(x) === base(y) ? 0.5 : 0;
}

function jaccard(a: readonly string[], b: readonly string[]): number {
  const x = new Set(a);
  const y = new Set(b);
  if (x.size === 0 && y.size === 0) return 1;
  let both = 0;
  for (const t of x) if (y.has(t)) both += 1;
  return both / (x.size + y.size - both);
}

/** Shell-ish tokens: quoted strings kept whole, otherwise split on whitespace and operators. */
export function shellTokens(command: string): string[] {
  const tokens: string[] = [];
  const pattern = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(&&|\|\||[|;<>])|([^\s"'|;<>&]+)/g;
  for (const m of command.matchAll(pattern)) tokens.push(m[1] ?? m[2] ?? m[3] ?? m[4] ?? '');
  return tokens.filter((t) => t !== '');
}

export function commandScore(a: string, b: string): number {
  const norm = (s: string) => s.trim().replace(/\s+/g, ' ');
  if (norm(a) === norm(b)) return 1;
  return jaccard(shellTokens(a), shellTokens(b));
}

export function wordTokens(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
}

export function textScore(a: string, b: string): number {
  if (a.trim() === b.trim()) return 1;
  return jaccard(wordTokens(a), wordTokens(b));
}

function scoreValue(path: string, truth: unknown, emitted: unknown): ArgumentScore {
  if (typeof truth === 'string' && typeof emitted === 'string') {
    if (COMMAND_KEYS.test(path)) return { path, kind: 'command', score: commandScore(truth, emitted) };
    if (PATH_KEYS.test(path) || (looksLikePath(truth) && looksLikePath(emitted))) return { path, kind: 'path', score: pathScore(truth, emitted) };
    return { path, kind: 'text', score: textScore(truth, emitted) };
  }
  // Different JSON types, or scalars: equal or not (a number sent as its string counts as equal).
  const same = JSON.stringify(truth) === JSON.stringify(emitted) || (typeof truth !== 'object' && String(truth) === String(emitted));
  return { path, kind: 'scalar', score: same ? 1 : 0 };
}

/** A call's arguments as scored: argv lists joined, flattened to `path → leaf`. */
export function flatArguments(input: unknown): Map<string, unknown> {
  return flatten(joinCommands(argumentsOf(input)));
}

/** Per-argument fidelity of `emitted` against `truth` for calls with the same tool name. */
export function argumentFidelity(truth: unknown, emitted: unknown): { fidelity: number; arguments: ArgumentScore[] } {
  const a = flatArguments(truth);
  const b = flatArguments(emitted);
  const paths = [...new Set([...a.keys(), ...b.keys()])].sort();
  if (paths.length === 0) return { fidelity: 1, arguments: [] };
  const scores = paths.map((path) => (a.has(path) && b.has(path) ? scoreValue(path, a.get(path), b.get(path)) : { path, kind: 'absent' as const, score: 0 }));
  return { fidelity: scores.reduce((n, s) => n + s.score, 0) / scores.length, arguments: scores };
}

/** Scores one answer. `toolCalls` undefined/empty and `text` empty or null = missing. */
export function scoreAnswer(truth: GroundTruthCall, answer: { text: string | null; toolCalls?: readonly ToolCall[] | undefined } | null): CallScore {
  const calls = answer?.toolCalls ?? [];
  if (calls.length === 0) {
    const text = answer?.text ?? '';
    const status: CallStatus = text.trim() === '' ? 'missing' : 'prose';
    return { status, fidelity: null, nameMatch: null, emittedName: null, arguments: [], extraCalls: 0 };
  }
  const first = calls[0]!;
  const extraCalls = calls.length - 1;
  if (first.invalid !== undefined) {
    return { status: 'unparseable', fidelity: null, nameMatch: first.name === truth.name, emittedName: first.name, arguments: [], extraCalls };
  }
  if (first.name !== truth.name) {
    return { status: 'call', fidelity: 0, nameMatch: false, emittedName: first.name, arguments: [], extraCalls };
  }
  const { fidelity, arguments: args } = argumentFidelity(truth.input, first.input);
  return { status: 'call', fidelity, nameMatch: true, emittedName: first.name, arguments: args, extraCalls };
}
