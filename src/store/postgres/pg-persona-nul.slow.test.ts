import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../../builtin-sims.js';
import { startSimWireServer } from '../../experiment/testing/sim-wire-server.js';
import type { FakeServer } from '../../models/testing/index.js';
import { loadPersonaConfig, personaReport, runPersona } from '../../persona-drift/run.js';
import { createPersonaSimProfile } from '../../persona-drift/sim.js';
import { writeWirePersonaConfig } from '../../persona-drift/testing/small-config.js';
import { openStore } from '../run-store.js';
import { postgresForTests, startTestCluster, type TestCluster } from './testing/cluster.js';

// The done-when: a persona run on PostgreSQL whose provider answers contain NUL
// characters (and lone surrogates) finishes, each cell called once, the answers stored exactly.

const bin = postgresForTests();

describe.skipIf(bin === null)('persona run on PostgreSQL with NUL in the answers', () => {
  let cluster: TestCluster;
  let server: FakeServer;
  let dir: string;
  const targetAnswers = new Map<string, string>();
  beforeAll(async () => {
    registerBuiltinSimProfiles();
    cluster = await startTestCluster(bin!);
    dir = mkdtempSync(join(tmpdir(), 'echolens-pgnul-'));
    const persona = createPersonaSimProfile({ name: 'nul-persona', drift: 0.6 });
    server = await startSimWireServer({
      judge: 'sim:judge',
      isJudge: (messages) => String(messages[0]?.content ?? '').startsWith('You are the echolens assistant-register judge'),
      target: (messages, request) => {
        const text = `${persona.answer({ model: 'wire', messages, params: {}, sample: request.index }, 1).text}\u0000 tail \ud800`;
        targetAnswers.set(text, text);
        return text;
      },
    });
  }, 120_000);
  afterAll(() => {
    server?.close();
    cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('finishes: every target cell done with its exact answer, one call per cell', async () => {
    const configFile = writeWirePersonaConfig(join(dir, 'nul.yaml'), server.baseURL);
    const db = cluster.createDatabase('persona_nul');
    const run = await runPersona(loadPersonaConfig(configFile), db, { progress: false, signal: new AbortController().signal });
    expect(run.interrupted).toBe(false);
    expect(run.targetCells).toBe(2 * 2 * 5);
    const store = openStore(db, { readonly: true });
    const cells = await store.cellResultsOfRun(run.runId);
    const targets = cells.filter((cell) => cell.model.includes('fake-target'));
    expect(targets.length).toBe(run.targetCells);
    for (const cell of targets) {
      expect(cell.result.status).toBe('done');
      expect(cell.result.text).toContain('\u0000 tail \ud800');
      expect(targetAnswers.has(cell.result.text!)).toBe(true);
      expect(cell.result.attempts).toBe(1);
    }
    expect(cells.every((cell) => cell.result.status === 'done')).toBe(true);
    // One call per distinct cell: the provider saw no repeat.
    expect(server.requests.length).toBe(new Set(cells.map((cell) => cell.key)).size);
    expect((await personaReport(store, run.runId)).drift[0]?.target).toContain('fake-target');
    await store.close();
  }, 300_000);
});
