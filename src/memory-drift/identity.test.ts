import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { runCliInProcess } from '../cli/testing/run-cli.js';
import { openStore } from '../store/run-store.js';
import type { FakeServer } from '../models/testing/index.js';
import { memoryConfigSchema } from './config.js';
import { loadMemoryConfig, runMemory } from './run.js';
import { createMemorySimProfile } from './sim.js';
import { serveSimMemory, writeWireMemoryConfig } from './testing/wire.js';

const dir = mkdtempSync(join(tmpdir(), 'echolens-identity-'));
const target = createMemorySimProfile({ name: 'identity-memory', samplingNoise: 0.1, seedHonouring: true });
registerBuiltinSimProfiles();
/** A seeded OpenAI-compatible server: the target's answer depends on the seed sent, the labeler is sim:labeler. */
const serve = () => serveSimMemory(target);

const configFile = (name: string, baseURL: string, extra: string[] = []): string =>
  writeWireMemoryConfig(dir, name, baseURL, ['questions: { limit: 2 }', 'conditions: [filler, age]', 'analysis: { B: 200 }', ...extra]);

describe('memory run: model identity without the transport URL', { timeout: 60_000 }, () => {
  let first: FakeServer;
  let second: FakeServer;
  beforeAll(async () => {
    first = await serve();
    second = await serve();
  });
  afterAll(async () => {
    await first.close();
    await second.close();
  });

  it('the same server restarted on another port answers nothing again; identity: url re-runs everything', async () => {
    const db = join(dir, 'identity.db');
    const runtime = { progress: false, signal: new AbortController().signal } as const;
    const a = await runMemory(loadMemoryConfig(configFile('a', first.baseURL)), db, runtime);
    // Per question: the no-memory reference and one no-memory sample, one filler, one age.
    expect(a.generationCells).toBe(2 * 4);
    // Every distinct cell once (two labelings with the same steps are one cell).
    const calls = first.requests.length;
    expect(calls).toBeGreaterThanOrEqual(a.generationCells);
    const b = await runMemory(loadMemoryConfig(configFile('b', second.baseURL)), db, runtime);
    expect(b.runId).not.toBe(a.runId);
    expect(b.labelerItems).toBe(a.labelerItems);
    expect(second.requests.length).toBe(0);
    // The old rule: the base URL is part of the identity, so the other port is another model.
    await runMemory(loadMemoryConfig(configFile('c', second.baseURL, ['identity: url'])), db, runtime);
    expect(second.requests.length).toBe(calls);
  });

  it('refuses two targets that are the same model on two base URLs unless identity: url', () => {
    const base = { labeler: 'sim:labeler', targets: ['vllm:m@http://127.0.0.1:1/v1', 'vllm:m@http://127.0.0.1:2/v1'] };
    const refused = memoryConfigSchema.safeParse(base);
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.message).toMatch(/same model \(vllm:m\).*identity: url/);
    expect(memoryConfigSchema.safeParse({ ...base, identity: 'url' }).success).toBe(true);
  });

  it('memory run --identity-includes-url records identity: url in the run config', async () => {
    const file = join(dir, 'flag.yaml');
    writeFileSync(
      file,
      ['targets: ["sim:memory"]', 'labeler: "sim:labeler"', 'questions: { limit: 2 }', 'conditions: [filler]', 'analysis: { B: 100 }'].join('\n'),
    );
    const db = join(dir, 'flag.db');
    const out = await runCliInProcess(['memory', 'run', file, '--db', db, '--identity-includes-url']);
    expect(out.code, out.stderr).toBe(0);
    const store = openStore(db, { readonly: true });
    try {
      expect(((await store.listRuns())[0]!.manifest.config as { identity?: string }).identity).toBe('url');
    } finally {
      await store.close();
    }
  });
});
