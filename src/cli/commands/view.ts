import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { type Command, Option } from 'commander';
import { registerBuiltinSimProfiles } from '../../builtin-sims.js';
import { checkedNumber, collect } from '../options.js';
import { DISCOVERY_FOLDERS, discoverStores, discoveryLines } from '../view-discover.js';
import { InputError, InvalidArgumentError } from '../../core/errors.js';
import { packageRoot } from '../../core/version.js';
import { createAdapter } from '../../models/create-adapter.js';
import '../../store/replay.js';
import { isLoopbackHost } from '../../report/viewer/security.js';
import { startViewer } from '../../report/viewer/server.js';
import { readSession } from '../../sessions/read.js';
import type { Session } from '../../sessions/types.js';
import { openStore, type RunStore } from '../../store/run-store.js';

const OPEN_WHEN = ['auto', 'always', 'never'] as const;

export const BUNDLED_DEMO_SESSION = (): string => join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');

export function registerView(program: Command): void {
  program
    .command('view')
    .description('local web viewer: browse runs and cells, compare runs, and the live probe (one persona-drift probe, side by side in three contexts)')
    .argument('[run.db...]', `run stores to browse (opened read-only; default: the stores found under ${DISCOVERY_FOLDERS.map((f) => `./${f}`).join(' and ')})`)
    .addOption(new Option('--session <file>', 'transcript offered in the live probe; repeatable').argParser(collect).default([], 'the bundled demo session'))
    .option('--target <model>', 'model the live probe asks', 'sim:persona')
    .option('--judge <model>', 'judge model of the live probe', 'sim:judge')
    .option('--positions <n>', 'positions offered per session in the live probe (uniform)', '10')
    .option('--port <n>', 'port (0 = any free port)', '4317')
    .option('--host <address>', 'address to bind; anything but loopback exposes your runs and API keys to the network', '127.0.0.1')
    .option('--open-browser <when>', `open the page in a browser: ${OPEN_WHEN.join(', ')}`, 'auto')
    .addHelpText(
      'after',
      '\nThe viewer reads only the stores and sessions named here (fixed at startup), refuses requests from other\norigins, and needs a per-process token (embedded in its pages) for anything that calls a model.\nWithout --target the live probe uses sim: models — simulations that measure nothing. Stop with Ctrl-C.\nThe live probe is the page /probe (POST /api/probe); /demo and /api/demo, its old names, still work.',
    )
    .action(async (dbs: string[], options) => {
      const port = checkedNumber('--port', (n) => Number.isInteger(n) && n >= 0 && n <= 65_535, 'an integer 0..65535')(options.port);
      const positions = checkedNumber('--positions', (n) => Number.isInteger(n) && n >= 1 && n <= 100, 'an integer 1..100')(options.positions);
      if (!(OPEN_WHEN as readonly string[]).includes(options.openBrowser)) {
        throw new InvalidArgumentError('--open-browser', `must be one of ${OPEN_WHEN.join(', ')}, got "${options.openBrowser}"`);
      }
      const host = String(options.host);
      registerBuiltinSimProfiles();
      const target = createAdapter(options.target);
      const judge = createAdapter(options.judge);
      const sessionFiles: string[] = options.session.length > 0 ? options.session : [BUNDLED_DEMO_SESSION()];
      const sessions: Session[] = [];
      for (const file of sessionFiles) {
        try {
          sessions.push(await readSession(file));
        } catch (error) {
          if (error instanceof InputError) throw error;
          throw new InputError(`cannot read session: ${(error as Error).message}`, { file });
        }
      }
      if (dbs.length === 0) {
        const found = discoverStores(process.cwd());
        process.stdout.write(`${discoveryLines(found).join('\n')}\n`);
        dbs = found.files;
      }
      const stores: Array<{ file: string; store: RunStore }> = [];
      try {
        // store.file: the location as shown (a PostgreSQL URL without its password).
        for (const file of dbs) {
          const store = openStore(file, { readonly: true });
          stores.push({ file: store.file, store });
        }
      } catch (error) {
        for (const s of stores) await s.store.close();
        throw error;
      }
      if (!isLoopbackHost(host)) {
        process.stderr.write(
          `\n!!! WARNING: binding to ${host}, not 127.0.0.1. Anyone who can reach this address can read every run,\n!!! transcript and response in these stores${target.provider === 'sim' && judge.provider === 'sim' ? '' : `, and make the live probe call ${options.target} / ${options.judge} on YOUR API keys`}.\n!!! Use --host only on a network you trust.\n\n`,
        );
      }
      const viewer = await startViewer({ stores, sessions, target, judge, host, port, positions });
      const simulated = target.provider === 'sim' || judge.provider === 'sim';
      process.stdout.write(
        [
          `echolens viewer: ${viewer.url}`,
          `  stores: ${dbs.length === 0 ? '(none — the run list is empty; see above for how to make one)' : dbs.join(', ')}`,
          `  live probe: ${viewer.url}probe — target ${options.target}, judge ${options.judge}${simulated ? ' (SIMULATED: measures no real model)' : ''}`,
          '  Ctrl-C to stop.',
        ].join('\n') + '\n',
      );
      if (options.openBrowser === 'always' || (options.openBrowser === 'auto' && process.stdout.isTTY && hasDesktop())) openBrowser(viewer.url);
      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolve();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      await viewer.close();
    });
}

function hasDesktop(): boolean {
  if (process.platform === 'darwin' || process.platform === 'win32') return true;
  return Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
}

function openBrowser(url: string): void {
  const command = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  try {
    const child = spawn(command, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => process.stderr.write(`could not start ${command}; open ${url} yourself\n`));
    child.unref();
  } catch {
    process.stderr.write(`could not start ${command}; open ${url} yourself\n`);
  }
}
