import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/canonical-json.js';
import { getOrInsert } from '../core/get-or-insert.js';
import type { BatchLineResult, InvalidResultLine } from '../models/batch/index.js';

/**
 * What a results file says about each cell of a job, read strictly (pure; no I/O).
 *
 * A provider may repeat a line (a retried upload, a download that overlaps). An exact
 * repeat says nothing new and is dropped. Two different lines for one custom_id — two
 * different answers, or a success and an error — leave the cell's result unknown: the
 * cell fails with the reason, so a re-run asks again, and no line silently wins.
 */
export type LineVerdict =
  | { kind: 'line'; line: BatchLineResult }
  | { kind: 'conflict'; reason: string }
  | { kind: 'unreadable'; reason: string }
  | { kind: 'missing' };

export interface SettledLines {
  verdictOf(customId: string): LineVerdict;
  /** Exact repeats dropped. */
  duplicates: number;
  /** custom_ids with conflicting lines. */
  conflicts: string[];
  /** Lines naming a custom_id the job does not hold. */
  foreign: number;
  /** Drops a cell's line once its outcome is committed (its body is then free to be collected). */
  release(customId: string): void;
}

export function settleLines(keys: readonly string[], lines: readonly BatchLineResult[], invalid: readonly InvalidResultLine[]): SettledLines {
  const held = new Set(keys);
  // Each line's canonical form is kept as a digest: comparing two lines needs no copy of their bodies.
  const seen = new Map<string, { line: BatchLineResult | null; digest: string }>();
  const conflicting = new Map<string, BatchLineResult[]>();
  let duplicates = 0;
  let foreign = 0;
  for (const line of lines) {
    if (!held.has(line.customId)) {
      foreign += 1;
      continue;
    }
    const digest = createHash('sha256').update(canonicalJson(line)).digest('base64');
    const first = seen.get(line.customId);
    if (first === undefined) {
      seen.set(line.customId, { line, digest });
    } else if (first.digest === digest) {
      duplicates += 1;
    } else {
      getOrInsert(conflicting, line.customId, () => [first.line!]).push(line);
    }
  }
  const unreadable = new Map<string, InvalidResultLine>();
  for (const bad of invalid) if (bad.customId !== undefined && held.has(bad.customId)) unreadable.set(bad.customId, bad);
  // An unreadable line naming no custom_id may be any cell that has no readable line.
  const anonymous = invalid.find((bad) => bad.customId === undefined || !held.has(bad.customId));

  return {
    duplicates,
    conflicts: [...conflicting.keys()],
    foreign,
    release(customId) {
      const found = seen.get(customId);
      if (found !== undefined) found.line = null;
    },
    verdictOf(customId) {
      const conflict = conflicting.get(customId);
      if (conflict !== undefined) return { kind: 'conflict', reason: conflictReason(conflict) };
      const bad = unreadable.get(customId);
      if (bad !== undefined) return { kind: 'unreadable', reason: `${bad.source} line ${bad.line} (this cell's result) is not JSON` };
      const found = seen.get(customId);
      if (found?.line) return { kind: 'line', line: found.line };
      if (anonymous !== undefined) return { kind: 'unreadable', reason: `no readable result; ${anonymous.source} line ${anonymous.line} is not JSON` };
      return { kind: 'missing' };
    },
  };
}

function conflictReason(lines: readonly BatchLineResult[]): string {
  const kinds = lines.map((line) => line.kind);
  const distinct = [...new Set(kinds)];
  const what = distinct.length === 1 ? `${lines.length} different ${distinct[0]} lines` : `${lines.length} lines that disagree (${kinds.join(', ')})`;
  return `the batch results hold ${what} for this cell; none is trusted (a re-run asks again)`;
}
