/**
 * The error of class `type` that `fn` throws, for tests that check its fields
 * (file, line, field). Any other error is rethrown; no error at all fails with
 * "expected a <type name>".
 */
export function thrownBy<E extends Error>(fn: () => unknown, type: abstract new (...args: never[]) => E): E {
  try {
    fn();
  } catch (error) {
    if (error instanceof type) return error;
    throw error;
  }
  throw new Error(`expected a ${type.name}`);
}
