import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../core/version.js';

function echolens(args: string[], env: NodeJS.ProcessEnv = {}) {
  const { ECHOLENS_DB: _unset, ...rest } = process.env;
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: packageRoot(), encoding: 'utf8', env: { ...rest, ...env } });
}

describe('echolens worker', () => {
  it('needs a PostgreSQL store: no --db, or a SQLite file, is a usage error (exit 2) that says so', () => {
    const none = echolens(['worker']);
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/needs --db <postgres url> \(or ECHOLENS_DB\)/);
    expect(none.stderr).not.toMatch(/\n\s+at /); // no stack trace
    const sqlite = echolens(['worker', '--db', 'runs/some.db']);
    expect(sqlite.status).toBe(2);
    expect(sqlite.stderr).toMatch(/works a shared PostgreSQL store/);
  }, 60_000);
});
