import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../core/version.js';
import { useFakeProviders } from '../../models/testing/harness.js';
import { runCliInProcess } from '../testing/run-cli.js';
import { shouldStream } from './ask.js';

const KEY = 'cli-test-key-7f3a9c0d2e';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Spawns the CLI asynchronously (the fake server lives in this process and must keep answering). */
function start(args: string[], env: Record<string, string> = {}, input?: string) {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: packageRoot(),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const run: Run = { code: null, stdout: '', stderr: '' };
  const stdoutListeners: Array<() => void> = [];
  child.stdout.on('data', (d: Buffer) => {
    run.stdout += d.toString();
    for (const listener of stdoutListeners) listener();
  });
  child.stderr.on('data', (d: Buffer) => {
    run.stderr += d.toString();
  });
  const done = new Promise<Run>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      run.code = code;
      resolve(run);
    });
  });
  child.stdin.end(input ?? '');
  /** Resolves once stdout holds `text` (the child still running). */
  const stdoutContains = (text: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (run.stdout.includes(text)) resolve();
      };
      stdoutListeners.push(check);
      check();
      void done.then(() => reject(new Error(`the CLI exited before printing ${JSON.stringify(text)}: ${JSON.stringify(run)}`)));
    });
  return { child, run, done, stdoutContains };
}

/** In-process by default (runCli); a real process only when the test feeds stdin. */
function cli(args: string[], env: Record<string, string> = {}, input?: string): Promise<Run> {
  return input === undefined ? runCliInProcess(args, env) : start(args, env, input).done;
}

const fakes = useFakeProviders(KEY);

// Most tests run the CLI in process; the stdin and Ctrl-C ones spawn it (seconds of start-up on a loaded machine).
describe('echolens ask', { timeout: 120_000 }, () => {
  it('prints the answer on stdout and a usage line on stderr', async () => {
    fakes.openai.setRespond({ text: 'Paris.', usage: { inputTokens: 21, outputTokens: 2 } });
    const ref = `openai-compatible:m@${fakes.openai.baseURL}`;
    const run = await cli(['ask', ref, 'Capital of France?', '--system', 'Answer in one word.', '--temperature', '0'], {
      OPENAI_COMPATIBLE_API_KEY: KEY,
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('Paris.\n');
    expect(run.stderr).toMatch(/21 in \/ 2 out tokens/);
    expect(run.stderr).toMatch(/cost unknown/);
    const sent = fakes.openai.requests.at(-1)!;
    expect(sent.body).toMatchObject({
      model: 'm',
      temperature: 0,
      max_tokens: 4096,
      messages: [
        { role: 'system', content: 'Answer in one word.' },
        { role: 'user', content: 'Capital of France?' },
      ],
    });
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    // stdout is a pipe here: no streaming unless asked.
    expect(sent.stream).toBe(false);
    expect(run.stdout + run.stderr).not.toContain(KEY);
  });

  it('--json prints text, usage, cost, latency, finish reason and model', async () => {
    fakes.openai.setRespond({ text: 'Four.', usage: { inputTokens: 1000, outputTokens: 200, cachedInputTokens: 400 } });
    const dir = mkdtempSync(join(tmpdir(), 'echolens-ask-'));
    const prices = join(dir, 'prices.yaml');
    writeFileSync(prices, 'models:\n  - { provider: openai-compatible, model: m, input: 2, output: 10, cachedInput: 1 }\n');
    const ref = `openai-compatible:m@${fakes.openai.baseURL}`;
    const run = await cli(['ask', ref, '2+2?', '--json', '--max-tokens', '50', '--seed', '3', '--prices', prices], {
      OPENAI_COMPATIBLE_API_KEY: KEY,
    });
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(out).toMatchObject({
      model: ref,
      responseModel: 'm',
      text: 'Four.',
      finishReason: 'stop',
      usage: { inputTokens: 1000, outputTokens: 200, cachedInputTokens: 400, cacheWriteTokens: 0, reasoningTokens: 0 },
      attempts: 1,
      params: { maxTokens: 50, seed: 3 },
    });
    expect(out.costUsd).toBeCloseTo((600 * 2 + 400 * 1 + 200 * 10) / 1e6, 12);
    expect(typeof out.latencyMs).toBe('number');
    expect(fakes.openai.requests.at(-1)!.body).toMatchObject({ max_tokens: 50, seed: 3 });
    expect(run.stdout + run.stderr).not.toContain(KEY);
  });

  it('retries through the retry policy (429 with Retry-After: 0, then an answer)', async () => {
    fakes.openai.setRespond('after a retry');
    fakes.openai.pushFaults({ fault: 'status', status: 429, retryAfter: '0' });
    const ref = `openai-compatible:m@${fakes.openai.baseURL}`;
    const before = fakes.openai.requests.length;
    const run = await cli(['ask', ref, 'hi', '--json'], { OPENAI_COMPATIBLE_API_KEY: KEY });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ text: 'after a retry', attempts: 2 });
    expect(fakes.openai.requests.length - before).toBe(2);
  });

  it('a call that keeps failing exits 1 with one line and no stack', async () => {
    fakes.openai.pushFaults({ fault: 'status', status: 503 }, { fault: 'status', status: 503 });
    const ref = `openai-compatible:m@${fakes.openai.baseURL}`;
    const run = await cli(['ask', ref, 'hi', '--max-attempts', '2'], { OPENAI_COMPATIBLE_API_KEY: KEY });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trim().split('\n');
    expect(lines.at(-1)).toMatch(/^echolens: .*HTTP 503.*\[server, 2 attempts\]$/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('--json reports a failure as a JSON error object too', async () => {
    const ref = `openai-compatible:m@${fakes.openai.baseURL}`;
    const run = await cli(['ask', ref, 'hi', '--json'], { OPENAI_COMPATIBLE_API_KEY: 'wrong-key-0000' });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ model: ref, error: { kind: 'auth', status: 401, attempts: 1 } });
    expect(run.stdout + run.stderr).not.toContain('wrong-key-0000');
  });

  it('a missing key exits 2 naming the variable', async () => {
    const run = await cli(['ask', `openai:gpt-4o@${fakes.openai.baseURL}`, 'hi']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/OPENAI_API_KEY/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('an unknown provider exits 2 listing the valid ones', async () => {
    const run = await cli(['ask', 'gemini:flash', 'hi']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/valid providers: openai, anthropic/);
  });

  it('bad flags and a malformed price file exit 2 before any call', async () => {
    const before = fakes.openai.requests.length;
    const ref = `openai-compatible:m@${fakes.openai.baseURL}`;
    const bad = await cli(['ask', ref, 'hi', '--max-tokens', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--max-tokens: must be a whole number/);
    const dir = mkdtempSync(join(tmpdir(), 'echolens-ask-'));
    const prices = join(dir, 'bad.json');
    writeFileSync(prices, '{"models": [{"provider": "x", "model": "y", "input": "cheap", "output": 1}]}');
    const malformed = await cli(['ask', ref, 'hi', '--prices', prices]);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain(`${prices}:1: models.0.input:`);
    expect(fakes.openai.requests.length).toBe(before);
  });

  it('reads the prompt from stdin with "-" and works offline with sim:echo', async () => {
    const run = await cli(['ask', 'sim:echo', '-'], {}, 'echo me\n');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('echo me\n');
  });
});

const STORY = 'Once upon a time a river ran uphill; nobody believed it, so it ran down again.';

describe('echolens ask streaming', { timeout: 120_000 }, () => {
  it('streams on a terminal or with --stream, never with --json; --json --stream is refused', () => {
    expect(shouldStream({}, true)).toBe(true);
    expect(shouldStream({}, false)).toBe(false);
    expect(shouldStream({ stream: true }, false)).toBe(true);
    expect(shouldStream({ stream: false }, true)).toBe(false);
    expect(shouldStream({ json: true }, true)).toBe(false);
    expect(() => shouldStream({ json: true, stream: true }, false)).toThrow(/--stream: cannot be combined with --json/);
  });

  it('--stream prints tokens while the answer is still arriving', async () => {
    // The fake sends the role chunk and three 4-character chunks, then goes silent.
    fakes.openai.pushFaults({ fault: 'stall', afterChunks: 3 });
    const ref = `openai-compatible:m@${fakes.openai.baseURL}`;
    const before = fakes.openai.requests.length;
    const cli = start(['ask', ref, 'hi', '--stream'], { OPENAI_COMPATIBLE_API_KEY: KEY });
    await cli.stdoutContains('partial answ');
    // The answer is still open (the server never finished it): interrupt the wait.
    cli.child.kill('SIGINT');
    const run = await cli.done;
    expect(run.code).toBe(3);
    expect(run.stdout).toBe('partial answ\n');
    expect(run.stderr).toMatch(/partial answer above is incomplete/);
    expect(run.stderr).toMatch(/\[aborted, 1 attempt\]/);
    expect(fakes.openai.requests.slice(before).map((r) => r.stream)).toEqual([true]);
  });

  it('--stream: the streamed text is the answer, the same text --json reports', async () => {
    fakes.openai.setRespond({ text: STORY, chunkSize: 6 });
    const ref = `openai-compatible:m@${fakes.openai.baseURL}`;
    const before = fakes.openai.requests.length;
    const streamed = await cli(['ask', ref, 'story', '--stream'], { OPENAI_COMPATIBLE_API_KEY: KEY });
    expect(streamed.code).toBe(0);
    expect(streamed.stdout).toBe(`${STORY}\n`);
    expect(streamed.stderr).not.toMatch(/discarded/);
    const json = await cli(['ask', ref, 'story', '--json'], { OPENAI_COMPATIBLE_API_KEY: KEY });
    expect(JSON.parse(json.stdout)).toMatchObject({ text: STORY, attempts: 1 });
    expect(fakes.openai.requests.slice(before).map((r) => r.stream)).toEqual([true, false]);
  });

  for (const provider of ['openai', 'anthropic'] as const) {
    it(`${provider}: a stream cut midway is retried with a notice; the answer restarts on a new line, complete, not duplicated`, async () => {
      const fake = fakes[provider];
      fake.setRespond({ text: STORY, chunkSize: 6 });
      fake.pushFaults(
        provider === 'openai'
          ? { fault: 'truncate', afterChunks: 3 }
          : { fault: 'stream-error', errorType: 'overloaded_error', message: 'Overloaded', afterChunks: 5 },
      );
      const ref = provider === 'openai' ? `openai:gpt-4o@${fake.baseURL}` : `anthropic:claude-sonnet-4-5@${fake.baseURL}`;
      const env: Record<string, string> = provider === 'openai' ? { OPENAI_API_KEY: KEY } : { ANTHROPIC_API_KEY: KEY };
      const partial = provider === 'openai' ? 'this answer ' : 'an answer in';
      const before = fake.requests.length;
      const run = await cli(['ask', ref, 'story', '--stream'], env);
      expect(run.code).toBe(0);
      expect(fake.requests.slice(before).map((r) => r.stream)).toEqual([true, true]);
      const notices = run.stderr.split('\n').filter((line) => line.includes('partial answer is discarded'));
      expect(notices).toHaveLength(1);
      expect(notices[0]).toMatch(new RegExp(`^echolens: attempt 1 failed \\((connection|server)\\) after ${partial.length} characters were printed`));
      expect(run.stdout).toBe(`${partial}\n${STORY}\n`);
      expect(run.stdout.split(STORY)).toHaveLength(2);
      expect(run.stderr).toMatch(/2 attempts/);
    });
  }

  it('the same failure without streaming: one plain retry line, stdout holds only the final text', async () => {
    fakes.openai.setRespond({ text: STORY, chunkSize: 6 });
    fakes.openai.pushFaults({ fault: 'truncate', afterChunks: 3 });
    const ref = `openai:gpt-4o@${fakes.openai.baseURL}`;
    const run = await cli(['ask', ref, 'story'], { OPENAI_API_KEY: KEY });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${STORY}\n`);
    expect(run.stderr).toMatch(/^echolens: attempt 1 failed \(connection\); retrying in \d+\.\d s$/m);
    expect(run.stderr).not.toMatch(/discarded/);
  });

  it('--json --stream exits 2 before any call; a model that does not stream still answers under --stream', async () => {
    const before = fakes.openai.requests.length;
    const bad = await cli(['ask', `openai-compatible:m@${fakes.openai.baseURL}`, 'hi', '--json', '--stream'], {
      OPENAI_COMPATIBLE_API_KEY: KEY,
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--stream: cannot be combined with --json/);
    expect(fakes.openai.requests.length).toBe(before);
    const sim = await cli(['ask', 'sim:echo', 'plain echo', '--stream']);
    expect(sim.code).toBe(0);
    expect(sim.stdout).toBe('plain echo\n');
  });
});

describe('echolens models', { timeout: 120_000 }, () => {
  it('lists providers and sim profiles, and whether keys are set without showing them', async () => {
    const run = await cli(['models', '--json'], { ANTHROPIC_API_KEY: KEY });
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as {
      providers: Array<{ name: string; keySet: boolean | null }>;
      simProfiles: Array<{ name: string }>;
    };
    expect(out.providers.map((p) => p.name)).toContain('openai-compatible');
    expect(out.providers.find((p) => p.name === 'anthropic')?.keySet).toBe(true);
    expect(out.providers.find((p) => p.name === 'openai')?.keySet).toBe(false);
    expect(out.simProfiles.map((s) => s.name)).toContain('sim:echo');
    expect(run.stdout).not.toContain(KEY);
  });

  it('--prices prints the price table', async () => {
    const run = await cli(['models', '--prices']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/openai:gpt-4\.1-mini\s+0\.4\s+1\.6/);
    expect(run.stdout).toMatch(/cost unknown/);
  });
});
