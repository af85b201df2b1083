import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import '../models/sim-echo.js';
import type { CellSpec } from '../store/types.js';
import type { AuditRunner } from './audit.js';
import { runAudit } from './run-audit.js';
import { interruptedSummary, stageLine } from './stage-tally.js';

// A two-stage toy: four target cells, then six grading requests of which only two are distinct
// (identical requests share one cell, as identical judge prompts do in a persona run).
const dir = mkdtempSync(join(tmpdir(), 'echolens-stage-tally-'));
const cell = (content: string, labels: Record<string, string | number>): CellSpec => ({
  request: { model: 'sim:echo', messages: [{ role: 'user', content }], params: {}, sample: 0 },
  labels: { experiment: 'tally-toy', ...labels },
});
const toy: AuditRunner<{ seed: number }, number[], { targets: number; grades: number }> = {
  name: 'tally-toy',
  limits: () => ({}),
  prepare: async () => [0, 1, 2, 3],
  plan: (_config, items) => items.map((i) => cell(`item ${i}`, { stage: 'target', item: i })),
  manifestOptions: () => ({}),
  async execute({ specs, stage, parsedStage }) {
    const targets = await stage(specs, 'targets');
    if (targets.stopReason !== null) return { targets: specs.length, grades: 0 };
    const items = [0, 1, 2, 3, 4, 5].map((i) => ({
      spec: cell(`{"n":${i % 2}}`, { stage: 'grade' }),
      parse: (text: string) => ({ ok: true as const, value: text }),
      reask: () => [],
    }));
    await parsedStage(items, 1, 'grades');
    return { targets: specs.length, grades: items.length };
  },
};

describe('stage tallies', () => {
  it('a finished run: each stage with the progress line counts (distinct cells), requests shown when they share cells', async () => {
    const run = await runAudit(toy, { seed: 1 }, join(dir, 'done.db'), { runtime: { progress: false } });
    expect(run.interrupted).toBe(false);
    expect(run.stages?.map(stageLine)).toEqual(['targets: 4/4 cells', 'grades (attempt 1): 2/2 cells (6 requests; identical ones share a cell)']);
  });

  it('an interrupted run: the summary says INCOMPLETE, why, and finished/planned per stage that started', async () => {
    const controller = new AbortController();
    controller.abort();
    const db = join(dir, 'cut.db');
    const run = await runAudit(toy, { seed: 1 }, db, { runtime: { progress: false, signal: controller.signal } });
    expect(run.interrupted).toBe(true);
    const lines = interruptedSummary(run.runId, db, run.stopReason, run.stages ?? [], run.spendUsd);
    expect(lines[0]).toBe(`run ${run.runId} in ${db} is INCOMPLETE (stopped by Ctrl-C / SIGTERM); finished so far, per stage:`);
    expect(lines[1]).toBe('  targets: 0/4 cells, 4 pending');
    expect(lines[2]).toMatch(/later stages: not started/);
    expect(lines.join('\n')).not.toMatch(/grades/);
  });

  it('a budget stop is named as such', () => {
    const lines = interruptedSummary('r1', 'x.db', 'budget', [{ label: 'targets', requests: 10, cells: 10, finished: 7, pending: 3 }], 1.5);
    expect(lines[0]).toMatch(/INCOMPLETE \(stopped at the --max-cost budget\)/);
    expect(lines[1]).toBe('  targets: 7/10 cells, 3 pending');
    expect(lines.at(-1)).toBe('spend so far $1.5000');
  });
});
