import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { requireCompleteRun } from '../experiment/run-completeness.js';
import { runStoppedAndResumed } from '../experiment/testing/counting-adapters.js';
import { openStore } from '../store/run-store.js';
import { prepareRejudge, rejudgePersonaRun } from './rejudge-run.js';
import { personaReport, runPersona } from './run.js';
import { smallPersonaConfig } from './testing/small-config.js';

/** `persona rejudge` on a run of echolens's own: the judge added afterwards is the judge the config could have named. */

const quiet = { progress: false } as const;
const dir = mkdtempSync(join(tmpdir(), 'echolens-persona-rejudge-'));

beforeAll(() => registerBuiltinSimProfiles());

async function judgeCells(db: string, runId: string, judge: string) {
  const store = openStore(db, { readonly: true });
  try {
    return (await store.cellResultsOfRun(runId))
      .filter((c) => c.labels.stage === 'judge' && c.labels.judge === judge)
      .map((c) => ({ key: c.key, targetKey: c.labels.targetKey, text: c.result.text }))
      .sort((a, b) => a.key.localeCompare(b.key));
  } finally {
    await store.close();
  }
}

async function report(db: string, runId: string) {
  const store = openStore(db, { readonly: true });
  try {
    await requireCompleteRun(store, runId);
    return await personaReport(store, runId);
  } finally {
    await store.close();
  }
}

describe('persona rejudge on a persona run (SIMULATED models)', () => {
  it('gives the cells and the report a run with both judges in its config gives', async () => {
    const once = join(dir, 'once.db');
    const run = await runPersona(smallPersonaConfig(), once, { ...quiet, signal: new AbortController().signal });
    const both = join(dir, 'both.db');
    const reference = await runPersona(smallPersonaConfig({ judges: ['sim:judge', 'sim:judge-strict'] }), both, {
      ...quiet,
      signal: new AbortController().signal,
    });

    const store = openStore(once, { readonly: true });
    const prepared = await prepareRejudge(store, ['sim:judge-strict']);
    await store.close();
    expect(prepared.runId).toBe(run.runId);
    const result = await rejudgePersonaRun(once, prepared, { ...quiet, signal: new AbortController().signal });
    expect(result.interrupted).toBe(false);
    expect(result.judgeCells).toBe(reference.judgeCells / 2);

    expect(await judgeCells(once, run.runId, 'sim:judge-strict')).toEqual(await judgeCells(both, reference.runId, 'sim:judge-strict'));
    // Same cells, same analysis: every judge's drift rows and the consensus agree exactly.
    const rejudged = await report(once, run.runId);
    const planned = await report(both, reference.runId);
    expect(rejudged.drift).toEqual(planned.drift);
    expect(rejudged.consensus).toEqual(planned.consensus);
    expect(rejudged.consensus[0]?.judges).toEqual(['sim:judge', 'sim:judge-strict']);
  });

  it('a stopped rejudge leaves the run incomplete (reports refuse it) and the same call resumes it without calling a cell twice', async () => {
    const db = join(dir, 'resume.db');
    const run = await runPersona(smallPersonaConfig(), db, { ...quiet, signal: new AbortController().signal });
    const prepare = async () => {
      const store = openStore(db, { readonly: true });
      try {
        return await prepareRejudge(store, ['sim:judge-lenient'], run.runId);
      } finally {
        await store.close();
      }
    };
    let checkedIncomplete = false;
    const { calls } = await runStoppedAndResumed(
      async (runtime) => {
        const result = await rejudgePersonaRun(db, await prepare(), { ...quiet, ...runtime });
        if (result.interrupted) {
          await expect(report(db, run.runId)).rejects.toThrow(/incomplete run: stage rejudge sim:judge-lenient/u);
          checkedIncomplete = true;
        }
        return result;
      },
      [3],
    );
    expect(checkedIncomplete).toBe(true);
    expect(calls.size).toBeGreaterThan(3);
    expect((await judgeCells(db, run.runId, 'sim:judge-lenient')).every((c) => c.text !== null)).toBe(true);
    expect((await report(db, run.runId)).drift.some((d) => d.judge === 'sim:judge-lenient')).toBe(true);
  });
});
