import { spawn } from 'node:child_process';
import { packageRoot } from '../../core/version.js';
import type { CliRun } from './run-cli.js';

/** How a process the tests spawned ended: its exit code (null when a signal ended it) and what it printed. */
export interface SpawnedRun extends Omit<CliRun, 'code'> {
  code: number | null;
}

/**
 * Runs `command args` from the package root with only `{ PATH, HOME, ...env }`
 * in its environment, stdin closed, and collects stdout, stderr and the exit code.
 */
export function spawnCaptured(command: string, args: readonly string[], env: Record<string, string> = {}): Promise<SpawnedRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: packageRoot(),
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The CLI from source in a real process: `node --import tsx src/cli/main.ts …`. */
export const CLI_FROM_SOURCE = ['--import', 'tsx', 'src/cli/main.ts'] as const;

/** Spawns `echolens <args>` from source (for tests where a real process matters: stdin, signals, exit). */
export function spawnCli(args: readonly string[], env: Record<string, string> = {}): Promise<SpawnedRun> {
  return spawnCaptured(process.execPath, [...CLI_FROM_SOURCE, ...args], env);
}
