import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';

export interface TempDir {
  /** The directory's path (only while the tests that own it run). */
  readonly path: string;
}

/**
 * A temporary directory named `prefix…`, made before the calling file's tests (`file`, the
 * default) or before each test (`test`), and removed with its contents after them.
 */
export function useTempDir(prefix: string, scope: 'file' | 'test' = 'file'): TempDir {
  let path: string | undefined;
  const make = async () => {
    path = await mkdtemp(join(tmpdir(), prefix));
  };
  const remove = async () => {
    if (path !== undefined) await rm(path, { recursive: true, force: true });
    path = undefined;
  };
  if (scope === 'test') {
    beforeEach(make);
    afterEach(remove);
  } else {
    beforeAll(make);
    afterAll(remove);
  }
  return {
    get path(): string {
      if (path === undefined) throw new Error(`temporary directory ${prefix}… used outside its tests`);
      return path;
    },
  };
}
