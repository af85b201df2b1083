import { InputError } from '../../core/errors.js';
import { secretValuesFromEnv } from '../keys.js';
import type { OpenStoreOptions, RunStatus } from '../run-store-common.js';
import { PgExecutor } from '../sql/executor.js';
import { SqlStore } from '../sql/sql-store.js';
import { PgClient, PgError } from './pg-client.js';
import { ensurePgSchema } from './schema.js';
import { SharedWork } from './shared-work.js';

/**
 * The PostgreSQL backend of `RunStore`: the same tables, rules, answers and queries as the
 * SQLite backend (sql/sql-store.ts: each query written once), on a database that several
 * processes share; this class opens, checks or migrates (schema.ts) and closes. Every call is asynchronous over a `pg.Pool`
 * (pg-client.ts): a round trip never holds the event loop. What only sharing needs
 * (leases, shared budget and rate limits) is in `shared` (shared-work.ts).
 *
 * The connection string is never stored; `file` shows it without its password.
 */
export class PgRunStore extends SqlStore {
  readonly backend = 'postgres' as const;
  readonly client: PgClient;
  readonly shared: SharedWork;
  readonly readonly: boolean;

  private constructor(url: string, client: PgClient, secrets: string[], readonly: boolean) {
    super(redactUrl(url), new PgExecutor(client, readonly, redactUrl(url)), secrets);
    this.client = client;
    this.readonly = readonly;
    this.shared = new SharedWork(this);
  }

  /**
   * Opens the store without waiting: the connection and the schema check (create,
   * migrate or refuse) start at once, and every call waits for them, so a store that
   * cannot be used fails its first call with the reason. `connect` waits for them.
   */
  static open(url: string, options: OpenStoreOptions & { retryForMs?: number; poolSize?: number } = {}): PgRunStore {
    const client = new PgClient(url, { retryForMs: options.retryForMs ?? 60_000, ...(options.poolSize ? { max: options.poolSize } : {}) });
    const shown = redactUrl(url);
    const ready = ensurePgSchema(client.raw(), shown, options.readonly === true).catch((error: unknown) => {
      if (error instanceof InputError) throw error;
      throw new InputError(`cannot use store: ${(error as Error).message}`, { file: shown }, { cause: error });
    });
    client.setGate(ready);
    const store = new PgRunStore(url, client, secretValuesFromEnv(options.env ?? process.env), options.readonly === true);
    store.ready = ready;
    return store;
  }

  /** Opens the store and waits until it is usable (throws the reason when it is not; the pool is closed then). */
  static async connect(url: string, options: OpenStoreOptions & { retryForMs?: number; poolSize?: number } = {}): Promise<PgRunStore> {
    const store = PgRunStore.open(url, options);
    try {
      await store.ready;
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  /** Settles when the connection and schema check are done. */
  ready: Promise<void> = Promise.resolve();

  async close(): Promise<void> {
    await this.client.close();
  }

  /** Waiting workers wake up (LISTEN echolens_work) when a run is set running. */
  protected override async statusWritten(runId: string, status: RunStatus): Promise<void> {
    if (status === 'running') await this.client.query('SELECT pg_notify($1, $2)', [WORK_CHANNEL, runId]);
  }

  /** Waiting workers wake up when the registering transaction commits. */
  protected override async cellsRegistered(runId: string): Promise<void> {
    await this.client.query('SELECT pg_notify($1, $2)', [WORK_CHANNEL, runId]);
  }
}

/** The channel on which a store announces claimable work (registered cells, a run set running, reopened cells). */
export const WORK_CHANNEL = 'echolens_work';

/** A connection string as shown in messages and listings: the password replaced. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    for (const name of [...parsed.searchParams.keys()]) if (/pass|secret|key|token/i.test(name)) parsed.searchParams.set(name, '***');
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@');
  }
}

export { PgError };
