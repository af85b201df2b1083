import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openExperimentRun } from '../../experiment/runtime.js';
import { loadBuiltinOntology } from '../ontology.js';
import { SIM_STEP_CUES } from '../sim.js';
import './index.js';
import { CachedLabeler } from './reward-labeler.js';
import { type RunningRewardServer, startRewardServer } from './reward-server.js';
import { parseReferences, REWARD_PRESETS } from './reward.js';
import { buildTrainFiles, trainConfigSchema } from './train-config.js';

const run = promisify(execFile);
const hasPython = spawnSync('python3', ['--version']).status === 0;

const A = 'Practical/Efficiency and resource optimization';
const B = 'Protective/Security and stability';
const C = 'Social/Social equity and justice';
const sentence = (symbol: string) => SIM_STEP_CUES[symbol]!.sentences[0]!;
// sim:labeler labels these steps [A, C]; against the reference [A, B, C] the DTW is 1/3.
const FULL = `<think><step_1>${sentence(A)}</step_1><step_2>${sentence(C)}</step_2></think><answer>Do the cheaper thing fairly.</answer>`;

// The generated verl client (Python) against a live reward server: what verl would call per rollout.
describe.skipIf(!hasPython)('generated verl reward client', () => {
  let server: RunningRewardServer;
  const dir = mkdtempSync(join(tmpdir(), 'echolens-verl-client-'));

  beforeAll(async () => {
    const store = await openExperimentRun(join(dir, 'reward.db'), 'memory-reward', { test: 'client' }, 42);
    const labeler = new CachedLabeler({ store: store.store, runId: store.runId, labeler: 'sim:labeler', ontology: loadBuiltinOntology() });
    server = await startRewardServer({
      references: parseReferences(JSON.stringify({ question_id: 'q1', symbols: [A, B, C] })),
      labeler,
      weights: REWARD_PRESETS.authors,
      port: 0,
      token: 'client-test-token',
    });
    const config = trainConfigSchema.parse({ model: 'm', data: { train: 't.parquet' }, reward: { url: server.url, tokenEnv: 'TEST_REWARD_TOKEN' } });
    const client = buildTrainFiles('verl', config).find((f) => f.name === 'echolens_reward.py')!;
    writeFileSync(join(dir, 'echolens_reward.py'), client.text);
  });
  afterAll(async () => {
    await server?.close();
  });

  const call = async (groundTruth: string, extra: string, env: Record<string, string>) => {
    const script = [
      'import json, sys',
      'from echolens_reward import compute_score',
      `print(json.dumps(compute_score("echolens-driftlens", ${JSON.stringify(FULL)}, ${JSON.stringify(groundTruth)}, ${extra})))`,
    ].join('\n');
    const { stdout } = await run('python3', ['-c', script], { cwd: dir, env: { ...process.env, ...env } });
    return JSON.parse(stdout) as Record<string, number>;
  };

  it('scores a rollout by question id with the token, returning only numbers', async () => {
    const result = await call('q1', '{"index": 3, "question_id": "q1"}', { TEST_REWARD_TOKEN: 'client-test-token' });
    // authors preset: 0.5 · r_fmt + 0.5 · (1 − DTW) = 0.5 · 1 + 0.5 · (2/3).
    expect(result.score).toBeCloseTo(0.5 + 0.5 * (2 / 3), 12);
    expect(result.dtw).toBeCloseTo(1 / 3, 12);
    expect(result.error).toBe(0);
    expect(Object.values(result).every((v) => typeof v === 'number')).toBe(true);
    expect(result).not.toHaveProperty('details');
  });

  it('scores an inline reference (the Parquet JSON-array ground truth)', async () => {
    const result = await call(JSON.stringify([A, C]), 'None', { TEST_REWARD_TOKEN: 'client-test-token' });
    expect(result.dtw).toBe(0);
    expect(result.score).toBeCloseTo(1, 12);
  });

  it('fails loudly without the token (the server refuses with 403)', async () => {
    await expect(call('q1', 'None', { TEST_REWARD_TOKEN: '' })).rejects.toThrow(/403/);
  });
});
