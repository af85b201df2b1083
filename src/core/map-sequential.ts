/**
 * Maps with an async function one item at a time, in order. Reports and gates read
 * one run after another: running them side by side would hold every run's cells in
 * memory at once and interleave stateful steps (a history's "previous model").
 */
export async function mapSequential<T, U>(items: Iterable<T>, fn: (item: T, index: number) => Promise<U>): Promise<U[]> {
  const out: U[] = [];
  let index = 0;
  for (const item of items) {
    out.push(await fn(item, index));
    index += 1;
  }
  return out;
}
