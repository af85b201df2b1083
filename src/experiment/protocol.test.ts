import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, InputError, InvalidArgumentError } from '../core/errors.js';
import '../models/sim-echo.js';
import { openStore, type RunCellRecord } from '../store/run-store.js';
import type { CellSpec } from '../store/types.js';
import type { Audit, AuditRunResult } from './audit.js';
import { labelDecoder } from './labels.js';
import { askUntilParsed, groupReaskChains, type ParseResult, resolveReaskChain } from './reask.js';
import { getAudit, listAudits, registerAudit, unregisterAudit } from './registry.js';
import { analyzeAuditRun, auditExitCode, auditRunId, runAudit } from './run-audit.js';
import { IncompleteRunError, requireCompleteRun, runIncompleteness } from './run-completeness.js';

// A toy audit: echo cells, then "graders" whose first answer does not parse for odd items.
interface ToyConfig {
  n: number;
  seed: number;
  limits: { concurrency?: number };
}
const toySchema: z.ZodType<ToyConfig> = z.object({ n: z.number().int(), seed: z.number().int(), limits: z.object({ concurrency: z.number().optional() }) });
const parseNumber = (text: string): ParseResult<number> => {
  const m = /^\{"n":(\d+)\}$/u.exec(text);
  return m ? { ok: true, value: Number(m[1]) } : { ok: false, error: `not a number object: ${text}` };
};
const toyLabels = labelDecoder(z.object({ stage: z.literal('grade'), item: z.number().int(), attempt: z.number().int().optional() }), 'toy grade');

function toyAudit(
  name = 'toy',
  hooks: { betweenStages?: () => void } = {},
): Audit<ToyConfig, number[], Map<number, number | null>, { sum: number; invalid: number }, { graded: number }> {
  return {
    name,
    title: 'Toy audit',
    description: 'echo cells graded with re-asks (tests only)',
    command: name,
    configSchema: toySchema,
    loadConfig: () => ({ n: 2, seed: 1, limits: {} }),
    limits: (config) => config.limits,
    prepare: async (config) => Array.from({ length: config.n }, (_, i) => i),
    plan: (_config, items): CellSpec[] =>
      items.map((i) => ({
        request: { model: 'sim:echo', messages: [{ role: 'user', content: `item ${i}` }], params: {}, sample: 0 },
        labels: { experiment: name, stage: 'target', item: i },
      })),
    manifestOptions: (config) => ({ items: config.n }),
    stages: (_config, _input, specs) => [
      { name: 'targets', expected: specs.length },
      { name: 'grades', expected: specs.length },
    ],
    async execute({ input, specs, stage, parsedStage, stopped }) {
      await stage(specs, 'targets');
      if (stopped) return { graded: 0 };
      hooks.betweenStages?.();
      const graded = await parsedStage(
        input.map((i) => ({
          spec: {
            request: { model: 'sim:echo', messages: [{ role: 'user', content: i % 2 === 0 ? `{"n":${i}}` : 'garbled' }], params: {}, sample: 0 },
            labels: { experiment: name, stage: 'grade', item: i, attempt: 0 },
          },
          parse: parseNumber,
          reask: (previous) => [...previous, { role: 'user', content: `{"n":${i}}` }],
        })),
        1,
        'grades',
      );
      return { graded: graded.outcomes.filter((o) => o.status === 'ok').length };
    },
    dryRun: (_config, items) => ({ lines: [`plan: ${items.length} cells`] }),
    describeResult: (run: AuditRunResult<{ graded: number }>) => `graded ${run.result.graded}`,
    async collect(store, run) {
      const grades = (await store.cellsOfRun(run.id)).filter((c) => c.labels.stage === 'grade');
      const chains = groupReaskChains(
        grades,
        (c) => String(toyLabels(c.labels, c.key).item),
        (c) => toyLabels(c.labels, c.key).attempt ?? 0,
      );
      const out = new Map<number, number | null>();
      for (const [item, chain] of chains) {
        const r = resolveReaskChain(chain, { text: (c: RunCellRecord) => (c.result.status === 'done' ? c.result.text : null) }, parseNumber, 1);
        out.set(Number(item), r.status === 'ok' ? r.value : null);
      }
      return out;
    },
    analyze: (collected) => ({
      sum: [...collected.values()].reduce<number>((s, v) => s + (v ?? 0), 0),
      invalid: [...collected.values()].filter((v) => v === null).length,
    }),
    render: {
      csvRows: ({ report }) => [['sum', '', '', '', '', report.sum, null, null, null, null, null]],
      json: ({ report }) => report,
      viewerSummary: ({ report }) => [{ label: 'sum', value: String(report.sum) }],
    },
  };
}

describe('audit registry', () => {
  afterEach(() => {
    unregisterAudit('toy');
  });

  it('registers, finds and lists audits; refuses a second audit under a taken name and bad names', () => {
    const audit = toyAudit();
    registerAudit(audit);
    registerAudit(audit); // the same object again is harmless
    expect(getAudit('toy').title).toBe('Toy audit');
    expect(listAudits().map((a) => a.name)).toContain('toy');
    expect(() => registerAudit(toyAudit())).toThrow(InvalidArgumentError);
    expect(() => registerAudit(toyAudit('Bad Name'))).toThrow(/lower-case/);
    expect(() => getAudit('nope')).toThrow(ConfigError);
    expect(() => getAudit('nope')).toThrow(/registered: .*toy/);
  });

  it('refuses an audit whose gate threshold key another audit or the gate itself declares', () => {
    const gate = (key: string) => ({
      shape: { [key]: z.number().optional() },
      defaults: { [key]: null },
      flags: [],
      describe: () => [],
      check: () => [],
    });
    registerAudit({ ...toyAudit(), gate: gate('toyMaxSum') });
    expect(() => registerAudit({ ...toyAudit('toy-two'), gate: gate('toyMaxSum') })).toThrow(/"toyMaxSum", which audit "toy" already declares/);
    expect(() => registerAudit({ ...toyAudit('toy-two'), gate: gate('maxFailedCells') })).toThrow(/which the gate itself owns/);
    expect(listAudits().map((a) => a.name)).not.toContain('toy-two');
    registerAudit({ ...toyAudit('toy-two'), gate: gate('toyTwoMax') });
    expect(getAudit('toy-two').gate).toBeDefined();
    unregisterAudit('toy-two');
  });
});

describe('re-ask chains', () => {
  const reader = { text: (c: { text: string | null }) => c.text };
  const chain = (...texts: Array<string | null>) => new Map(texts.map((text, attempt) => [attempt, { text }]));

  it('takes the first answer that parses, in attempt order', () => {
    const r = resolveReaskChain(chain('x', '{"n":4}', '{"n":5}'), reader, parseNumber, 2);
    expect(r).toMatchObject({ status: 'ok', value: 4, attempts: 2 });
  });

  it('is invalid after the last allowed re-ask, unanswered when the chain breaks', () => {
    expect(resolveReaskChain(chain('x', 'y'), reader, parseNumber, 1)).toMatchObject({ status: 'invalid', attempts: 2 });
    const broken = resolveReaskChain(chain('x', null), reader, parseNumber, 1);
    expect(broken).toMatchObject({ status: 'unanswered', failed: 1 });
    expect(broken.status === 'unanswered' && broken.lastFailure?.error).toMatch(/not a number/);
    expect(resolveReaskChain(chain('x'), reader, parseNumber, 2)).toMatchObject({ status: 'unanswered', failed: 1 });
    expect(resolveReaskChain(new Map(), reader, parseNumber, 2)).toEqual({ status: 'unanswered', failed: 0 });
  });

  it('without a bound reads the chain as far as it is stored', () => {
    expect(resolveReaskChain(chain('x', 'y', 'z'), reader, parseNumber)).toMatchObject({ status: 'invalid', attempts: 3 });
    expect(resolveReaskChain(chain('x', 'y', '{"n":1}'), reader, parseNumber)).toMatchObject({ status: 'ok', attempts: 3 });
  });

  it('asks live until an answer parses (the same rule without a store)', async () => {
    const answers = ['bad', '{"n":7}'];
    const seen: number[] = [];
    const r = await askUntilParsed(
      async (messages) => {
        seen.push(messages.length);
        return answers.shift() ?? '';
      },
      [{ role: 'user', content: 'q' }],
      parseNumber,
      (previous, bad) => [...previous, { role: 'assistant', content: bad }, { role: 'user', content: 'again' }],
      2,
    );
    expect(r).toEqual({ ok: true, value: 7, attempts: 2 });
    expect(seen).toEqual([1, 3]);
    const never = await askUntilParsed(
      async () => 'bad',
      [],
      parseNumber,
      (p) => p,
      1,
    );
    expect(never).toMatchObject({ ok: false, attempts: 2 });
  });
});

describe('label decoders', () => {
  it('return typed labels and name the cell and label on bad input', () => {
    expect(toyLabels({ stage: 'grade', item: 3 }, 'abc')).toEqual({ stage: 'grade', item: 3 });
    expect(() => toyLabels({ stage: 'grade', item: 'three' }, 'abcdef0123456789')).toThrow(InputError);
    expect(() => toyLabels({ stage: 'grade', item: 'three' }, 'abcdef0123456789')).toThrow(/toy grade cell abcdef012345: label "item"/);
  });
});

describe('runAudit', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'echolens-audit-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs the stages with re-asks, tallies, resumes the same run, and reads it back through collect/analyze', async () => {
    const audit = toyAudit();
    const db = join(dir, 'toy.db');
    const config = { n: 5, seed: 3, limits: { concurrency: 2 } };
    const signal = new AbortController().signal;
    const first = await runAudit(audit, config, db, { runtime: { signal, progress: false } });
    expect(first).toMatchObject({ audit: 'toy', resumed: false, interrupted: false, spendUsd: 0, result: { graded: 5 } });
    expect(auditExitCode(first)).toBe(0);
    const again = await runAudit(audit, config, db, { runtime: { signal, progress: false } });
    expect(again.runId).toBe(first.runId);
    expect(again.resumed).toBe(true);
    const store = openStore(db, { readonly: true });
    try {
      expect(await auditRunId(store, 'toy')).toBe(first.runId);
      await expect(auditRunId(store, 'other')).rejects.toThrow(/holds no other run/);
      const run = await store.requireRun(first.runId);
      expect(run.manifest.options).toEqual({ items: 5 });
      // 5 targets + 5 first grades + 2 re-asks (items 1 and 3).
      expect(await store.cellsOfRun(first.runId)).toHaveLength(12);
      const analyzed = await analyzeAuditRun(audit, store, run);
      expect(analyzed.report).toEqual({ sum: 0 + 1 + 2 + 3 + 4, invalid: 0 });
    } finally {
      await store.close();
    }
  });

  it('records each stage’s progress and is done only once every declared stage is (a fault between stages leaves it running)', async () => {
    const db = join(dir, 'stages.db');
    const config = { n: 4, seed: 2, limits: {} };
    const runtime = { signal: new AbortController().signal, progress: false };
    // The second stage never registers its cells (as when the disk fills, or the process dies, at that point).
    const broken = toyAudit('toy', {
      betweenStages: () => {
        throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
      },
    });
    await expect(runAudit(broken, config, db, { runtime })).rejects.toThrow(/disk is full/);
    let store = openStore(db, { readonly: true });
    try {
      const run = (await store.listRuns())[0]!;
      expect(run.status).toBe('running');
      expect((await store.stages(run.id)).map(({ updatedAt, ...s }) => s)).toEqual([
        { stage: 'targets', ordinal: 0, expected: 4, registered: 4, settled: 4 },
        { stage: 'grades', ordinal: 1, expected: 4, registered: 0, settled: 0 },
      ]);
      expect(await runIncompleteness(store, run)).toBe('incomplete run: stage grades has 0 of 4 cells — re-run the same command to finish');
      await expect(requireCompleteRun(store, run.id)).rejects.toThrow(IncompleteRunError);
    } finally {
      await store.close();
    }
    // The same command finishes it.
    const again = await runAudit(toyAudit(), config, db, { runtime });
    expect(again.resumed).toBe(true);
    store = openStore(db, { readonly: true });
    try {
      const run = await store.requireRun(again.runId);
      expect(run.status).toBe('done');
      expect((await store.stages(run.id)).map((s) => [s.stage, s.expected, s.registered, s.settled])).toEqual([
        ['targets', 4, 4, 4],
        ['grades', 4, 4, 4],
      ]);
      expect(await runIncompleteness(store, run)).toBeNull();
    } finally {
      await store.close();
    }
  });

  it('marks a run stopped before it starts as interrupted (exit code 3) and closes the store', async () => {
    const controller = new AbortController();
    controller.abort();
    const db = join(dir, 'stopped.db');
    const result = await runAudit(toyAudit(), { n: 3, seed: 1, limits: {} }, db, { runtime: { signal: controller.signal, progress: false } });
    expect(result.interrupted).toBe(true);
    expect(result.result.graded).toBe(0);
    expect(auditExitCode(result)).toBe(3);
    // The store can be opened again afterwards.
    await openStore(db).close();
  });

  it('refuses a resume the audit rejects, and leaves the store closed', async () => {
    const audit = {
      ...toyAudit(),
      checkResume: () => {
        throw new ConfigError('inputs changed', { field: 'items' });
      },
    };
    const db = join(dir, 'refuse.db');
    const runtime = { signal: new AbortController().signal, progress: false };
    await runAudit(audit, { n: 1, seed: 1, limits: {} }, db, { runtime });
    await expect(runAudit(audit, { n: 1, seed: 1, limits: {} }, db, { runtime })).rejects.toThrow(/inputs changed/);
    await openStore(db).close();
  });

  it('uses the plan the preflight made instead of planning again', async () => {
    const base = toyAudit();
    let planned = 0;
    const audit = {
      ...base,
      plan: (config: ToyConfig, input: number[]) => {
        planned += 1;
        return base.plan(config, input);
      },
    };
    const config = { n: 2, seed: 1, limits: {} };
    const input = await audit.prepare(config);
    const specs = audit.plan(config, input);
    expect(planned).toBe(1);
    const runtime = { signal: new AbortController().signal, progress: false };
    const result = await runAudit(audit, config, join(dir, 'planned.db'), { runtime, input, specs });
    expect(planned).toBe(1);
    expect(result.result.graded).toBe(2);
    await runAudit(audit, config, join(dir, 'replanned.db'), { runtime, input });
    expect(planned).toBe(2);
  });
});
