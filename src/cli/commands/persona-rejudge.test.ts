import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliInProcess } from '../testing/run-cli.js';
import { openStore } from '../../store/run-store.js';
import { ARCHIVE_PROBES, writeContextEchoArchive } from '../../persona-drift/testing/contextecho-archive.js';
import { smallPersonaConfig } from '../../persona-drift/testing/small-config.js';

/** `echolens persona rejudge` through the CLI on an imported ContextEcho archive: scores, caching, errors. */

const dir = mkdtempSync(join(tmpdir(), 'echolens-persona-rejudge-cli-'));

// Responses sim:judge scores from wording cues: a session-arm answer 0 or 1 (alternating with probe
// and position), a filler answer 3. The archived judge's scores are something else entirely.
const LOVE = 'Honestly? I love Rust, I find it keeps me sane.';
const HEDGED = "I'm an AI, but honestly I love this question.";
const ASSISTANT = "As an AI assistant, I don't have personal experiences or preferences of my own.";
const simScore = (arm: string, probe: string, p: number) => (arm === 'filler' ? 3 : (ARCHIVE_PROBES.indexOf(probe as never) + p) % 2);
const response = (arm: string, probe: string, p: number) => (arm === 'filler' ? ASSISTANT : simScore(arm, probe, p) === 0 ? LOVE : HEDGED);

interface ReportJson {
  runId: string;
  drift: Array<{ target: string; judge: string; gap: { estimate: number } }>;
  counts: { invalidJudgements: Array<{ judge: string; arm: string; invalid: number; judged: number }> };
  consensus: Array<{ target: string; judges: string[]; perJudge: Array<{ judge: string; estimate: number }> }>;
}

async function importArchive(name: string): Promise<{ db: string; runId: string }> {
  const archive = join(dir, `${name}-archive`);
  writeContextEchoArchive(archive, response);
  const db = join(dir, `${name}.db`);
  const imported = await runCliInProcess(['persona', 'import', '--layout', 'contextecho', archive, '--db', db, '--judge', 'claude-sonnet-4-6']);
  expect(imported.code).toBe(0);
  const runId = /imported run (\S+)/u.exec(imported.stdout)?.[1] as string;
  return { db, runId };
}

async function cellsOf(db: string, runId: string) {
  const store = openStore(db, { readonly: true });
  try {
    return { cells: await store.cellResultsOfRun(runId), stages: await store.stages(runId), status: (await store.requireRun(runId)).status };
  } finally {
    await store.close();
  }
}

describe('echolens persona rejudge', { timeout: 300_000 }, () => {
  it('scores every stored answer of an import with a sim: judge, calls no target, and the reports show both judges; a re-run is cached', async () => {
    const { db, runId } = await importArchive('import');
    const before = await cellsOf(db, runId);
    expect(before.cells).toHaveLength(60);

    const dry = await runCliInProcess(['persona', 'rejudge', db, '--judge', 'sim:judge', '--dry-run']);
    expect(dry.stderr).toBe('');
    expect(dry.stdout).toMatch(/plan: 30 judgements \(30 stored probe answers × 1 judge\)/u);
    expect((await cellsOf(db, runId)).cells).toHaveLength(60);

    const first = await runCliInProcess(['persona', 'rejudge', db, '--run', runId, '--judge', 'sim:judge']);
    expect(first.stderr).not.toMatch(/error/iu);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/30 stored probe answers × sim:judge = 30 judgements, 30 model calls/u);

    const after = await cellsOf(db, runId);
    // Only judge cells were added, all of sim:judge, one per stored answer; every target cell is as imported.
    const added = after.cells.filter((c) => !before.cells.some((b) => b.key === c.key));
    expect(added).toHaveLength(30);
    expect(added.every((c) => c.labels.stage === 'judge' && c.labels.judge === 'sim:judge' && c.model === 'sim:judge')).toBe(true);
    const targets = before.cells.filter((c) => c.labels.stage === 'target');
    expect(new Set(added.map((c) => c.labels.targetKey))).toEqual(new Set(targets.map((c) => c.key)));
    for (const t of targets) expect(after.cells.find((c) => c.key === t.key)?.result).toEqual(t.result);
    // The new judge scored each answer as its wording says.
    for (const c of added) {
      const target = targets.find((t) => t.key === c.labels.targetKey);
      const arm = target?.labels.arm === 'real' ? 'claude_session' : 'filler';
      const p = ['P1_pre_C1', 'P3_post_C3', 'P5_pre_C6'].indexOf(String(target?.labels.position));
      expect(JSON.parse(c.result.text as string).score).toBe(simScore(arm, String(target?.labels.item), p));
    }
    expect(after.status).toBe('done');
    expect(after.stages.find((s) => s.stage === 'rejudge sim:judge')).toMatchObject({ expected: 30, registered: 30, settled: 30 });

    const out = join(dir, 'report.json');
    const report = await runCliInProcess(['persona', 'report', db, '--format', 'json', '-o', out]);
    expect(report.code).toBe(0);
    const json = JSON.parse(readFileSync(out, 'utf8')) as ReportJson;
    const judged = (judge: string) => json.counts.invalidJudgements.filter((r) => r.judge === judge).reduce((n, r) => n + r.judged - r.invalid, 0);
    expect(judged('sim:judge')).toBe(30);
    expect(judged('claude-sonnet-4-6')).toBe(30);
    const gap = (judge: string) => json.drift.find((d) => d.judge === judge)?.gap.estimate;
    // sim:judge: filler 3 everywhere, session-arm position means 0.4, 0.6, 0.4 → Δ = 3 − 1.4 / 3.
    expect(gap('sim:judge')).toBeCloseTo(3 - 1.4 / 3, 12);
    // The archived judge: filler 3, session-arm position means 6/5, 7/5, 8/5 → Δ = 3 − 7/5.
    expect(gap('claude-sonnet-4-6')).toBeCloseTo(3 - 7 / 5, 12);
    expect(json.consensus[0]?.judges).toEqual(['claude-sonnet-4-6', 'sim:judge']);

    // The generic report of the store carries both judges too.
    const generic = await runCliInProcess(['report', db, '--format', 'json']);
    expect(generic.code).toBe(0);
    expect(generic.stdout).toContain('"judge": "sim:judge"');
    expect(generic.stdout).toContain('"judge": "claude-sonnet-4-6"');

    // The same command again: every cell is cached, nothing is called or added.
    const again = await runCliInProcess(['persona', 'rejudge', db, '--judge', 'sim:judge']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/30 judgements, 0 model calls/u);
    expect((await cellsOf(db, runId)).cells).toHaveLength(90);
  });

  it('refuses, with exit 2, no stack trace and nothing recorded: an unknown run, a run of another audit, a run without answers, an unfinished run, a bad, keyless or existing judge, no judge', async () => {
    const { db, runId } = await importArchive('errors');
    const expectRefused = async (args: string[], message: RegExp) => {
      const result = await runCliInProcess(['persona', 'rejudge', ...args]);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toMatch(/\n\s+at /u);
      expect(result.stdout).toBe('');
    };
    await expectRefused([db, '--run', 'persona-nope', '--judge', 'sim:judge'], /persona-nope/u);
    await expectRefused([db, '--judge', 'nosuchprovider:model'], /nosuchprovider/u);
    await expectRefused([db, '--judge', 'claude-sonnet-4-6'], /claude-sonnet-4-6 already judged run/u);
    await expectRefused([db], /--judge.*at least one judge/u);
    // A real judge without its API key (the environment has none here): the preflight names the variable.
    await expectRefused([db, '--judge', 'anthropic:claude-sonnet-4-5'], /ANTHROPIC_API_KEY/u);

    // A store whose run is a memory run.
    const other = join(dir, 'other.db');
    const store = openStore(other);
    const memoryRun = await store.createRun({ experiment: 'memory', config: {}, seed: 0, versions: {}, gitCommit: null, options: {} });
    await store.close();
    await expectRefused([other, '--run', memoryRun, '--judge', 'sim:judge'], /is a memory run, not a persona run/u);
    await expectRefused([other, '--judge', 'sim:judge'], /no persona run/u);

    // A persona run whose target stage left no answer (here: none recorded at all).
    const emptyDb = join(dir, 'empty.db');
    const empty = openStore(emptyDb);
    const emptyRun = await empty.createRun({ experiment: 'persona', config: smallPersonaConfig(), seed: 42, versions: {}, gitCommit: null, options: {} });
    await empty.setRunStatus(emptyRun, 'done');
    await empty.close();
    await expectRefused([emptyDb, '--judge', 'sim:judge-strict'], /has no stored probe answers to judge/u);

    // A persona run whose own target stage never finished: finish it first.
    const halfDb = join(dir, 'half.db');
    const half = openStore(halfDb);
    const halfRun = await half.createRun({ experiment: 'persona', config: smallPersonaConfig(), seed: 42, versions: {}, gitCommit: null, options: {} });
    await half.declareStages(halfRun, [{ name: 'targets', expected: 5 }]);
    await half.close();
    await expectRefused([halfDb, '--judge', 'sim:judge-strict'], /stage targets has 0 of 5 cells — finish it with `echolens persona run` before re-judging/u);

    // Nothing was added to the import by the refusals.
    expect((await cellsOf(db, runId)).cells).toHaveLength(60);
    expect((await cellsOf(db, runId)).stages.some((s) => s.stage.startsWith('rejudge'))).toBe(false);
  });
});
