import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../store/run-store.js';
import { continuationRuns, memoryRuns, personaRuns } from '../../testing/audit-runs.js';
import type { ViewerServer } from './server.js';
import { startStoreViewer, viewerText } from './testing/store-viewer.js';

/** Run pages, filters, counts, cell navigation, pairs and the report route over every audit. */

const unescapeAmp = (s: string) => s.replace(/&amp;/gu, '&');
const matchCount = (page: string) => {
  const m = /id="match-count">(\d+) of (\d+) model answers match\./u.exec(page);
  if (!m) throw new Error('no match count');
  return { matched: Number(m[1]), answers: Number(m[2]) };
};
const runCounts = (page: string) => {
  const m = /id="run-counts">([\d,]+) cells?: ([\d,]+) model answers?(?: \+ ([\d,]+) judge\/labeler calls?)?\./u.exec(page);
  if (!m) throw new Error('no run counts');
  const n = (s: string | undefined) => Number((s ?? '0').replace(/,/gu, ''));
  return { total: n(m[1]), answers: n(m[2]), auxiliary: n(m[3]) };
};

describe('viewer run and cell pages (persona, memory, continuation)', { timeout: 300_000 }, () => {
  let viewer: ViewerServer;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-viewer-pages-'));
    const db = join(dir, 'runs.db');
    [ids.persona] = (await personaRuns(db, ['sim:persona'], 'nightly persona check')) as [string];
    [ids.memory] = (await memoryRuns(db, ['sim:memory'])) as [string];
    [ids.continuation] = (await continuationRuns(db, ['sim:continuation'])) as [string];
    viewer = await startStoreViewer(db, openStore(db, { readonly: true }));
  }, 300_000);
  afterAll(async () => viewer?.close());

  const text = (path: string) => viewerText(viewer, path);
  const json = async <T>(path: string) => (await (await fetch(new URL(path, viewer.url))).json()) as T;

  it('names runs from the config (name:, else audit · target · date) with the id beside it', async () => {
    const runs = await text('/');
    expect(runs).toContain('>nightly persona check</a>');
    expect(runs).toMatch(
      new RegExp(
        `>memory · sim:memory · \\d{4}-\\d\\d-\\d\\d</a> <span class="tag simulated-mark"[^>]*>SIMULATED</span><br><code class="muted run-id">${ids.memory}</code>`,
        'u',
      ),
    );
  });

  it('states counts that add up: the run’s cells = answers + judge/labeler entries, and the list counts answers', async () => {
    for (const audit of ['persona', 'memory', 'continuation']) {
      const page = await text(`/run?s=0&r=${ids[audit]}`);
      const counts = runCounts(page);
      const api = await json<{ total: number; matched: number }>(`/api/cells?s=0&r=${ids[audit]}`);
      const runs = await json<{ runs: Array<{ id: string; counts: { total: number } }> }>('/api/runs');
      expect(counts.total, audit).toBe(runs.runs.find((r) => r.id === ids[audit])!.counts.total);
      expect(counts.answers + counts.auxiliary, audit).toBe(counts.total);
      expect(matchCount(page), audit).toEqual({ matched: counts.answers, answers: counts.answers });
      expect(api.total, audit).toBe(counts.answers);
    }
  });

  it('filters on the factors each audit’s cells carry, and the counts follow', async () => {
    const selects = (page: string) => [...page.matchAll(/<select name="([^"]+)"/gu)].map((m) => m[1]);
    const persona = await text(`/run?s=0&r=${ids.persona}`);
    expect(selects(persona)).toEqual(expect.arrayContaining(['position', 'arm', 'mitigation', 'item', 'sample']));
    const memory = await text(`/run?s=0&r=${ids.memory}`);
    expect(selects(memory)).toEqual(expect.arrayContaining(['condition', 'tier', 'question_id']));
    expect(memory).toContain('name="min_dtw"');
    expect(memory).toContain('name="max_sri"');
    const continuation = await text(`/run?s=0&r=${ids.continuation}`);
    expect(selects(continuation)).toEqual(expect.arrayContaining(['cutpoint', 'arm']));
    expect(continuation).toContain('name="min_fidelity"');

    const all = matchCount(memory).answers;
    const age = await text(`/run?s=0&r=${ids.memory}&condition=age`);
    const ageApi = await json<{ matched: number; cells: Array<{ labels: { condition: string } }> }>(`/api/cells?s=0&r=${ids.memory}&condition=age`);
    expect(matchCount(age).matched).toBe(ageApi.matched);
    expect(ageApi.matched).toBeGreaterThan(0);
    expect(ageApi.matched).toBeLessThan(all);
    expect(ageApi.cells.every((c) => c.labels.condition === 'age')).toBe(true);
    // DTW range: only cells scored at or above the bound, fewer than all.
    const far = await text(`/run?s=0&r=${ids.memory}&min_dtw=0.5`);
    const dtwColumn = [...far.matchAll(/<td class="num">(\d\.\d{3}|—)<\/td><td class="num">(?:\d\.\d{3}|—)<\/td><td><div class="snippet">/gu)].map((m) => m[1]);
    expect(dtwColumn.length).toBeGreaterThan(0);
    expect(dtwColumn.every((v) => v !== '—' && Number(v) >= 0.5)).toBe(true);
    expect(matchCount(far).matched).toBeLessThan(all);
    const recent = await json<{ matched: number }>(`/api/cells?s=0&r=${ids.continuation}&arm=recent&cutpoint=C01`);
    expect(recent.matched).toBe(1);
  });

  it('shows the headline, the audit’s charts and links to the full report, which the viewer serves', async () => {
    for (const audit of ['persona', 'memory', 'continuation']) {
      const page = await text(`/run?s=0&r=${ids[audit]}`);
      expect(page, audit).toContain('id="headline"');
      expect(page, audit).toMatch(/<section class="charts" id="charts"><figure[\s\S]*?<svg/u);
      const link = /id="report-link" href="([^"]+)"/u.exec(page)?.[1];
      expect(link, audit).toBe(`/runs/${ids[audit]}/report?s=0`);
      const response = await fetch(new URL(unescapeAmp(link as string), viewer.url));
      expect(response.status).toBe(200);
      expect(response.headers.get('content-security-policy')).toMatch(/default-src 'none'; style-src 'sha256-/u);
      const report = await response.text();
      expect(report).toContain(ids[audit]);
      expect(report).not.toMatch(/<script/u);
    }
    expect((await fetch(new URL('/runs/nope/report', viewer.url))).status).toBe(404);
  });

  it('steps through cells in filter order and pairs each cell with its design partner', async () => {
    // Persona: real ⇄ filler at the same position, probe and sample.
    const list = await json<{ cells: Array<{ key: string; labels: Record<string, unknown> }> }>(`/api/cells?s=0&r=${ids.persona}&arm=real&mitigation=none`);
    const [first, second] = list.cells;
    const cell = await text(`/cell?s=0&r=${ids.persona}&k=${first!.key}&arm=real&mitigation=none`);
    expect(cell).toMatch(new RegExp(`id="cell-position">1 of ${list.cells.length}<`, 'u'));
    expect(unescapeAmp(/id="next-cell" href="([^"]+)"/u.exec(cell)?.[1] ?? '')).toBe(`/cell?s=0&r=${ids.persona}&k=${second!.key}&arm=real&mitigation=none`);
    expect(cell).not.toContain('id="prev-cell"');
    const pairKey = /id="pair-link" href="[^"]*k=([0-9a-f]+)"/u.exec(cell)?.[1];
    const all = await json<{ cells: Array<{ key: string; labels: Record<string, unknown> }> }>(`/api/cells?s=0&r=${ids.persona}`);
    const partner = all.cells.find((c) => c.key === pairKey)!;
    expect(partner.labels.arm).toBe('filler');
    for (const name of ['session', 'position', 'item', 'paraphrase', 'sample', 'surface']) expect(partner.labels[name], name).toEqual(first!.labels[name]);

    // Memory: a perturbed answer → the no-memory reference to the same question.
    const perturbed = (await json<{ cells: Array<{ key: string; labels: Record<string, unknown> }> }>(`/api/cells?s=0&r=${ids.memory}&condition=age`))
      .cells[0]!;
    const memoryCell = await text(`/cell?s=0&r=${ids.memory}&k=${perturbed.key}`);
    expect(memoryCell).toContain('no-memory reference answer to the same question');
    const refKey = /id="pair-link" href="[^"]*k=([0-9a-f]+)"/u.exec(memoryCell)?.[1];
    const memoryAll = await json<{ cells: Array<{ key: string; labels: Record<string, unknown> }> }>(`/api/cells?s=0&r=${ids.memory}`);
    const ref = memoryAll.cells.find((c) => c.key === refKey)!;
    expect(ref.labels.condition).toBe('no_perturbation');
    expect(ref.labels.question_id).toBe(perturbed.labels.question_id);
    expect(memoryCell).toMatch(/DTW (\d\.\d{3}|—)/u);
    // The reference links to the answers scored against it.
    const refPage = await text(`/cell?s=0&r=${ids.memory}&k=${refKey}`);
    const referenced = /id="referenced-by">[^<]*<a href="([^"]+)">(\d+) answers with a memory<\/a>/u.exec(refPage);
    expect(referenced).not.toBeNull();
    const dependents = await json<{ matched: number; cells: Array<{ labels: Record<string, unknown> }> }>(
      unescapeAmp(referenced![1]!).replace('/run?', '/api/cells?'),
    );
    expect(dependents.matched).toBe(Number(referenced![2]));
    expect(dependents.cells.every((c) => c.labels.question_id === perturbed.labels.question_id && c.labels.role === 'perturbed')).toBe(true);

    // Continuation: recent ⇄ cross at the same cutpoint.
    const recent = (await json<{ cells: Array<{ key: string; labels: Record<string, unknown> }> }>(`/api/cells?s=0&r=${ids.continuation}&arm=recent`))
      .cells[0]!;
    const contCell = await text(`/cell?s=0&r=${ids.continuation}&k=${recent.key}&arm=recent`);
    expect(contCell).toContain('the cross arm at the same cutpoint');
    // The answer is a tool call: the list and the cell page say which.
    const contList = await text(`/run?s=0&r=${ids.continuation}&arm=recent`);
    expect(contList).toMatch(/\[tool call: [^\]]+\]/u);
    expect(contCell).toMatch(/tool call: \{/u);
    const crossKey = /id="pair-link" href="[^"]*k=([0-9a-f]+)"/u.exec(contCell)?.[1];
    const contAll = await json<{ cells: Array<{ key: string; labels: Record<string, unknown> }> }>(`/api/cells?s=0&r=${ids.continuation}`);
    expect(contAll.cells.find((c) => c.key === crossKey)?.labels).toMatchObject({ arm: 'cross', cutpoint: recent.labels.cutpoint });
  });
});
