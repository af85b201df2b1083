import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/core/version.js';

/**
 * Issue #45's install budget: the packed tarball installed with `--omit=dev` and the optional
 * provider SDKs absent is at most 120 packages and 150 MB of node_modules (tools/install-size.mjs;
 * npm ci from the cache, scripts skipped). The figures are in docs/install.md.
 */
describe('the production install', { timeout: 15 * 60_000 }, () => {
  it('is at most 120 packages and 150 MB with the optional packages omitted', () => {
    const r = spawnSync(process.execPath, [join(packageRoot(), 'tools', 'install-size.mjs'), '--no-build', '--json'], {
      encoding: 'utf8',
      timeout: 14 * 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout.trim()) as { packages: number; npmCount: number | null; nodeModulesBytes: number };
    expect(result.packages).toBeGreaterThan(10);
    expect(result.packages).toBeLessThanOrEqual(120);
    if (result.npmCount !== null) expect(result.npmCount).toBeLessThanOrEqual(120);
    expect(result.nodeModulesBytes).toBeLessThanOrEqual(150e6);
  });
});
