import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildTrainFiles, shellQuote, type TrainConfig, trainConfigSchema } from './train-config.js';

const dir = mkdtempSync(join(tmpdir(), 'echolens-train-config-'));
const hasPython = spawnSync('python3', ['--version']).status === 0;

function config(input: Record<string, unknown>): TrainConfig {
  return trainConfigSchema.parse({ model: 'Qwen/Qwen3-4B', ...input });
}

/** `bash -n` (parse only) or `python3 -m py_compile` on a written file; returns stderr when it fails. */
function syntaxError(name: string, text: string, kind: 'shell' | 'python'): string | null {
  const file = join(dir, name);
  writeFileSync(file, text);
  const result =
    kind === 'shell' ? spawnSync('bash', ['-n', file], { encoding: 'utf8' }) : spawnSync('python3', ['-m', 'py_compile', file], { encoding: 'utf8' });
  return result.status === 0 ? null : `${result.stderr}`;
}

describe('train-config launch files', () => {
  it('verl: a shell script that parses, with the paper preset (KL 0.01, 1,024 tokens) and the reward client beside it', () => {
    const files = buildTrainFiles('verl', config({ data: { train: 'grpo/train.parquet', val: 'grpo/train-val.parquet' } }));
    expect(files.map((f) => f.name)).toEqual(['', 'echolens_reward.py']);
    const script = files[0]!.text;
    expect(syntaxError('verl.sh', script, 'shell')).toBeNull();
    expect(script).toContain("'actor_rollout_ref.actor.kl_loss_coef=0.01'");
    expect(script).toContain("'data.max_response_length=1024'");
    expect(script).toContain("'data.val_files=grpo/train-val.parquet'");
    expect(script).toContain("'actor_rollout_ref.rollout.n=4'");
    expect(script).toContain('custom_reward_function.name=compute_score');
    expect(script).toContain('klCoef = 0.01  (paper App. I.2)');
    expect(script).toContain('ECHOLENS_REWARD_URL:-http://127.0.0.1:8787');
  });

  it.skipIf(!hasPython)('verl: the reward client compiles under python3', () => {
    const client = buildTrainFiles('verl', config({ data: { train: 'train.parquet' }, reward: { url: 'http://10.0.0.5:9000', tokenEnv: 'MY_TOKEN' } }))[1]!;
    expect(syntaxError('echolens_reward.py', client.text, 'python')).toBeNull();
    expect(client.text).toContain('"http://10.0.0.5:9000"');
    expect(client.text).toContain('"MY_TOKEN"');
  });

  it("verl: the authors' Qwen3 preset carries their KL 0.001 and 640 response tokens, and config overrides win", () => {
    const qwen = buildTrainFiles('verl', config({ preset: 'authors-qwen3', data: { train: 'train.parquet' } }))[0]!.text;
    expect(qwen).toContain("'actor_rollout_ref.actor.kl_loss_coef=0.001'");
    expect(qwen).toContain("'data.max_response_length=640'");
    expect(qwen).toContain("'actor_rollout_ref.actor.optim.lr=0.000003'");
    expect(qwen).toContain("klCoef = 0.001  (authors' train_grpo_qwen3.sh)");
    const set = buildTrainFiles('verl', config({ data: { train: 'train.parquet' }, grpo: { klCoef: 0.05 } }))[0]!.text;
    expect(set).toContain("'actor_rollout_ref.actor.kl_loss_coef=0.05'");
    expect(set).toContain('klCoef = 0.05  (this config)');
  });

  it('openrlhf: a shell script that parses, pointing at /openrlhf with the label column', () => {
    const script = buildTrainFiles('openrlhf', config({ data: { train: "my data/prompts's.jsonl" }, reward: { url: 'http://127.0.0.1:8787/' } }))[0]!.text;
    expect(syntaxError('openrlhf.sh', script, 'shell')).toBeNull();
    expect(script).toContain("--remote_rm_url 'http://127.0.0.1:8787/openrlhf'");
    expect(script).toContain(`--prompt_data ${shellQuote("my data/prompts's.jsonl")}`);
    expect(script).toContain("--label_key 'label'");
    expect(script).toContain("--init_kl_coef '0.01'");
    expect(script).toContain("--generate_max_len '1024'");
    expect(script).toContain("--train_batch_size '32'");
  });

  it.skipIf(!hasPython)('trl: a Python DPO script that compiles, with the paper settings', () => {
    const [file] = buildTrainFiles('trl', config({ data: { train: 'dpo-data/trl/mixed.jsonl' }, output: 'out "dpo"' }));
    expect(file!.kind).toBe('python');
    expect(syntaxError('train_dpo.py', file!.text, 'python')).toBeNull();
    for (const fragment of [
      'beta=0.1,',
      'learning_rate=0.000005,',
      'num_train_epochs=3,',
      'max_length=1024,',
      'gradient_accumulation_steps=16,',
      'loss_type="sigmoid"',
      'output_dir="out \\"dpo\\"",',
    ]) {
      expect(file!.text).toContain(fragment);
    }
  });

  it('refuses data of the wrong kind and unknown presets with a config error', () => {
    expect(() => buildTrainFiles('verl', config({ data: { train: 'train.jsonl' } }))).toThrow(/\.parquet/);
    expect(() => buildTrainFiles('verl', config({ data: { train: 'my train.parquet' } }))).toThrow(/Hydra/);
    expect(() => buildTrainFiles('trl', config({ data: { train: 'train.parquet' } }))).toThrow(/\.jsonl/);
    expect(() => buildTrainFiles('verl', config({ preset: 'nope', data: { train: 't.parquet' } }))).toThrow(/preset "nope"/);
    expect(() => trainConfigSchema.parse({ model: 'm', data: { train: 't.parquet' }, grpo: { klCoef: -1 } })).toThrow();
  });
});
