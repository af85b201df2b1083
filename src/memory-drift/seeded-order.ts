import { sha256Hex } from '../core/canonical-json.js';

/** `items` ranked by the hash of (seed, salt, key): an item's place depends on nothing else, so a choice is stable when other items change. */
export function seededOrder<T>(items: readonly T[], seed: number, salt: string, keyOf: (item: T) => string): T[] {
  return items
    .map((item) => ({ item, rank: sha256Hex(`${seed}\u0001${salt}\u0001${keyOf(item)}`) }))
    .sort((a, b) => (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : 0))
    .map((entry) => entry.item);
}
