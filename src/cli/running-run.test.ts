import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { runPersona } from '../persona-drift/run.js';
import { smallPersonaConfig } from '../persona-drift/testing/small-config.js';
import { EXIT } from './exit-codes.js';
import { runCliInProcess } from './testing/run-cli.js';

/**
 * A report or gate asked of a run another process is still running names that process and the
 * progress, with an exit code of its own (4), instead of "re-run the same command to finish".
 */
describe('a run in progress in another process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'echolens-running-'));
  const db = join(dir, 'run.db');
  let other: ChildProcess;

  beforeAll(async () => {
    registerBuiltinSimProfiles();
    // A stopped run: its stages are incomplete, as while a run is under way.
    const stop = new AbortController();
    stop.abort();
    await runPersona(smallPersonaConfig({}), db, { progress: false, signal: stop.signal });
    // Another live process holds the store's write lock, as a running `persona run` does.
    other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    writeFileSync(`${db}.lock`, JSON.stringify({ pid: other.pid, host: hostname(), started: new Date().toISOString() }));
  }, 120_000);
  afterAll(() => {
    other?.kill();
  });

  for (const args of [
    ['report', 'DB', '--format', 'md'],
    ['gate', 'DB'],
    ['persona', 'report', 'DB'],
  ]) {
    it(`echolens ${args[0]}${args[0] === 'persona' ? ' report' : ''} says it is running, exit ${EXIT.running}`, async () => {
      const r = await runCliInProcess(args.map((a) => (a === 'DB' ? db : a)));
      expect(r.stderr).toMatch(new RegExp(`is running in process ${other.pid} on \\S+: \\d+ of \\d+ cells; run \`echolens runs list .*\` to follow`, 'u'));
      expect(r.stderr).not.toMatch(/re-run the same command/u);
      expect(r.code).toBe(EXIT.running);
    });
  }

  it('once the process is gone, the run is incomplete again (re-run to finish), exit 2', async () => {
    other.kill();
    await new Promise((resolve) => other.once('exit', resolve));
    const r = await runCliInProcess(['report', db, '--format', 'md']);
    expect(r.code).toBe(EXIT.usage);
    expect(r.stderr).toMatch(/incomplete run: .* re-run the same command to finish/u);
  });
});

describe('sessions list with nothing found', () => {
  it('names the folders it searched and how to search others', async () => {
    const home = mkdtempSync(join(tmpdir(), 'echolens-home-'));
    mkdirSync(join(home, '.claude', 'projects'), { recursive: true });
    const r = await runCliInProcess(['sessions', 'list', '--no-cache'], { HOME: home });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/no sessions found/u);
    expect(r.stdout).toContain(`${join(home, '.claude', 'projects')} (Claude Code)`);
    expect(r.stdout).toContain(`${join(home, '.codex', 'sessions')} (Codex CLI, not present)`);
    expect(r.stdout).toMatch(/--claude-dir <dir> \/ --codex-home <dir>/u);
  });
});
