import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { spendOrNull, spendText } from '../core/money.js';
import { startSimWireServer } from '../experiment/testing/sim-wire-server.js';
import type { FakeServer } from '../models/testing/index.js';
import { createPersonaSimProfile } from '../persona-drift/sim.js';
import { DEMO_SESSION } from '../persona-drift/testing/small-config.js';
import { startStoreViewer, viewerText } from '../report/viewer/testing/store-viewer.js';
import { openStore } from '../store/run-store.js';
import { runCliInProcess } from './testing/run-cli.js';
import { reportAndGateSurfaces, ZERO_DOLLARS } from './testing/surfaces.js';

/**
 * A grid whose target has no known price (an OpenAI-compatible server's model): every surface
 * says its cost is unknown (JSON null), and none prints $0 — $0 is for prices known to be zero.
 */

describe('unknown cost is "unknown", never $0', () => {
  let server: FakeServer;
  const dir = mkdtempSync(join(tmpdir(), 'echolens-unpriced-'));
  const db = join(dir, 'run.db');
  let runArgs: string[];
  const outputs: Record<string, string> = {};

  beforeAll(async () => {
    registerBuiltinSimProfiles();
    const persona = createPersonaSimProfile({ name: 'unpriced-persona', drift: 0.6 });
    server = await startSimWireServer({
      judge: 'sim:judge',
      isJudge: (messages) => String(messages[0]?.content ?? '').startsWith('You are the echolens assistant-register judge'),
      target: (messages, request) => persona.answer({ model: 'wire', messages, params: {}, sample: request.index }, 1).text,
    });
    runArgs = [
      'persona',
      'run',
      '--session',
      DEMO_SESSION,
      '--target',
      `openai-compatible:unpriced-model@${server.baseURL}`,
      '--judge',
      `openai-compatible:unpriced-judge@${server.baseURL}`,
      '--set',
      'positions=[{uniform: 2}]',
      '--set',
      'analysis.B=200',
      '--db',
      db,
    ];
  });
  afterAll(() => server?.close());

  it('the dry run prices the grid as unknown', async () => {
    const dry = await runCliInProcess([...runArgs, '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/cost ≈ unknown \(no price for: .*openai-compatible:unpriced-model/u);
    expect(dry.stdout).not.toMatch(ZERO_DOLLARS);
    outputs['dry run'] = dry.stdout + dry.stderr;
  });

  it('progress, summary, reports (html, md, json, csv), gate (text, md, json, JUnit) and the viewer never say $0', async () => {
    const run = await runCliInProcess(runArgs);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/spend unknown \(\d+ cells without a known price\)/u);
    expect(run.stderr).toMatch(/cost unknown/u);
    outputs.run = run.stdout + run.stderr;

    Object.assign(outputs, await reportAndGateSurfaces(db, dir));
    expect(outputs['report md']).toMatch(/Spend unknown \(\d+ cells without a known price\)/u);
    const json = JSON.parse(outputs['report json'] as string) as {
      runs: Array<{
        accounting: { spendUsd: number | null; pricedSpendUsd: number; unpricedCells: number };
        document: { cost: { usd: number | null; unpricedCells: number } };
      }>;
    };
    expect(json.runs[0]?.accounting.spendUsd).toBeNull();
    expect(json.runs[0]?.accounting.unpricedCells).toBeGreaterThan(0);
    // The result document every surface reads says the same: unknown is null.
    expect(json.runs[0]?.document.cost).toMatchObject({ usd: null, unpricedCells: json.runs[0]?.accounting.unpricedCells });

    expect(outputs['report html']).toMatch(/unknown \(\d+ cells without a known price\)/u);

    const store = openStore(db, { readonly: true });
    const viewer = await startStoreViewer(db, store);
    try {
      const runId = (await store.listRuns())[0]!.id;
      const page = async (path: string) => {
        const body = await viewerText(viewer, path);
        outputs[`viewer ${path}`] = body;
        return body;
      };
      await page('/');
      const runPage = await page(`/run?s=0&r=${runId}`);
      await page(`/analysis?s=0&r=${runId}`);
      await page(`/runs/${runId}/report`);
      // A target cell's page shows that cell's cost.
      const cell = /href="(\/cell\?[^"]+)"/u.exec(runPage)?.[1]?.replace(/&amp;/gu, '&');
      expect(cell).toBeDefined();
      expect(await page(cell as string)).toMatch(/cost unknown \(no price\)/u);
    } finally {
      await viewer.close();
      await store.close();
    }

    for (const [surface, text] of Object.entries(outputs)) {
      expect(text.length, surface).toBeGreaterThan(0);
      expect(ZERO_DOLLARS.exec(text)?.[0] ?? null, `${surface} says $0`).toBeNull();
    }
  }, 120_000);

  it('a partly priced total shows the priced part and the unknown rest', () => {
    expect(spendText(0.25, 0)).toBe('$0.2500');
    expect(spendText(0.25, 3)).toBe('$0.2500 + unknown (3 cells without a known price)');
    expect(spendText(0, 1)).toBe('unknown (1 cell without a known price)');
    expect(spendText(0, 0)).toBe('$0.0000');
    expect(spendOrNull(0.25, 3)).toBeNull();
    expect(spendOrNull(0, 0)).toBe(0);
  });

  it('the pattern catches what it must', () => {
    for (const zero of ['$0', 'spend $0.0000;', '$0.00 – $0.00']) expect(zero).toMatch(ZERO_DOLLARS);
    for (const priced of ['$0.0123', '$0.5', '$10.00', '$1']) expect(priced).not.toMatch(ZERO_DOLLARS);
  });
});
