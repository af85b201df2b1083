import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresForTests, startTestCluster, type TestCluster } from '../postgres/testing/cluster.js';

/**
 * The store backends a test runs against (`describe.each(storeBackends())`): a SQLite file,
 * and a database of a throwaway PostgreSQL cluster (skipped with a message where no server
 * binary exists; an error in CI). `setup` in `beforeAll`, `teardown` in `afterAll`;
 * `location(name)` is a fresh store each time (a file path or a postgresql:// URL), for
 * `openStore` / `RunStore.open` in the test or in a child process.
 */
export interface StoreBackend {
  name: 'sqlite' | 'postgres';
  /** False when the backend cannot run here (no PostgreSQL server): skip the suite. */
  available: boolean;
  setup(): Promise<void>;
  teardown(): void;
  location(name: string): string;
  /** A folder for the test's own files (logs, configs). */
  readonly dir: string;
}

export function storeBackends(): StoreBackend[] {
  return [sqliteBackend(), postgresBackend()];
}

function sqliteBackend(): StoreBackend {
  let dir = '';
  return {
    name: 'sqlite',
    available: true,
    async setup() {
      dir = mkdtempSync(join(tmpdir(), 'echolens-sqlite-'));
    },
    teardown() {
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
    location: (name) => join(dir, `${name}.db`),
    get dir() {
      return dir;
    },
  };
}

function postgresBackend(): StoreBackend {
  const bin = postgresForTests();
  let cluster: TestCluster | undefined;
  let dir = '';
  let count = 0;
  return {
    name: 'postgres',
    available: bin !== null,
    async setup() {
      dir = mkdtempSync(join(tmpdir(), 'echolens-pgtest-'));
      cluster = await startTestCluster(bin!);
    },
    teardown() {
      cluster?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
    location: (name) => cluster!.createDatabase(`${name.toLowerCase().replace(/[^a-z0-9_]/g, '_')}_${++count}`),
    get dir() {
      return dir;
    },
  };
}
