import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { ConfigError } from '../core/errors.js';
import { packageRoot } from '../core/version.js';
import { openStore } from '../store/run-store.js';
import { continuationConfigSchema } from './config.js';
import { runContinuation } from './run.js';

registerBuiltinSimProfiles();

const DEMO = join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'echolens-continuation-resume-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('continuation resume', () => {
  it('resumes an unchanged run, and refuses one whose transcript changed', async () => {
    const session = join(dir, 'session.jsonl');
    copyFileSync(DEMO, session);
    const db = join(dir, 'run.db');
    const config = continuationConfigSchema.parse({ session, targets: ['sim:continuation'], cutpoints: { count: 10 } });
    const first = await runContinuation(config, db, { progress: false });
    expect(first.resumed).toBe(false);
    const again = await runContinuation(config, db, { progress: false });
    expect(again).toMatchObject({ runId: first.runId, resumed: true });
    const store = openStore(db, { readonly: true });
    const cells = (await store.cellsOfRun(first.runId)).length;
    await store.close();
    expect(cells).toBe(first.cells);

    // Same file name (so the same config and run id), other content: the plan it would resume differs.
    writeFileSync(session, readFileSync(DEMO, 'utf8').replaceAll('the ', 'that '));
    const error = await runContinuation(config, db, { progress: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(new RegExp(`changed since run ${first.runId} started in .*run\\.db \\(.+\\); restore them or use another --db`));
  }, 60_000);
});
