import { vi } from 'vitest';
import { runCli } from '../program.js';

/** What a CLI invocation printed and returned. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

let running = false;

/**
 * Runs the CLI in this process, as `echolens <args>` would, capturing stdout,
 * stderr and the exit code. The environment is replaced for the call by
 * `{ PATH, HOME, ...env }` (what a spawned CLI would see), then restored. One
 * call at a time: the capture patches process.stdout/stderr. Tests that need
 * a real process (stdin, signals, process exit) spawn `src/cli/main.ts` instead.
 */
export async function runCliInProcess(args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> {
  if (running) throw new Error('runCliInProcess: one call at a time');
  running = true;
  const out: string[] = [];
  const err: string[] = [];
  const writeOut = process.stdout.write;
  const writeErr = process.stderr.write;
  const savedEnv = { ...process.env };
  const savedExitCode = process.exitCode;
  const capture = (sink: string[]) =>
    ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      sink.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    }) as typeof process.stdout.write;
  for (const key of Object.keys(process.env)) delete process.env[key];
  Object.assign(process.env, { PATH: savedEnv.PATH ?? '', HOME: savedEnv.HOME ?? '', ...env });
  process.exitCode = undefined;
  process.stdout.write = capture(out);
  process.stderr.write = capture(err);
  try {
    const code = await runCli(['node', 'echolens', ...args]);
    return { code, stdout: out.join(''), stderr: err.join('') };
  } finally {
    process.stdout.write = writeOut;
    process.stderr.write = writeErr;
    for (const key of Object.keys(process.env)) delete process.env[key];
    Object.assign(process.env, savedEnv);
    process.exitCode = savedExitCode;
    running = false;
  }
}

/**
 * Runs `echolens <args>` in this process with the current environment, capturing stdout and stderr
 * through vitest spies (restored afterwards).
 */
export async function runCliCaptured(args: readonly string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    out += String(chunk);
    return true;
  });
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    err += String(chunk);
    return true;
  });
  try {
    const code = await runCli(['node', 'echolens', ...args]);
    return { code, out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}
