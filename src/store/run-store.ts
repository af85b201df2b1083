import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { InputError, InvalidArgumentError } from '../core/errors.js';
import { noteStoreOpened, storeFaultOf } from './faults.js';
import { secretValuesFromEnv } from './keys.js';
import { PgRunStore } from './postgres/pg-store.js';
import { isPostgresUrl, type OpenStoreOptions, type RunStore as RunStoreInterface } from './run-store-common.js';
import { ensureSchema, READABLE_WITHOUT_MIGRATION, readSchemaVersion, SCHEMA_VERSION } from './schema.js';
import { SqliteExecutor } from './sql/executor.js';
import { SqlStore } from './sql/sql-store.js';
import { acquireStoreLock, releaseStoreLock } from './store-lock.js';
import { checkStorePath } from './store-path.js';

export * from './run-store-common.js';

/** A run store of either backend (the interface is in run-store-common.ts). */
export type RunStore = RunStoreInterface;

/** Opens a store by location: a `postgres://` / `postgresql://` URL or a SQLite file path. */
export const RunStore = {
  open(location: string, options?: OpenStoreOptions): RunStore {
    if (isPostgresUrl(location)) return PgRunStore.open(location, options);
    return SqliteRunStore.open(location, options);
  },
};

/**
 * The SQLite backend: a file, one writing process (store-lock.ts), better-sqlite3. Its queries
 * are the shared ones (sql/sql-store.ts); this class opens, checks or migrates (schema.ts),
 * locks and closes. Every write is its own transaction, so a result is on disk (WAL) as soon as
 * `recordResult` returns and survives SIGKILL.
 * API keys are never stored: requests and manifests are scrubbed of credential
 * fields and of any value equal to a credential-like environment variable.
 */
export class SqliteRunStore extends SqlStore {
  readonly backend = 'sqlite' as const;
  readonly db: Database.Database;

  /** A read-only open that found no -wal/-shm beside the file: remove the ones SQLite made. */
  private tidyOnClose = false;
  /** Holds the store's write lock (released by close). */
  private locked = false;

  private constructor(file: string, db: Database.Database, secrets: string[]) {
    const exec = new SqliteExecutor(db);
    super(file, exec, secrets);
    this.db = db;
    this.sqlite = exec;
  }

  private readonly sqlite: SqliteExecutor;

  static open(file: string, options: OpenStoreOptions = {}): SqliteRunStore {
    if (typeof file !== 'string' || file === '') throw new InvalidArgumentError('file', 'must be a store path');
    checkStorePath(file, options.readonly === true);
    let db: Database.Database;
    const sidecarsBefore = options.readonly === true && !existsSync(`${file}-wal`) && !existsSync(`${file}-shm`);
    // A new store's folder is made (`--db runs/x.db` in a fresh checkout); a reader never creates one.
    if (!options.readonly && file !== ':memory:' && !file.startsWith('file:')) mkdirSync(dirname(file), { recursive: true });
    // One writing process per store (see store-lock.ts); readers never lock.
    if (!options.readonly) acquireStoreLock(file);
    try {
      db = new Database(file, options.readonly ? { readonly: true, fileMustExist: true } : {});
    } catch (error) {
      if (!options.readonly) releaseStoreLock(file);
      throw storeFaultOf(error, file) ?? new InputError(`cannot open store: ${(error as Error).message}`, { file }, { cause: error });
    }
    try {
      if (!options.readonly) {
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = NORMAL');
      }
      db.pragma('busy_timeout = 5000');
      db.pragma('foreign_keys = ON');
      if (options.readonly) {
        // A read-only handle cannot create or migrate; it only checks.
        ensureReadable(db, file);
      } else {
        ensureSchema(db, file);
      }
    } catch (error) {
      db.close();
      if (!options.readonly) releaseStoreLock(file);
      const fault = storeFaultOf(error, file);
      if (fault) throw fault;
      if (error instanceof InputError) throw error;
      throw new InputError(`cannot use store: ${(error as Error).message}`, { file }, { cause: error });
    }
    noteStoreOpened(file);
    const store = new SqliteRunStore(file, db, secretValuesFromEnv(options.env ?? process.env));
    store.tidyOnClose = sidecarsBefore;
    store.locked = !options.readonly;
    return store;
  }

  async close(): Promise<void> {
    await this.sqlite.idle();
    if (!this.db.open) return;
    this.db.close();
    if (this.locked) releaseStoreLock(this.file);
    if (this.tidyOnClose && (existsSync(`${this.file}-wal`) || existsSync(`${this.file}-shm`))) {
      // A read-only connection to a WAL database creates -wal/-shm but may not remove them.
      // A plain connection opened and closed at once does: SQLite deletes them when the last
      // connection closes, and keeps them while any other process still has the store open.
      try {
        const tidy = new Database(this.file, { fileMustExist: true });
        tidy.pragma('schema_version'); // a read, so SQLite attaches to the WAL and can drop it on close
        tidy.close();
      } catch {
        // A store in a read-only folder: nothing was created there either.
      }
    }
  }
}

/** Opens a store: a `postgres://` / `postgresql://` URL is a PostgreSQL store, anything else a SQLite file. */
export function openStore(file: string, options?: OpenStoreOptions): RunStore {
  return RunStore.open(file, options);
}

function ensureReadable(db: Database.Database, file: string): void {
  const applicationId = db.pragma('application_id', { simple: true }) as number;
  if (applicationId === 0) {
    throw new InputError('not an echolens run store (empty or foreign SQLite database)', { file });
  }
  // Migration needs a writable handle; ensureSchema refuses newer versions and foreign files.
  ensureSchemaReadOnly(db, file);
}

function ensureSchemaReadOnly(db: Database.Database, file: string): void {
  // A store one additive migration behind reads as it is (a v2 store simply has no blobs to resolve).
  const version = readSchemaVersion(db, file);
  if (version >= READABLE_WITHOUT_MIGRATION && version < SCHEMA_VERSION) return;
  try {
    ensureSchema(db, file);
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(`store schema version ${version} needs a migration first: run \`echolens runs migrate ${file}\``, { file }, { cause: error });
  }
}
