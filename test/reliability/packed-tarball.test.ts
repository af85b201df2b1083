import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/core/version.js';

/**
 * What a user of the published package gets: `npm pack` (which builds dist/ through `prepare`),
 * the tarball installed into an empty folder, then `npx echolens demo` there. npm reads its
 * cache first (--prefer-offline) and reaches the registry only for what the cache lacks; the
 * better-sqlite3 install compiles from source when no prebuilt binary can be downloaded, which
 * takes minutes on a small machine, hence the generous timeout.
 */

const NPM_QUIET = ['--no-audit', '--no-fund', '--loglevel=error'];

function run(command: string, args: readonly string[], cwd: string, timeoutMs: number) {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: timeoutMs, env: { ...process.env, npm_config_update_notifier: 'false' } });
  return { code: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '', error: result.error };
}

describe('the packed tarball', { timeout: 40 * 60_000 }, () => {
  it('installs into an empty folder and runs the demo there', () => {
    const work = mkdtempSync(join(tmpdir(), 'echolens-packed-'));
    const packed = run('npm', ['pack', '--pack-destination', work, ...NPM_QUIET], packageRoot(), 15 * 60_000);
    expect(packed.code, packed.stderr).toBe(0);
    const tarball = readdirSync(work).find((f) => /^echolens-.*\.tgz$/u.test(f));
    expect(tarball).toBeDefined();

    const app = join(work, 'app');
    const created = run('mkdir', ['-p', app], work, 10_000);
    expect(created.code).toBe(0);
    writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name: 'empty-folder', version: '1.0.0', private: true }, null, 2)}\n`);
    const installed = run('npm', ['install', '--prefer-offline', ...NPM_QUIET, join(work, tarball as string)], app, 30 * 60_000);
    expect(installed.code, `${installed.stderr}${installed.error?.message ?? ''}`).toBe(0);
    expect(existsSync(join(app, 'node_modules', '.bin', 'echolens'))).toBe(true);

    const demo = run('npx', ['--no-install', 'echolens', 'demo', '--out-dir', 'echolens-demo'], app, 10 * 60_000);
    expect(demo.code, demo.stderr).toBe(0);
    expect(demo.stdout).toMatch(/report/u);
    const out = readdirSync(join(app, 'echolens-demo'));
    expect(out.some((f) => f.endsWith('.db'))).toBe(true);
    expect(out.some((f) => f.endsWith('.html'))).toBe(true);
  });
});
