// A run is done only when every stage is: real `echolens … run` processes SIGKILLed at a stage
// boundary (ECHOLENS_TEST_KILL_AFTER_STAGE, src/experiment/stage-hooks.ts, times the kill exactly),
// and a store whose disk fills (a small tmpfs where this machine lets us mount one), must read as
// incomplete — `runs list` shows the stage short of its cells, `gate` fails the run (exit 1), the
// reports refuse it — and the same command finishes it.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { smallPersonaRunArgs } from '../../src/cli/testing/persona-args.js';
import { spawnCli } from '../../src/cli/testing/spawn-cli.js';
import { packageRoot } from '../../src/core/version.js';
import { type FakeBatchServer, lastUserText, startFakeBatch } from '../../src/models/testing/index.js';

const dir = mkdtempSync(join(tmpdir(), 'echolens-stages-'));
const servers: FakeBatchServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const example = join(packageRoot(), 'examples', 'memory-sim.yaml');
const small = ['--questions-limit', '3', '--set', 'k=1', '--set', 'conditions=[filler, gender, bereavement]', '--set', 'analysis.B=200'];
const memoryRun = (db: string) => ['memory', 'run', example, '--db', db, ...small];
/** 3 questions × (no-memory + 3 conditions) + the no-memory sample = 15 generation cells, one labeler cell planned per answer. */
const LABELING = 15;
const killAfter = (stage: string) => ({ ECHOLENS_TEST_KILL_AFTER_STAGE: stage });

interface ListedRun {
  id: string;
  status: string;
  stages: Array<{ stage: string; expected: number | null; registered: number; settled: number }>;
  incomplete: string | null;
}

async function listRuns(db: string): Promise<ListedRun[]> {
  const listed = await spawnCli(['runs', 'list', db, '--json']);
  expect(listed.code, listed.stderr).toBe(0);
  return JSON.parse(listed.stdout) as ListedRun[];
}

/** What every refusal of an incomplete run must look like: gate exit 1 with the message, reports exit 2 with it. */
async function expectRefused(db: string, message: string, audit: 'memory' | 'persona'): Promise<void> {
  const gate = await spawnCli(['gate', db]);
  expect(gate.code, gate.stderr).toBe(1);
  expect(gate.stdout).toContain(message);
  expect(gate.stdout).toMatch(/gate: FAIL/u);
  const own = await spawnCli([audit, 'report', db]);
  expect(own.code).toBe(2);
  expect(own.stderr).toContain(message);
  expect(own.stdout).not.toMatch(/Verdict: PASS/u);
  const generic = await spawnCli(['report', db, '--format', 'md']);
  expect(generic.code).toBe(2);
  expect(generic.stderr).toContain(message);
  for (const run of [gate, own, generic]) expect(run.stderr).not.toMatch(/internal error/u);
}

describe('stage kills', { timeout: 600_000 }, () => {
  it('memory run SIGKILLed after its generation stage is incomplete until the same command finishes it', async () => {
    const db = join(dir, 'memory-kill.db');
    const killed = await spawnCli(memoryRun(db), killAfter('generation'));
    expect(killed.code).toBeNull(); // ended by SIGKILL
    const [run] = await listRuns(db);
    expect(run?.status).toBe('running');
    expect(run?.stages).toEqual([
      { stage: 'generation', expected: LABELING, registered: LABELING, settled: LABELING },
      { stage: 'labeling', expected: LABELING, registered: 0, settled: 0 },
    ]);
    const message = `incomplete run: stage labeling has 0 of ${LABELING} cells — re-run the same command to finish`;
    expect(run?.incomplete).toBe(message);
    const table = await spawnCli(['runs', 'list', db]);
    expect(table.stdout).toContain(`running  [generation ${LABELING}/${LABELING} · labeling 0/${LABELING} registered]`);
    await expectRefused(db, message, 'memory');

    const resumed = await spawnCli(memoryRun(db));
    expect(resumed.code, resumed.stderr).toBe(0);
    const [done] = await listRuns(db);
    expect(done?.status).toBe('done');
    expect(done?.incomplete).toBeNull();
    expect(done?.stages.map((s) => [s.stage, s.settled])).toEqual([
      ['generation', LABELING],
      ['labeling', LABELING],
    ]);
    const report = await spawnCli(['memory', 'report', db, '--format', 'json']);
    expect(report.code, report.stderr).toBe(0);
    expect(JSON.parse(report.stdout).run.outcomes.labelled).toBe(LABELING);
    const gate = await spawnCli(['gate', db]);
    expect(gate.stdout).not.toContain('incomplete run');
  });

  it('a --batch persona run SIGKILLed after its batch was collected is incomplete, not passed', async () => {
    const server = await startFakeBatch({ provider: 'openai', respond: (request) => ({ text: `I am a coding assistant. (${lastUserText(request).length})` }) });
    servers.push(server);
    const env = { OPENAI_API_KEY: 'sk-stage-kill-test-0001' };
    const db = join(dir, 'persona-batch.db');
    const args = smallPersonaRunArgs(`openai:gpt-4.1-mini@${server.baseURL}`, db, { batch: true });
    const killed = await spawnCli(args, { ...env, ...killAfter('targets') });
    expect(killed.code).toBeNull();
    // The target stage went out as batches (prefix-group leaders, then their followers) and was collected.
    const submitted = server.batches.length;
    expect(submitted).toBeGreaterThanOrEqual(1);
    const [run] = await listRuns(db);
    const judges = run?.stages.find((s) => s.stage === 'judges');
    expect(run?.status).not.toBe('done');
    expect(judges?.registered).toBe(0);
    expect(judges?.expected).toBeGreaterThan(0);
    await expectRefused(db, `incomplete run: stage judges has 0 of ${judges?.expected} cells — re-run the same command to finish`, 'persona');

    const resumed = await spawnCli(args, env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(server.batches).toHaveLength(submitted); // the collected batches are not submitted again
    const [done] = await listRuns(db);
    expect(done?.status).toBe('done');
    expect(done?.incomplete).toBeNull();
  });
});

/** Mounts a small tmpfs (root only); null where the machine does not allow it. */
function smallTmpfs(path: string, size: string): boolean {
  mkdirSync(path, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', path], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const mountPoint = join(dir, 'small-disk');
const mounted = process.platform === 'linux' && smallTmpfs(mountPoint, '1m');
afterAll(() => {
  if (mounted) execFileSync('umount', [mountPoint], { stdio: 'ignore' });
});

// Without a tmpfs, src/store/maintenance.test.ts covers the same path with a real SQLITE_FULL from a page limit.
describe.skipIf(!mounted)('a full disk (1 MB tmpfs)', { timeout: 600_000 }, () => {
  it('stops with "disk full" (exit 2, no stack), leaves the run incomplete, and the same command finishes it once space is freed', async () => {
    const db = join(mountPoint, 'run.db');
    expect((await spawnCli(memoryRun(db), killAfter('generation'))).code).toBeNull();
    // Fill the disk, leaving a little room: the resume gets through the cached generation stage and
    // runs out while registering the labeler cells (where exactly depends on SQLite's page use).
    const { bavail, bsize } = statfsSync(mountPoint);
    const filler = join(mountPoint, 'filler');
    writeFileSync(filler, Buffer.alloc(Math.max(0, bavail * bsize - 64 * 1024)));
    const full = await spawnCli(memoryRun(db));
    expect(full.code).toBe(2);
    expect(full.stderr).toContain('echolens: disk full — free space, then re-run to resume');
    expect(full.stderr).toContain(`hint: the run store is ${db}`);
    expect(full.stderr).not.toMatch(/internal error|\n\s+at /u);
    rmSync(filler);
    const [run] = await listRuns(db);
    expect(run?.status).not.toBe('done');
    expect(run?.incomplete).toMatch(/^incomplete run: stage \w+ has \d+ of \d+ cells/u);
    const gate = await spawnCli(['gate', db]);
    expect(gate.code).toBe(1);
    expect(gate.stdout).toContain('incomplete run');
    const again = await spawnCli(memoryRun(db));
    expect(again.code, again.stderr).toBe(0);
    const [done] = await listRuns(db);
    expect(done?.status).toBe('done');
    process.stderr.write(`full disk: the resume stopped with ${run?.incomplete}\n`);
  });
});
