import { pythonRepr } from '../materials/driftlens.js';
import type { ToolCall } from '../models/types.js';
import type { GroundTruthCall } from './cutpoints.js';
import { argumentsOf } from './tools.js';

/**
 * The ContextEcho authors' continuation scoring, written here from its definition
 * (docs/replication.md (DriftLens section), "Continuation"): `procedure: reference` reports it next to
 * echolens's calibrated fidelity (scoring.ts), which stays the verdict.
 *
 * - Tool match (their M1): the first emitted call names the recorded tool; no call = no match.
 * - Argument similarity (their M2, `jaccard_args`): defined only for a matching tool. Each
 *   argument object becomes a set of tokens — nested objects extend the key with `.`; a list
 *   item i gives `key[i]=<item as Python prints it>`; any other value is printed as Python
 *   prints it and gives `key=<text>` when the text has at most 50 characters, else one
 *   `key~<chunk>` per consecutive 4-character chunk (a shorter tail is dropped). Similarity =
 *   |A ∩ B| / |A ∪ B|, and 1 when both sets are empty.
 *
 * Where a JSON value has no Python twin the printing follows Python's `str` of the parsed value:
 * strings as they are, `True`/`False`/`None`, integers as digits; a JSON number written `1.0`
 * is the integer 1 once parsed here (Python would print `1.0`), the one known divergence.
 */

/** Python's str() of a parsed JSON value: a string as it is, anything else as repr(). */
function pythonStr(value: unknown): string {
  return typeof value === 'string' ? value : pythonRepr(value);
}

const LONG_VALUE = 50;
const CHUNK = 4;

export function referenceArgumentTokens(args: Record<string, unknown>, prefix = '', out: Set<string> = new Set()): Set<string> {
  for (const [key, value] of Object.entries(args)) {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      referenceArgumentTokens(value as Record<string, unknown>, `${prefix}${key}.`, out);
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => {
        out.add(`${prefix}${key}[${i}]=${pythonStr(item)}`);
      });
    } else {
      // Python counts characters as code points.
      const text = Array.from(pythonStr(value));
      if (text.length > LONG_VALUE) {
        for (let i = 0; i + CHUNK <= text.length; i += CHUNK) out.add(`${prefix}${key}~${text.slice(i, i + CHUNK).join('')}`);
      } else {
        out.add(`${prefix}${key}=${text.join('')}`);
      }
    }
  }
  return out;
}

/** The authors' argument similarity of two argument objects, in [0, 1]. */
export function jaccardArgs(a: Record<string, unknown>, b: Record<string, unknown>): number {
  const x = referenceArgumentTokens(a);
  const y = referenceArgumentTokens(b);
  if (x.size === 0 && y.size === 0) return 1;
  let both = 0;
  for (const token of x) if (y.has(token)) both += 1;
  return both / Math.max(x.size + y.size - both, 1);
}

export interface ReferenceCallScore {
  /** The first call names the recorded tool (false without a call). */
  toolMatch: boolean;
  /** jaccard_args against the recorded arguments when the tool matches, else null. */
  argSimilarity: number | null;
}

/**
 * The authors' score of one answer. A call whose arguments did not parse is scored on its name
 * with empty arguments (their client never returns one).
 */
export function referenceCallScore(truth: GroundTruthCall, toolCalls: readonly ToolCall[] | undefined): ReferenceCallScore {
  const first = toolCalls?.[0];
  if (first === undefined || first.name !== truth.name) return { toolMatch: false, argSimilarity: null };
  const emitted = first.invalid === undefined ? argumentsOf(first.input) : {};
  return { toolMatch: true, argSimilarity: jaccardArgs(emitted, truth.input === null || truth.input === undefined ? {} : argumentsOf(truth.input)) };
}
