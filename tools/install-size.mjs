#!/usr/bin/env node
// Measures the production install of the packed tarball: how many packages and how many bytes of
// node_modules a user gets, and how long the install took.
//
//   node tools/install-size.mjs [--no-build] [--with-optional] [--json]
//
// Steps: `npm pack` of this repository (with `--no-build`, `npm pack --ignore-scripts`: the current
// dist/ is packed and nothing is rebuilt), the tarball unpacked into a scratch folder with this
// repository's package-lock.json beside it, then `npm ci --omit=dev --omit=optional --ignore-scripts
// --prefer-offline` there (`--with-optional` keeps the optional provider SDKs and pg). Scripts are
// skipped, so better-sqlite3 is not compiled: its native binary (about 2 MB) is not in the figures,
// but every package its install step brings is. Prints the figures (or JSON) and removes the folder.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = new Set(process.argv.slice(2));
const QUIET = ['--no-audit', '--no-fund', '--loglevel=error'];

function run(command, argv, cwd) {
  const r = spawnSync(command, argv, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false' } });
  if (r.status !== 0) {
    process.stderr.write(`install-size: ${command} ${argv.join(' ')} failed (exit ${r.status}):\n${r.stderr}${r.error?.message ?? ''}\n`);
    process.exit(1);
  }
  return r.stdout;
}

/** Bytes of every regular file under `dir` (symbolic links not followed). */
function bytesUnder(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += bytesUnder(path);
    else if (entry.isFile()) total += lstatSync(path).size;
  }
  return total;
}

/** Installed packages: every folder under node_modules (nested ones too) holding a package.json. */
function packagesUnder(modules) {
  let count = 0;
  if (!existsSync(modules)) return 0;
  for (const entry of readdirSync(modules, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const dirs = entry.name.startsWith('@') ? readdirSync(join(modules, entry.name)).map((n) => join(modules, entry.name, n)) : [join(modules, entry.name)];
    for (const dir of dirs) {
      if (existsSync(join(dir, 'package.json'))) count += 1;
      count += packagesUnder(join(dir, 'node_modules'));
    }
  }
  return count;
}

const work = mkdtempSync(join(tmpdir(), 'echolens-install-size-'));
try {
  run('npm', ['pack', '--pack-destination', work, ...(args.has('--no-build') ? ['--ignore-scripts'] : []), ...QUIET], root);
  const tarball = readdirSync(work).find((f) => /^echolens-.*\.tgz$/u.test(f));
  if (!tarball) throw new Error('npm pack wrote no echolens-*.tgz');
  const app = join(work, 'app');
  mkdirSync(app);
  run('tar', ['-xzf', join(work, tarball), '-C', app, '--strip-components=1'], work);
  cpSync(join(root, 'package-lock.json'), join(app, 'package-lock.json'));
  const omit = ['--omit=dev', ...(args.has('--with-optional') ? [] : ['--omit=optional'])];
  const started = process.hrtime.bigint();
  const out = run('npm', ['ci', ...omit, '--ignore-scripts', '--prefer-offline', ...QUIET.filter((a) => a !== '--loglevel=error')], app);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const npmCount = Number(/added (\d+) packages?/u.exec(out)?.[1] ?? Number.NaN);
  const modules = join(app, 'node_modules');
  const result = {
    optional: args.has('--with-optional'),
    packages: packagesUnder(modules),
    npmCount: Number.isFinite(npmCount) ? npmCount : null,
    nodeModulesBytes: bytesUnder(modules),
    ownBytes: bytesUnder(app) - bytesUnder(modules),
    installSeconds: Math.round(seconds * 10) / 10,
  };
  if (args.has('--json')) process.stdout.write(`${JSON.stringify(result)}\n`);
  else {
    const mb = (b) => `${(b / 1e6).toFixed(1)} MB`;
    process.stdout.write(
      `production install${result.optional ? ' (optional packages included)' : ' (optional packages omitted)'}: ${result.packages} packages` +
        `${result.npmCount === null ? '' : ` (npm: added ${result.npmCount})`}, node_modules ${mb(result.nodeModulesBytes)}, echolens itself ${mb(result.ownBytes)}, npm ci ${result.installSeconds} s\n`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
