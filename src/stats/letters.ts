import { InvalidArgumentError, StatisticsError } from '../core/errors.js';

/**
 * Which pairs of groups differ significantly: either a list of `[nameA, nameB]` pairs (order
 * within a pair does not matter) or a predicate `(a, b) => boolean` that must be symmetric.
 */
export type SignificantPairs = ReadonlyArray<readonly [string, string]> | ((a: string, b: string) => boolean);

const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/**
 * Compact letter display by the insert-and-absorb algorithm with the sweeping step
 * (Piepho 2004, J. Comput. Graph. Stat. 13:456–466).
 *
 * Start with one letter shared by every group. For each significant pair (i, j), every letter
 * column holding both is split into a copy without i and a copy without j; columns contained in
 * another column are absorbed. The sweep then removes a group from a column whenever each of
 * the column's other groups still shares some other letter with it, and drops emptied or
 * absorbed columns. Result: two groups share a letter exactly when they are not significantly
 * different.
 *
 * Letters are assigned to columns in order of their first member in `names`, so the first
 * group (sort `names` by mean, highest first, to give it the top group) always gets 'a'.
 * Returns each group's letters, aligned with `names`. Up to 52 letters (a–z, A–Z).
 */
export function compactLetterDisplay(names: readonly string[], significant: SignificantPairs): string[] {
  if (!Array.isArray(names)) throw new InvalidArgumentError('names', 'expected an array of group names');
  if (names.length === 0) throw new StatisticsError('compactLetterDisplay: names is empty');
  const position = new Map<string, number>();
  names.forEach((name, i) => {
    if (typeof name !== 'string') throw new InvalidArgumentError(`names[${i}]`, 'must be a string');
    if (position.has(name)) throw new InvalidArgumentError(`names[${i}]`, `duplicate group name '${name}'`);
    position.set(name, i);
  });
  const k = names.length;
  const differs = significanceMatrix(names, position, significant);

  let columns: Set<number>[] = [new Set(names.map((_, i) => i))];
  for (let i = 0; i < k; i++) {
    for (let j = i + 1; j < k; j++) {
      if (!differs[i]?.[j]) continue;
      const next: Set<number>[] = [];
      for (const column of columns) {
        if (column.has(i) && column.has(j)) {
          const withoutJ = new Set(column);
          withoutJ.delete(j);
          const withoutI = new Set(column);
          withoutI.delete(i);
          next.push(withoutJ, withoutI);
        } else {
          next.push(column);
        }
      }
      columns = absorb(next);
    }
  }
  columns = sweep(columns);

  const keyed = columns.map((column) => [...column].sort((a, b) => a - b));
  keyed.sort(compareIndexLists);
  if (keyed.length > LETTERS.length) {
    throw new StatisticsError(`compactLetterDisplay: ${keyed.length} letters are needed; at most ${LETTERS.length} can be shown`);
  }
  const letters = names.map(() => '');
  keyed.forEach((members, c) => {
    for (const member of members) letters[member] += LETTERS[c] as string;
  });
  return letters;
}

function significanceMatrix(names: readonly string[], position: Map<string, number>, significant: SignificantPairs): boolean[][] {
  const k = names.length;
  const differs = names.map(() => new Array<boolean>(k).fill(false));
  if (typeof significant === 'function') {
    for (let i = 0; i < k; i++) {
      for (let j = i + 1; j < k; j++) {
        const a = names[i] as string;
        const b = names[j] as string;
        const ab = significant(a, b);
        const ba = significant(b, a);
        if (typeof ab !== 'boolean' || ab !== ba) {
          throw new InvalidArgumentError('significant', `predicate must return the same boolean for ('${a}', '${b}') and ('${b}', '${a}')`);
        }
        (differs[i] as boolean[])[j] = ab;
        (differs[j] as boolean[])[i] = ab;
      }
    }
    return differs;
  }
  if (!Array.isArray(significant)) {
    throw new InvalidArgumentError('significant', 'expected a list of [nameA, nameB] pairs or a predicate');
  }
  significant.forEach((pair, p) => {
    const a = Array.isArray(pair) ? position.get(pair[0]) : undefined;
    const b = Array.isArray(pair) ? position.get(pair[1]) : undefined;
    if (a === undefined || b === undefined) {
      throw new InvalidArgumentError(`significant[${p}]`, `names a group that is not in names: ${JSON.stringify(pair)}`);
    }
    if (a === b) throw new InvalidArgumentError(`significant[${p}]`, 'a group cannot differ from itself');
    (differs[a] as boolean[])[b] = true;
    (differs[b] as boolean[])[a] = true;
  });
  return differs;
}

function isSubset(small: Set<number>, large: Set<number>): boolean {
  if (small.size > large.size) return false;
  for (const member of small) if (!large.has(member)) return false;
  return true;
}

/** Drops empty columns, duplicates and columns contained in another column. */
function absorb(columns: Set<number>[]): Set<number>[] {
  const kept: Set<number>[] = [];
  columns.forEach((column, c) => {
    if (column.size === 0) return;
    const absorbed = columns.some((other, o) => o !== c && isSubset(column, other) && (column.size < other.size || o < c));
    if (!absorbed) kept.push(column);
  });
  return kept;
}

/** Piepho's sweep: remove redundant memberships while every non-significant pair stays connected. */
function sweep(columns: Set<number>[]): Set<number>[] {
  const working = columns.map((column) => new Set(column));
  for (const column of working) {
    for (const member of [...column]) {
      const others = [...column].filter((other) => other !== member);
      const elsewhere = working.filter((c) => c !== column && c.has(member));
      if (elsewhere.length === 0) continue;
      const redundant = others.every((other) => elsewhere.some((c) => c.has(other)));
      if (redundant) column.delete(member);
    }
  }
  return absorb(working);
}

function compareIndexLists(a: readonly number[], b: readonly number[]): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const d = (a[i] as number) - (b[i] as number);
    if (d !== 0) return d;
  }
  return a.length - b.length;
}
