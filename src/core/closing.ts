/** Runs `use` with a resource (a run store, …) and closes it afterwards, whether `use` returns or throws. */
export async function closing<R extends { close(): Promise<void> }, T>(resource: R, use: (resource: R) => Promise<T>): Promise<T> {
  try {
    return await use(resource);
  } finally {
    await resource.close();
  }
}
