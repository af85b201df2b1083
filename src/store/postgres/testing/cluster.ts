import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A throwaway PostgreSQL cluster for tests: `initdb` into a temporary folder, `pg_ctl`
 * on a free port of 127.0.0.1 with trust authentication, torn down (and deleted) by
 * `stop()`. PostgreSQL refuses to run as root, so when the tests run as root the
 * server commands run as the `postgres` OS user (`runuser -u postgres --`) and the
 * folder is handed to that user.
 *
 * Where no server binary exists, `findPostgresBin()` returns null and the suites skip
 * with a visible message — except in CI (`CI=true`), where a missing server is an error:
 * CI installs PostgreSQL (.ci/run), so a skip there would hide a broken setup.
 */

export interface TestCluster {
  url: string;
  port: number;
  dataDir: string;
  /** A fresh empty database in the cluster; returns its URL. */
  createDatabase(name: string): string;
  /** Stops the server (fast shutdown: connections are cut) without deleting anything. */
  pause(): void;
  /** Starts it again after `pause()`. */
  resume(): void;
  stop(): void;
}

const CANDIDATE_ROOTS = ['/usr/lib/postgresql', '/usr/local/pgsql', '/opt/homebrew/opt/postgresql/bin'];

/** The folder holding `initdb`, `pg_ctl` and `postgres`, or null. `ECHOLENS_PG_BIN` overrides. */
export function findPostgresBin(): string | null {
  const override = process.env.ECHOLENS_PG_BIN;
  if (override) return existsSync(join(override, 'pg_ctl')) ? override : null;
  for (const root of CANDIDATE_ROOTS) {
    if (!existsSync(root)) continue;
    if (existsSync(join(root, 'pg_ctl'))) return root;
    if (existsSync(join(root, 'bin', 'pg_ctl'))) return join(root, 'bin');
    const versions = readdirSync(root)
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    for (const version of versions) {
      const bin = join(root, version, 'bin');
      if (existsSync(join(bin, 'pg_ctl'))) return bin;
    }
  }
  const which = spawnSync('sh', ['-c', 'command -v pg_ctl'], { encoding: 'utf8' });
  const found = which.status === 0 ? which.stdout.trim() : '';
  return found ? join(found, '..') : null;
}

/**
 * The bin folder, or null after printing why the PostgreSQL tests skip. Throws in CI
 * (`CI=true`), where they must run.
 */
export function postgresForTests(): string | null {
  const bin = findPostgresBin();
  if (bin !== null) return bin;
  const message =
    'PostgreSQL tests: no server binary found (looked in /usr/lib/postgresql/*/bin, $ECHOLENS_PG_BIN and PATH); install it with `apt-get install -y postgresql`';
  if (process.env.CI === 'true') throw new Error(`${message} — CI must run these tests`);
  console.warn(`SKIPPED: ${message}`);
  return null;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function asServerUser(bin: string, command: string, args: string[]): string {
  const executable = join(bin, command);
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const [file, argv] = root ? ['runuser', ['-u', 'postgres', '--', executable, ...args]] : [executable, args];
  return execFileSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Starts a throwaway cluster; call `stop()` when done (also on failure). */
export async function startTestCluster(bin: string): Promise<TestCluster> {
  const root = mkdtempSync(join(tmpdir(), 'echolens-pg-'));
  const dataDir = join(root, 'data');
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(root, uid, gid);
  }
  asServerUser(bin, 'initdb', ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '--locale=C', '-E', 'UTF8', '--no-sync']);
  const port = await freePort();
  const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -F -c max_connections=200`;
  const start = () => asServerUser(bin, 'pg_ctl', ['-D', dataDir, '-o', options, '-l', join(root, 'server.log'), '-w', '-t', '60', 'start']);
  start();
  const url = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  let stopped = false;
  return {
    url,
    port,
    dataDir,
    createDatabase(name: string) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad database name ${name}`);
      asServerUser(bin, 'psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', 'postgres', '-q', '-c', `CREATE DATABASE ${name}`]);
      return `postgresql://postgres@127.0.0.1:${port}/${name}`;
    },
    pause() {
      asServerUser(bin, 'pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', 'stop']);
    },
    resume() {
      start();
    },
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        asServerUser(bin, 'pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // Already down.
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}
