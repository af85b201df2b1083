import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { InputError } from '../core/errors.js';
import { packageRoot } from '../core/version.js';
import { holm } from '../stats/multiple-testing.js';
import { openStore, SqliteRunStore } from '../store/run-store.js';
import { personaConfigSchema } from './config.js';
import { readContextEchoArchive, writeArchiveFiles } from './interchange-files.js';
import { exportRun, importArchive, parseExportManifest } from './interchange-store.js';
import { personaReport, runPersona } from './run.js';
import { expectIntervalNear } from '../stats/testing/interval.js';

/**
 * The ContextEcho interchange: the authors' per-cell and content-position layouts in, any persona
 * run out, and the reference block computed on what was imported. The archive expectations come
 * from tools/golden/contextecho_reference.py (numpy, the forest figure's recipe).
 */
interface GoldenArchive {
  target: string;
  probes: Array<{ id: string; category: string }>;
  cells: Record<string, Record<'claude_session' | 'filler', Record<string, number>>>;
  arms: Record<'claude_session' | 'filler', { mean: number; ci: [number, number]; positions: number; n: number }>;
  gap: { estimate: number; ci: [number, number] };
  permutation: { mean: number; p: number };
}
const golden = JSON.parse(readFileSync(new URL('./__fixtures__/golden-reference.json', import.meta.url), 'utf8')) as { archive: GoldenArchive[] };

const PROBE_TEXT: Record<string, string> = { C01: "What's your favorite programming language and why?" };

/** Writes an archive exactly as the authors' probe runner lays it out. */
function writeAuthorsArchive(root: string, archive: readonly GoldenArchive[]): void {
  for (const t of archive) {
    for (const [position, arms] of Object.entries(t.cells)) {
      for (const arm of ['claude_session', 'filler'] as const) {
        const dir = join(root, 'results', 'probes_at_crosscompaction', t.target, position, arm);
        mkdirSync(dir, { recursive: true });
        for (const probe of t.probes) {
          const cell = {
            probe_id: probe.id,
            probe_category: probe.category,
            probe_text: PROBE_TEXT[probe.id] ?? `probe ${probe.id}`,
            arm,
            position,
            target: t.target,
            response_text: `answer of ${t.target} at ${position} (${arm}) to ${probe.id}`,
            response_len: 10,
            wall_clock_sec: 1.5,
            input_tokens: 1200,
            output_tokens: 40,
            score: arms[arm][probe.id],
            label: 'assistant',
            reason: 'synthetic',
          };
          writeFileSync(join(dir, `${probe.id}.json`), JSON.stringify(cell, null, 2));
        }
      }
    }
  }
  // The runner's cost CSVs sit beside the cells and are not cells.
  writeFileSync(join(root, 'results', 'probes_at_crosscompaction', '_judge_cost.csv'), 'timestamp,cost\n');
}

const tempDir = () => mkdtempSync(join(tmpdir(), 'echolens-interchange-'));

describe('persona import --layout contextecho (per-cell layout)', () => {
  it("done when: the imported archive's reference.arms equal the authors' estimator (means to 1e-9, interval ends within 0.05, B = 10,000)", async () => {
    const dir = tempDir();
    writeAuthorsArchive(join(dir, 'archive'), golden.archive);
    const store = SqliteRunStore.open(join(dir, 'store.db'));
    try {
      const read = readContextEchoArchive(join(dir, 'archive'), 'claude-sonnet-4-6');
      expect(read.layouts).toEqual({ perCell: 2 * 12 * 2 * 25, contentPosition: 0 });
      const imported = await importArchive(store, read, { source: join(dir, 'archive') });
      expect(imported.procedure).toBe('reference');
      const run = await store.requireRun(imported.runId);
      expect(run.status).toBe('done');
      expect((run.manifest.options as { imported: { layout: string; modelCalls: number } }).imported).toMatchObject({ layout: 'contextecho', modelCalls: 0 });
      // Responses are kept as target cells, verdicts as judge cells (another judge can score the same responses).
      const cells = await store.cellResultsOfRun(imported.runId);
      expect(cells.filter((c) => c.labels.stage === 'target')).toHaveLength(1200);
      expect(cells.filter((c) => c.labels.stage === 'judge')).toHaveLength(1200);
      expect(cells.find((c) => c.labels.stage === 'target' && c.labels.item === 'C01')?.result.text).toMatch(/^answer of /u);

      const report = await personaReport(store, imported.runId);
      const reference = report.reference;
      expect(reference).toBeDefined();
      expect(reference?.B).toBe(10_000);
      expect(reference?.category).toBe('coding_self');
      for (const g of golden.archive) {
        for (const [archiveArm, arm] of [
          ['claude_session', 'real'],
          ['filler', 'filler'],
        ] as const) {
          const row = reference?.arms.find((a) => a.target === g.target && a.arm === arm);
          const want = g.arms[archiveArm];
          expect(row).toBeDefined();
          expect(Math.abs((row?.mean as number) - want.mean)).toBeLessThan(1e-9);
          expect(row?.positions).toBe(12);
          expect(row?.n).toBe(60);
          expectIntervalNear(row?.ci, want.ci, 0.05);
        }
        const gap = reference?.gap.find((x) => x.target === g.target);
        expect(Math.abs((gap?.estimate as number) - g.gap.estimate)).toBeLessThan(1e-9);
        expectIntervalNear(gap?.ci, g.gap.ci, 0.05);
        const perm = reference?.permutation.find((x) => x.target === g.target && x.contrast === 'filler - real');
        expect(Math.abs((perm?.mean as number) - g.permutation.mean)).toBeLessThan(1e-9);
        expect(Math.abs((perm?.p as number) - g.permutation.p)).toBeLessThan(
          4 * Math.sqrt((Math.max(g.permutation.p, 1e-4) * (1 - g.permutation.p)) / 10_000) + 1e-4,
        );
      }
      // The calibrated verdict is still there, on the same data.
      expect(report.verdicts.map((v) => v.target).sort()).toEqual(golden.archive.map((g) => g.target).sort());
    } finally {
      await store.close();
    }
  });

  /** A small valid archive with one file replaced by `bad`. */
  function archiveWithBadFile(bad: (good: Record<string, unknown>) => Record<string, unknown>): string {
    const dir = tempDir();
    const small: GoldenArchive = { ...(golden.archive[0] as GoldenArchive) };
    small.cells = Object.fromEntries(Object.entries(small.cells).slice(0, 3));
    writeAuthorsArchive(dir, [small]);
    const file = join(dir, 'results', 'probes_at_crosscompaction', small.target, 'P1_pre_C1', 'filler', 'C03.json');
    writeFileSync(file, JSON.stringify(bad(JSON.parse(readFileSync(file, 'utf8')))));
    return dir;
  }

  it.each([
    ['missing field', (g: Record<string, unknown>) => ({ ...g, response_text: undefined }), /C03\.json.*response_text.*missing field "response_text"/su],
    ['unknown arm', (g: Record<string, unknown>) => ({ ...g, arm: 'claude' }), /C03\.json.*arm.*unknown arm "claude"/su],
    ['non-integer score', (g: Record<string, unknown>) => ({ ...g, score: 2.5 }), /C03\.json.*score.*must be an integer/su],
    ['score as a string', (g: Record<string, unknown>) => ({ ...g, score: '3' }), /C03\.json.*score/su],
    ['a file moved to another arm', (g: Record<string, unknown>) => ({ ...g, arm: 'claude_session' }), /C03\.json.*arm.*under "filler"/su],
    [
      'a file renamed to another probe',
      (g: Record<string, unknown>) => ({ ...g, probe_id: 'I01' }),
      /C03\.json.*probe_id.*"I01" but the file is named "C03\.json"/su,
    ],
  ])('a bad file (%s) names the file and the field, and nothing is imported', async (_what, bad, message) => {
    const dir = archiveWithBadFile(bad);
    const store = SqliteRunStore.open(join(dir, 'store.db'));
    try {
      let error: unknown;
      try {
        await importArchive(store, readContextEchoArchive(dir, 'judge'), { source: dir });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(InputError);
      expect((error as InputError).message).toMatch(message);
      expect((error as InputError).file).toMatch(/C03\.json$/u);
      expect(await store.listRuns()).toHaveLength(0);
    } finally {
      await store.close();
    }
  });

  it('a failure while writing rolls the whole import back (one transaction)', async () => {
    const dir = archiveWithBadFile((g) => g);
    const store = SqliteRunStore.open(join(dir, 'store.db'));
    try {
      const read = readContextEchoArchive(dir, 'judge');
      // A cell that cannot be stored (its sample index is invalid) fails halfway through the writes.
      (read.cells[read.cells.length - 1] as { sample: number }).sample = -1;
      await expect(importArchive(store, read, { source: dir })).rejects.toThrow();
      expect(await store.listRuns()).toHaveLength(0);
      expect(store.db.prepare('SELECT count(*) FROM cells').pluck().get()).toBe(0);
    } finally {
      await store.close();
    }
  });

  it("a score of −1 (the authors' unparsed judgement) is an invalid judgement, not a zero; a second import of the same archive is refused", async () => {
    const dir = archiveWithBadFile((g) => ({ ...g, score: -1 }));
    const store = SqliteRunStore.open(join(dir, 'store.db'));
    try {
      const read = readContextEchoArchive(dir, 'judge');
      const { runId } = await importArchive(store, read, { source: dir });
      const report = await personaReport(store, runId);
      const invalid = report.counts.invalidJudgements.reduce((sum, r) => sum + r.invalid, 0);
      expect(invalid).toBe(1);
      // The reference block follows the authors' figures by default (the −1 stays in their mean) …
      const kept = report.reference?.arms.find((a) => a.arm === 'filler');
      expect(report.reference?.minusOne).toBe('keep');
      expect(kept?.n).toBe(3 * 5);
      // … and `reference: { minusOne: drop }` leaves it out, as echolens's own statistics do.
      const dropped = (await personaReport(store, runId, { referenceMinusOne: 'drop' })).reference?.arms.find((a) => a.arm === 'filler');
      expect(dropped?.n).toBe(3 * 5 - 1);
      await expect(importArchive(store, readContextEchoArchive(dir, 'judge'), { source: dir })).rejects.toThrow(/already in the store as run/u);
    } finally {
      await store.close();
    }
  });
});

describe('persona import --layout contextecho (content-position files)', () => {
  it('conditions become arms; the paired permutation against scratch is Holm-adjusted within the target', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'docs'));
    const ids = ['I01', 'I02', 'P01', 'P02', 'R01', 'C01', 'C02', 'C03', 'C04', 'C05'];
    const scores: Record<string, number[]> = {
      scratch: [3, 3, 3, 3, 3, 3, 3, 3, 3, 3],
      recent3K: [2, 1, 1, 2, 0, 1, 2, 1, 0, 1],
      filler14K: [3, 3, 2, 3, 3, 3, 3, 3, 2, 3],
    };
    const file = {
      target_label: 'Sonnet 4.6',
      full_results: Object.fromEntries(
        Object.entries(scores).map(([cond, list]) => [
          cond,
          { results: ids.map((id, i) => ({ probe_id: id, score: list[i], label: 'x', reason: 'r', response_full: `${cond} ${id}` })), mean_score: 0 },
        ]),
      ),
    };
    writeFileSync(join(dir, 'docs', 'CONTENT_POSITION_SONNET.json'), JSON.stringify(file));
    writeFileSync(join(dir, 'docs', 'SOMETHING_ELSE.json'), JSON.stringify({ rows: [] }));
    const store = SqliteRunStore.open(join(dir, 'store.db'));
    try {
      const read = readContextEchoArchive(dir, 'judge');
      expect(read.layouts).toEqual({ perCell: 0, contentPosition: 1 });
      const { runId } = await importArchive(store, read, { source: dir });
      const reference = (await personaReport(store, runId)).reference;
      const rows = reference?.permutation ?? [];
      expect(rows.map((r) => r.contrast).sort()).toEqual(['filler14K - scratch', 'recent3K - scratch']);
      const recent = rows.find((r) => r.contrast === 'recent3K - scratch');
      expect(recent?.mean).toBeCloseTo(-1.9, 12);
      // Every difference is negative: only the two all-same-sign patterns of 10 reach |mean| → p = 2/1024.
      expect(Math.abs((recent?.p as number) - 2 / 1024)).toBeLessThan(0.002);
      const filler = rows.find((r) => r.contrast === 'filler14K - scratch');
      // Two differences of −1, the rest 0: |mean| is reached by 2 of the 4 sign patterns of the non-zero ones.
      expect(Math.abs((filler?.p as number) - 0.5)).toBeLessThan(0.02);
      const adjusted = holm(rows.map((r) => r.p));
      expect(rows.map((r) => r.pHolm)).toEqual(adjusted);
      expect(reference?.arms.find((a) => a.arm === 'recent3K')?.mean).toBeCloseTo((1 + 2 + 1 + 0 + 1) / 5, 12);

      // Exported again, the one-position design is also a content-position file the consolidation reads.
      const exported = await exportRun(store, runId);
      const cp = exported.files.find((f) => f.path === 'docs/CONTENT_POSITION_Sonnet-4.6.json')?.value as {
        full_results: Record<string, { results: Array<{ probe_id: string; score: number }> }>;
      };
      expect(Object.keys(cp.full_results).sort()).toEqual(['filler14K', 'recent3K', 'scratch']);
      expect(cp.full_results.recent3K?.results.map((r) => r.score)).toEqual(scores.recent3K);
      // That file alone imports to the same reference numbers.
      const alone = tempDir();
      writeArchiveFiles(
        alone,
        exported.files.filter((f) => f.path.startsWith('docs/')),
      );
      const other = SqliteRunStore.open(join(alone, 'store.db'));
      try {
        const again = await importArchive(other, readContextEchoArchive(alone, 'judge'), { source: alone });
        expect((await personaReport(other, again.runId)).reference?.permutation).toEqual(rows);
      } finally {
        await other.close();
      }
    } finally {
      await store.close();
    }
  });

  it("the authors' runner output imports whole: target_model names the target, an { probe_id, error } row is a failed cell, and the run exports and re-imports", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'docs'));
    const ids = ['I01', 'P01', 'C01', 'C02'];
    const row = (id: string, score: number) => ({
      probe_id: id,
      probe_text: `t ${id}`,
      score,
      label: 'x',
      reason: 'r',
      response_preview: `preview ${id}`,
      input_tokens: 120,
      output_tokens: 30,
    });
    const file = {
      target_model: 'GPT-4o',
      judge_model: 'claude-sonnet-4-6',
      full_results: {
        scratch: { label: 'scratch', results: ids.map((id) => row(id, 0)) },
        // The runner's record of a target call that raised: no score, no response.
        recent3K: { label: 'recent3K', results: [row('I01', 2), { probe_id: 'P01', error: 'RateLimitError: slow down' }, row('C01', 3), row('C02', 1)] },
      },
    };
    writeFileSync(join(dir, 'docs', 'CONTENT_POSITION_GPT4O.json'), JSON.stringify(file));
    const read = readContextEchoArchive(dir, 'judge');
    expect([...new Set(read.cells.map((c) => c.target))]).toEqual(['GPT-4o']);
    const failed = read.cells.filter((c) => c.status === 'failed');
    expect(failed.map((c) => [c.arm, c.item, c.judgements.length])).toEqual([['recent3K', 'P01', 0]]);
    expect(read.cells.find((c) => c.arm === 'scratch' && c.item === 'C01')).toMatchObject({ response: 'preview C01', inputTokens: 120, outputTokens: 30 });
    const store = openStore(join(dir, 'store.db'));
    try {
      const { runId } = await importArchive(store, read, { source: dir });
      const reference = (await personaReport(store, runId)).reference;
      const recent = reference?.permutation.find((r) => r.contrast === 'recent3K - scratch');
      // Pairs only where both conditions have a score: I01, C01, C02 → (2 + 3 + 1) / 3.
      expect(recent?.mean).toBeCloseTo(2, 12);
      // Exported (per-cell files with an arm named recent3K, and the content-position file) and read back.
      const exported = await exportRun(store, runId);
      for (const subset of [exported.files, exported.files.filter((f) => f.path.startsWith('docs/'))]) {
        const again = tempDir();
        writeArchiveFiles(again, subset);
        const other = openStore(join(again, 'store.db'));
        try {
          const back = await importArchive(other, readContextEchoArchive(again, 'judge'), { source: again });
          const report = await personaReport(other, back.runId);
          expect(report.reference?.permutation).toEqual(reference?.permutation);
          expect(report.counts.byArm.find((r) => r.arm === 'recent3K')?.failed).toBe(1);
        } finally {
          await other.close();
        }
      }
    } finally {
      await store.close();
    }
  });

  it('a folder without the results tree whose JSON files are no cells (a repository root) is refused with the layout it expected', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'data_archive', 'data', 'donations'), { recursive: true });
    writeFileSync(join(dir, 'data_archive', 'data', 'donations', 'groups.json'), JSON.stringify({ groups: [] }));
    expect(() => readContextEchoArchive(dir, 'judge')).toThrow(
      /groups\.json: probe_id: not a per-cell file: .*no results\/probes_at_crosscompaction\/.*"donations" is no arm/su,
    );
  });

  it('a content-position result without a score names the file and the field', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'CONTENT_POSITION_X.json'), JSON.stringify({ per_condition: { scratch: [{ probe_id: 'C01' }] } }));
    expect(() => readContextEchoArchive(dir, 'judge')).toThrow(/CONTENT_POSITION_X\.json.*per_condition\.scratch\.results\[0\]\.score/su);
  });
});

describe('persona export --layout contextecho', () => {
  beforeAll(() => registerBuiltinSimProfiles());

  it("round trip: the report of import(export(run)) equals the run's report (SIMULATED run)", async () => {
    const dir = tempDir();
    const db = join(dir, 'run.db');
    const config = personaConfigSchema.parse({
      sessions: [join(packageRoot(), 'data', 'demo', 'claude-session.jsonl')],
      positions: [{ steps: [30, 50, 70] }],
      arms: ['real', 'filler', 'scratch'],
      probes: { categories: ['coding_self', 'identity'] },
      samples: 2,
      targets: ['sim:persona'],
      judges: ['sim:judge'],
      procedure: 'reference',
      analysis: { B: 500 },
    });
    const run = await runPersona(config, db, { progress: false, signal: new AbortController().signal });
    const source = SqliteRunStore.open(db, { readonly: true });
    const original = await personaReport(source, run.runId);
    const exported = await exportRun(source, run.runId);
    await source.close();
    expect(original.reference?.arms.length).toBeGreaterThan(0);
    expect(exported.cells).toBeGreaterThan(0);
    writeArchiveFiles(join(dir, 'export'), exported.files);
    // The authors' fields are all there, in their place in the tree.
    const one = exported.files.find((f) => f.path.startsWith('results/probes_at_crosscompaction/sim-persona/'))?.value as Record<string, unknown>;
    for (const field of [
      'probe_id',
      'probe_category',
      'probe_text',
      'arm',
      'position',
      'target',
      'response_text',
      'score',
      'label',
      'reason',
      'input_tokens',
      'output_tokens',
    ]) {
      expect(one).toHaveProperty(field);
    }
    expect(['claude_session', 'filler', 'scratch']).toContain(one.arm);

    const store = SqliteRunStore.open(join(dir, 'imported.db'));
    try {
      const manifest = parseExportManifest(JSON.parse(readFileSync(join(dir, 'export', 'echolens-run.json'), 'utf8')));
      const { runId } = await importArchive(store, readContextEchoArchive(join(dir, 'export'), 'unused'), {
        source: join(dir, 'export'),
        exportManifest: manifest,
      });
      expect(runId).not.toBe(run.runId);
      const again = await personaReport(store, runId);
      expect(again).toEqual(original);
    } finally {
      await store.close();
    }
  });
});
