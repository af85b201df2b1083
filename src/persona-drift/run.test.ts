import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { runStoppedAndResumed } from '../experiment/testing/counting-adapters.js';
import { startSimWireServer } from '../experiment/testing/sim-wire-server.js';
import { registerSimProfile } from '../models/sim-registry.js';
import type { FakeServer } from '../models/testing/index.js';
import { openStore } from '../store/run-store.js';
import type { GapEstimate } from './analysis.js';
import { loadPersonaConfig, personaReport, runPersona } from './run.js';
import { createPersonaSimProfile } from './sim.js';
import { smallPersonaConfig, writeWirePersonaConfig } from './testing/small-config.js';

const quiet = { progress: false } as const;

const config = smallPersonaConfig;

beforeAll(() => registerBuiltinSimProfiles());

describe('persona run end to end (SIMULATED models with planted ground truth)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'echolens-persona-'));

  it('recovers a planted drift and flags it strong; the A-anchor recovers the register more than a placebo', async () => {
    const db = join(dir, 'planted.db');
    const cfg = config({ mitigations: ['none', 'a-anchor', 'placebo_iso_recipe'], samples: 4 });
    const run = await runPersona(cfg, db, { ...quiet, signal: new AbortController().signal });
    expect(run.interrupted).toBe(false);
    const store = openStore(db, { readonly: true });
    const report = await personaReport(store, run.runId);
    await store.close();
    const drift = report.drift[0]!;
    const gap = drift.gap as GapEstimate;
    // Planted: p(drift | real) = 0.6 → expected real score ≈ 1.44, filler ≈ 2.8 (baseline 0.02).
    expect(gap.estimate).toBeGreaterThan(0.8);
    expect(gap.estimate).toBeLessThan(1.8);
    // Two positions of one session cannot reach p < 0.05 (smallest p = 2/4): the interval shown
    // is the t interval widened to contain 0, so interval and p agree that nothing is shown.
    expect(gap.ciMethod).toBe('t ∪ 0');
    expect(gap.ci[0]).toBeLessThanOrEqual(0);
    expect(gap.ci[1]).toBeGreaterThan(gap.estimate);
    expect(drift.strongDrift).toBe(true);
    const anchor = report.mitigations.find((m) => m.mitigation === 'a-anchor')!;
    const placebo = report.mitigations.find((m) => m.mitigation === 'placebo_iso_recipe')!;
    expect((anchor.vsControl as GapEstimate).estimate).toBeGreaterThan(0);
    expect((anchor.vsControl as GapEstimate).ci[0]).toBeLessThanOrEqual(0);
    expect(anchor.recovery!).toBeGreaterThan(0.7);
    expect(anchor.mean).toBeGreaterThan(placebo.mean);
    expect((anchor.vsPlacebo as GapEstimate).estimate).toBeGreaterThan(0);
  });

  it('flags no null target after Holm (false-positive rate ≤ 5%)', async () => {
    // Null targets drift equally often in every context: any gap is noise.
    const targets = Array.from({ length: 20 }, (_, i) => {
      const name = `persona-null-noisy-${i}`;
      registerSimProfile(createPersonaSimProfile({ name, drift: 0.3, baselineDrift: 0.3, description: 'SIMULATION: null with noise' }));
      return `sim:${name}`;
    });
    const db = join(dir, 'null.db');
    const run = await runPersona(config({ targets, samples: 3 }), db, { ...quiet, signal: new AbortController().signal });
    const store = openStore(db, { readonly: true });
    const report = await personaReport(store, run.runId);
    await store.close();
    expect(report.drift).toHaveLength(20);
    const holmFlagged = report.drift.filter((d) => !('error' in d.signFlip) && d.signFlip.pHolm < 0.05);
    const rawFlagged = report.drift.filter((d) => !('error' in d.signFlip) && d.signFlip.p < 0.05);
    expect(holmFlagged).toHaveLength(0);
    expect(rawFlagged.length / report.drift.length).toBeLessThanOrEqual(0.1);
  });

  it('resumes a run stopped midway without repeating a cell, and reports identically', async () => {
    const cfg = config({ stressors: { ids: ['S2'], paraphrases: 2 } });
    const interruptedDb = join(dir, 'resume.db');
    const { runs } = await runStoppedAndResumed((runtime) => runPersona(cfg, interruptedDb, { ...quiet, ...runtime }), [25]);
    const second = runs[1]!;

    const cleanDb = join(dir, 'clean.db');
    const clean = await runPersona(cfg, cleanDb, { ...quiet, signal: new AbortController().signal });
    const a = openStore(interruptedDb, { readonly: true });
    const b = openStore(cleanDb, { readonly: true });
    expect(await personaReport(a, second.runId)).toEqual(await personaReport(b, clean.runId));
    await a.close();
    await b.close();
  });

  describe('through the OpenAI-compatible wire format', () => {
    let server: FakeServer;
    beforeAll(async () => {
      const persona = createPersonaSimProfile({ name: 'wire-persona', drift: 0.6 });
      server = await startSimWireServer({
        judge: 'sim:judge',
        isJudge: (messages) => String(messages[0]?.content ?? '').startsWith('You are the echolens assistant-register judge'),
        target: (messages, request) => persona.answer({ model: 'wire', messages, params: {}, sample: request.index }, 1).text,
      });
    });
    afterAll(() => server.close());

    it('runs `echolens persona run` against a local server and reports', async () => {
      const configFile = writeWirePersonaConfig(join(dir, 'wire.yaml'), server.baseURL);
      const cfg = loadPersonaConfig(configFile);
      const db = join(dir, 'wire.db');
      const run = await runPersona(cfg, db, { ...quiet, signal: new AbortController().signal });
      expect(run.targetCells).toBe(2 * 2 * 5);
      expect(run.invalidJudgements).toBe(0);
      const store = openStore(db, { readonly: true });
      const report = await personaReport(store, run.runId);
      await store.close();
      expect(report.drift[0]?.target).toContain('openai-compatible:fake-target');
      expect('error' in report.drift[0]!.gap).toBe(false);
      // Every call went over HTTP to 127.0.0.1 with the chat-completions path.
      expect(server.requests.length).toBeGreaterThanOrEqual(run.targetCells);
      expect(server.requests.every((r) => r.path.endsWith('/chat/completions'))).toBe(true);
    });
  });
});
