import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { InputError } from '../core/errors.js';
import { isDamagedStore } from './faults.js';
import { openStore } from './run-store.js';
import { APPLICATION_ID, readSchemaVersion, SCHEMA_VERSION } from './schema.js';

/**
 * `echolens runs check` and `echolens runs migrate`: the store's own health
 * check (SQLite's integrity check plus echolens's marks) and the explicit
 * migration a read-only command asks for when a store is too old to read.
 */

export interface StoreCheck {
  file: string;
  ok: boolean;
  /** What is wrong, one line each (empty when ok). */
  findings: string[];
  schemaVersion: number | null;
}

/** At most this many lines of `PRAGMA integrity_check` are reported. */
const MAX_FINDINGS = 100;

/** Checks a store file without changing it: SQLite's integrity check, the echolens mark and the schema version. */
export function checkStore(file: string): StoreCheck {
  if (!existsSync(file)) throw new InputError('no such store', { file });
  const findings: string[] = [];
  let schemaVersion: number | null = null;
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const rows = db.prepare(`PRAGMA integrity_check(${MAX_FINDINGS})`).pluck().all() as string[];
    if (!(rows.length === 1 && rows[0] === 'ok')) findings.push(...rows.map((r) => `integrity: ${r}`));
    const applicationId = db.pragma('application_id', { simple: true }) as number;
    if (applicationId !== APPLICATION_ID) findings.push('not marked as an echolens run store (application_id)');
    else {
      try {
        schemaVersion = readSchemaVersion(db, file);
        if (schemaVersion > SCHEMA_VERSION) findings.push(`schema version ${schemaVersion} is newer than this echolens (${SCHEMA_VERSION})`);
      } catch (error) {
        findings.push(`schema: ${(error as Error).message}`);
      }
    }
  } catch (error) {
    if (!isDamagedStore(error) && !(error instanceof Error && /malformed|not a database|corrupt/iu.test(error.message))) throw error;
    findings.push(`unreadable: ${(error as Error).message}`);
  } finally {
    db?.close();
  }
  return { file, ok: findings.length === 0, findings, schemaVersion };
}

/** Migrates a store to this echolens's schema (no-op when current); returns the versions before and after. */
export async function migrateStore(file: string): Promise<{ file: string; from: number; to: number }> {
  if (!existsSync(file)) throw new InputError('no such store', { file });
  let versionBefore = SCHEMA_VERSION;
  const raw = new Database(file, { readonly: true, fileMustExist: true });
  try {
    if ((raw.pragma('application_id', { simple: true }) as number) === APPLICATION_ID) versionBefore = readSchemaVersion(raw, file);
  } catch (error) {
    if (!isDamagedStore(error)) throw error;
  } finally {
    raw.close();
  }
  // Opening for writing migrates (schema.ts), and refuses a foreign, damaged or newer file with a clear error.
  await openStore(file).close();
  return { file, from: versionBefore, to: SCHEMA_VERSION };
}
