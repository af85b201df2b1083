/**
 * The value a map holds under `key`, or the one `create` makes, stored first (what the proposed
 * `Map.prototype.getOrInsertComputed` does). For Maps and WeakMaps whose values are never undefined.
 */
export function getOrInsert<K, V>(map: { get(key: K): V | undefined; set(key: K, value: V): unknown }, key: K, create: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = create();
    map.set(key, value);
  }
  return value;
}
