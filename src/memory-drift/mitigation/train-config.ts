import { z } from 'zod';
import { ConfigError } from '../../core/errors.js';

/**
 * Launch files for the trainers (DriftLens §5, App. I): GRPO with verl or OpenRLHF against the
 * reward server, DPO with TRL on the SymPreference export. Pure: a config in, file texts out;
 * echolens never trains. Every hyperparameter has a source (the paper's App. I, one of the
 * authors' launch scripts, or an engine default), listed in the file header and in
 * docs/mitigation.md#hyperparameters.
 */

export type TrainEngine = 'verl' | 'openrlhf' | 'trl';
export const TRAIN_ENGINES: readonly TrainEngine[] = ['verl', 'openrlhf', 'trl'];

type Sourced<T> = { [K in keyof T]: { value: T[K]; source: string } };

const PAPER = 'paper App. I.2';
const DPO_PAPER = 'paper App. I.1';
const SCRIPT = (model: string) => `authors' train_grpo_${model}.sh`;

/** The paper's GRPO settings; what the paper leaves open comes from the authors' Phi-4 / Gemma-2 scripts (they agree). */
const GRPO_PAPER: Sourced<GrpoHyperparameters> = {
  trainBatchSize: { value: 8, source: PAPER },
  ppoMiniBatchSize: { value: 8, source: "authors' scripts (all three)" },
  microBatchPerGpu: { value: 1, source: SCRIPT('phi4') },
  rolloutN: { value: 4, source: PAPER },
  temperature: { value: 1.0, source: PAPER },
  maxPromptLength: { value: 640, source: PAPER },
  maxResponseLength: { value: 1024, source: PAPER },
  klCoef: { value: 0.01, source: PAPER },
  klLossType: { value: 'low_var_kl', source: "authors' scripts (all three)" },
  entropyCoeff: { value: 0, source: "authors' scripts (all three)" },
  learningRate: { value: 1e-6, source: `${SCRIPT('phi4')} and ${SCRIPT('gemma2')} (the paper gives none)` },
  epochs: { value: 3, source: PAPER },
  saveFreq: { value: 20, source: SCRIPT('phi4') },
  testFreq: { value: 10, source: SCRIPT('phi4') },
  rolloutTensorParallel: { value: 4, source: "authors' scripts (all three)" },
  gpuMemoryUtilization: { value: 0.6, source: "authors' scripts (all three)" },
};

const override = <T>(base: Sourced<T>, source: string, values: Partial<T>): Sourced<T> => {
  const out = { ...base };
  for (const [key, value] of Object.entries(values) as Array<[keyof T, T[keyof T]]>) out[key] = { value, source };
  return out;
};

/**
 * GRPO presets. `paper` = App. I.2 (KL 0.01, 1,024 response tokens), which the authors' Phi-4 and
 * Gemma-2 scripts also use; `authors-qwen3` = their Qwen3-4B script, the one that departs
 * (KL 0.001, 640 response tokens, lr 3e-6).
 */
export const GRPO_PRESETS: Readonly<Record<string, Sourced<GrpoHyperparameters>>> = Object.freeze({
  paper: GRPO_PAPER,
  'authors-qwen3': override(GRPO_PAPER, SCRIPT('qwen3'), {
    maxResponseLength: 640,
    klCoef: 0.001,
    learningRate: 3e-6,
    microBatchPerGpu: 2,
    saveFreq: 50,
    testFreq: 5,
  }),
  'authors-phi4': override(GRPO_PAPER, SCRIPT('phi4'), { learningRate: 1e-6, microBatchPerGpu: 1 }),
  'authors-gemma2': override(GRPO_PAPER, SCRIPT('gemma2'), { learningRate: 1e-6, microBatchPerGpu: 2 }),
});

/** DPO (App. I.1). β is not in the paper: 0.1 is TRL's default. */
export const DPO_PAPER_HYPERPARAMETERS: Sourced<DpoHyperparameters> = {
  beta: { value: 0.1, source: "TRL's default (the paper gives no β)" },
  learningRate: { value: 5e-6, source: DPO_PAPER },
  epochs: { value: 3, source: DPO_PAPER },
  warmupRatio: { value: 0.1, source: DPO_PAPER },
  maxLength: { value: 1024, source: DPO_PAPER },
  perDeviceBatchSize: { value: 1, source: DPO_PAPER },
  gradientAccumulation: { value: 16, source: DPO_PAPER },
  saveSteps: { value: 500, source: DPO_PAPER },
  loggingSteps: { value: 10, source: DPO_PAPER },
};

const positive = z.number().positive();
const grpoFields = z.strictObject({
  /** Prompts per step (verl data.train_batch_size; OpenRLHF rollout_batch_size). */
  trainBatchSize: z.number().int().positive(),
  ppoMiniBatchSize: z.number().int().positive(),
  microBatchPerGpu: z.number().int().positive(),
  /** K, rollouts per prompt. */
  rolloutN: z.number().int().min(2),
  temperature: positive,
  maxPromptLength: z.number().int().positive(),
  maxResponseLength: z.number().int().positive(),
  /** λ_KL, as an actor loss (not in the reward). */
  klCoef: z.number().min(0),
  klLossType: z.enum(['low_var_kl', 'kl', 'mse']),
  entropyCoeff: z.number().min(0),
  learningRate: positive,
  epochs: z.number().int().positive(),
  saveFreq: z.number().int().positive(),
  testFreq: z.number().int().positive(),
  rolloutTensorParallel: z.number().int().positive(),
  gpuMemoryUtilization: z.number().gt(0).max(1),
});
const dpoFields = z.strictObject({
  beta: positive,
  learningRate: positive,
  epochs: z.number().int().positive(),
  warmupRatio: z.number().min(0).max(1),
  maxLength: z.number().int().positive(),
  perDeviceBatchSize: z.number().int().positive(),
  gradientAccumulation: z.number().int().positive(),
  saveSteps: z.number().int().positive(),
  loggingSteps: z.number().int().positive(),
});
export type GrpoHyperparameters = z.infer<typeof grpoFields>;
export type DpoHyperparameters = z.infer<typeof dpoFields>;

/** `echolens memory train-config` config (docs/mitigation.md#launch-files). */
export const trainConfigSchema = z.strictObject({
  /** Policy (and reference) model: a Hugging Face id or a local path. */
  model: z.string().trim().min(1),
  /** GRPO preset (verl, OpenRLHF): paper, authors-qwen3, authors-phi4, authors-gemma2. */
  preset: z.string().default('paper'),
  data: z.strictObject({
    /** verl: Parquet from `memory grpo-data`; OpenRLHF: its JSONL; TRL: dpo-pairs' trl/*.jsonl. */
    train: z.string().trim().min(1),
    /** Validation data; null (`--set data.val=null`) = none, as when absent. */
    val: z
      .string()
      .trim()
      .min(1)
      .nullish()
      .transform((v) => v ?? undefined),
  }),
  reward: z
    .strictObject({
      url: z.url().default('http://127.0.0.1:8787'),
      /** Environment variable holding the server's token (sent by the verl client). */
      tokenEnv: z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
        .default('ECHOLENS_REWARD_TOKEN'),
    })
    .default({ url: 'http://127.0.0.1:8787', tokenEnv: 'ECHOLENS_REWARD_TOKEN' }),
  output: z.string().trim().min(1).default('checkpoints/echolens-driftlens'),
  project: z.string().trim().min(1).default('echolens-driftlens'),
  gpusPerNode: z.number().int().positive().default(8),
  nodes: z.number().int().positive().default(1),
  grpo: grpoFields.partial().default({}),
  dpo: dpoFields.partial().default({}),
});

export type TrainConfig = z.infer<typeof trainConfigSchema>;

export interface TrainFile {
  /** Name relative to the main file's folder ('' = the main file itself). */
  name: string;
  text: string;
  kind: 'shell' | 'python';
}

/** The hyperparameters with their sources after the preset and the config's overrides. */
export function resolveGrpoHyperparameters(config: TrainConfig): Sourced<GrpoHyperparameters> {
  const preset = GRPO_PRESETS[config.preset];
  if (preset === undefined) throw new ConfigError(`preset "${config.preset}" is not one of ${Object.keys(GRPO_PRESETS).join(', ')}`);
  return override(preset, 'this config', config.grpo as Partial<GrpoHyperparameters>);
}

const values = <T>(sourced: Sourced<T>): T => Object.fromEntries(Object.entries(sourced).map(([k, v]) => [k, (v as { value: unknown }).value])) as T;

/** POSIX shell single-quoting. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A Python string literal (JSON string syntax is valid Python). */
const py = (text: string) => JSON.stringify(text);

function headerLines(engine: TrainEngine, config: TrainConfig, sourced: Record<string, { value: unknown; source: string }>): string[] {
  return [
    `# Generated by \`echolens memory train-config --engine ${engine}\` (DriftLens §5). Training does not run in echolens.`,
    `# model ${config.model}; preset ${engine === 'trl' ? 'paper (DPO)' : config.preset}. Hyperparameters and where each comes from:`,
    ...Object.entries(sourced).map(([key, { value, source }]) => `#   ${key} = ${String(value)}  (${source})`),
  ];
}

/** A GRPO launch script: header, `notes`, `setup`, then `python3 -m <module>` with `args` (one a line) and the script's own arguments. */
function grpoShellScript(engine: TrainEngine, config: TrainConfig, notes: string[], setup: string[], module: string, args: string[]): TrainFile {
  const lines = ['#!/usr/bin/env bash', ...headerLines(engine, config, resolveGrpoHyperparameters(config)), ...notes, 'set -euo pipefail', ...setup];
  return { name: '', text: [...lines, `python3 -m ${module} \\`, ...args.map((a) => `  ${a} \\`), '  "$@"', ''].join('\n'), kind: 'shell' };
}

// verl reads these through Hydra; a value with Hydra's special characters would need its own quoting.
const HYDRA_SAFE = /^[A-Za-z0-9_./@:+~-]+$/;

function checkPath(value: string, field: string, engine: TrainEngine, extension: RegExp, what: string): void {
  if (!extension.test(value)) throw new ConfigError(`${field} "${value}" must be ${what} for --engine ${engine}`);
  if (engine === 'verl' && !HYDRA_SAFE.test(value)) {
    throw new ConfigError(`${field} "${value}": use a path of letters, digits and . _ / @ : + ~ - (verl parses it as a Hydra override)`);
  }
}

/** The verl reward client: forwards each rollout to the echolens reward server's /verl route. */
export function verlRewardClient(config: TrainConfig): string {
  return `"""echolens reward client for verl (custom_reward_function.name=compute_score).

Generated by \`echolens memory train-config --engine verl\`. Each call posts one rollout to the
echolens reward server (\`echolens memory reward-server\`), which labels the response's reasoning
steps and scores them against the reference trajectory of the question named by ground_truth.
Set ECHOLENS_REWARD_URL to override the server address, and ${config.reward.tokenEnv} when the
server was started with --token.
"""
import json
import os
import urllib.request

URL = os.environ.get("ECHOLENS_REWARD_URL", ${py(config.reward.url)}).rstrip("/") + "/verl"
TOKEN = os.environ.get(${py(config.reward.tokenEnv)}, "")


def _plain(value):
    # verl hands over numpy scalars and arrays inside extra_info; JSON needs plain values.
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    return str(value)


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    body = json.dumps(
        {"data_source": data_source, "solution_str": solution_str, "ground_truth": ground_truth, "extra_info": extra_info or {}},
        default=_plain,
    ).encode("utf-8")
    headers = {"content-type": "application/json"}
    if TOKEN:
        headers["authorization"] = "Bearer " + TOKEN
    request = urllib.request.Request(URL, data=body, headers=headers)
    with urllib.request.urlopen(request, timeout=600) as response:
        result = json.load(response)
    # verl averages every extra key it is given: keep the numbers (score and its components).
    return {key: value for key, value in result.items() if isinstance(value, (int, float)) and not isinstance(value, bool)}
`;
}

function verlScript(config: TrainConfig): TrainFile[] {
  checkPath(config.data.train, 'data.train', 'verl', /\.parquet$/i, 'a .parquet file (memory grpo-data --format verl)');
  if (config.data.val !== undefined) checkPath(config.data.val, 'data.val', 'verl', /\.parquet$/i, 'a .parquet file');
  if (!HYDRA_SAFE.test(config.model))
    throw new ConfigError(`model "${config.model}": use a Hugging Face id or a path without spaces or quotes (verl parses it as a Hydra override)`);
  if (!HYDRA_SAFE.test(config.output) || !HYDRA_SAFE.test(config.project))
    throw new ConfigError('output and project must be plain names (verl parses them as Hydra overrides)');
  const h = values(resolveGrpoHyperparameters(config));
  const overrides = [
    'algorithm.adv_estimator=grpo',
    `data.train_files=${config.data.train}`,
    `data.val_files=${config.data.val ?? config.data.train}`,
    `data.train_batch_size=${h.trainBatchSize}`,
    `data.max_prompt_length=${h.maxPromptLength}`,
    `data.max_response_length=${h.maxResponseLength}`,
    'data.filter_overlong_prompts=True',
    'data.truncation=error',
    `actor_rollout_ref.model.path=${config.model}`,
    'actor_rollout_ref.model.use_remove_padding=True',
    'actor_rollout_ref.model.enable_gradient_checkpointing=True',
    `actor_rollout_ref.actor.optim.lr=${h.learningRate}`,
    `actor_rollout_ref.actor.ppo_mini_batch_size=${h.ppoMiniBatchSize}`,
    `actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=${h.microBatchPerGpu}`,
    'actor_rollout_ref.actor.use_kl_loss=True',
    `actor_rollout_ref.actor.kl_loss_coef=${h.klCoef}`,
    `actor_rollout_ref.actor.kl_loss_type=${h.klLossType}`,
    `actor_rollout_ref.actor.entropy_coeff=${h.entropyCoeff}`,
    'actor_rollout_ref.actor.fsdp_config.param_offload=True',
    'actor_rollout_ref.actor.fsdp_config.optimizer_offload=True',
    'actor_rollout_ref.rollout.name=vllm',
    `actor_rollout_ref.rollout.n=${h.rolloutN}`,
    `actor_rollout_ref.rollout.temperature=${h.temperature}`,
    `actor_rollout_ref.rollout.tensor_model_parallel_size=${h.rolloutTensorParallel}`,
    `actor_rollout_ref.rollout.gpu_memory_utilization=${h.gpuMemoryUtilization}`,
    'algorithm.use_kl_in_reward=False',
    `trainer.total_epochs=${h.epochs}`,
    `trainer.save_freq=${h.saveFreq}`,
    `trainer.test_freq=${h.testFreq}`,
    `trainer.n_gpus_per_node=${config.gpusPerNode}`,
    `trainer.nnodes=${config.nodes}`,
    `trainer.project_name=${config.project}`,
    `trainer.default_local_dir=${config.output}`,
    'trainer.val_before_train=True',
    "trainer.logger=['console']",
  ];
  const notes = [
    '# Data: `echolens memory grpo-data <memory config> --format verl --val-fraction 0.2 -o <train.parquet>`.',
    '# Reward: start `echolens memory reward-server --references <refs.jsonl> --labeler <model>` first (the',
    "# paper: --preset paper; the authors' scripts: --preset authors). Extra Hydra overrides: pass them as arguments.",
  ];
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion in the generated script
  const setup = ['here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"', `export ECHOLENS_REWARD_URL="\${ECHOLENS_REWARD_URL:-${config.reward.url}}"`];
  const script = grpoShellScript('verl', config, notes, setup, 'verl.trainer.main_ppo', [
    ...overrides.map(shellQuote),
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion in the generated script
    '"custom_reward_function.path=${here}/echolens_reward.py"',
    'custom_reward_function.name=compute_score',
  ]);
  return [script, { name: 'echolens_reward.py', text: verlRewardClient(config), kind: 'python' }];
}

function openrlhfScript(config: TrainConfig): TrainFile[] {
  checkPath(config.data.train, 'data.train', 'openrlhf', /\.jsonl$/i, 'a .jsonl file (memory grpo-data --format openrlhf)');
  if (config.data.val !== undefined) checkPath(config.data.val, 'data.val', 'openrlhf', /\.jsonl$/i, 'a .jsonl file');
  const h = values(resolveGrpoHyperparameters(config));
  const url = `${config.reward.url.replace(/\/$/, '')}/openrlhf`;
  const flags: string[][] = [
    ['--pretrain', config.model],
    ['--remote_rm_url', url],
    ['--prompt_data', config.data.train],
    ...(config.data.val !== undefined ? [['--eval_dataset', config.data.val]] : []),
    ['--input_key', 'prompt'],
    ['--label_key', 'label'],
    ['--apply_chat_template'],
    ['--advantage_estimator', 'group_norm'],
    ['--n_samples_per_prompt', String(h.rolloutN)],
    ['--rollout_batch_size', String(h.trainBatchSize)],
    // OpenRLHF counts the training batch in samples: prompts × K.
    ['--train_batch_size', String(h.ppoMiniBatchSize * h.rolloutN)],
    ['--micro_train_batch_size', String(h.microBatchPerGpu)],
    ['--micro_rollout_batch_size', String(h.microBatchPerGpu)],
    ['--temperature', String(h.temperature)],
    ['--prompt_max_len', String(h.maxPromptLength)],
    ['--generate_max_len', String(h.maxResponseLength)],
    ['--init_kl_coef', String(h.klCoef)],
    ['--use_kl_loss'],
    ['--kl_estimator', 'k3'],
    ['--entropy_loss_coef', String(h.entropyCoeff)],
    ['--actor_learning_rate', String(h.learningRate)],
    // num_episodes = passes over the prompts (the paper's epochs); max_epochs = updates per batch.
    ['--num_episodes', String(h.epochs)],
    ['--max_epochs', '1'],
    ['--actor_num_nodes', String(config.nodes)],
    ['--actor_num_gpus_per_node', String(config.gpusPerNode)],
    ['--ref_num_nodes', String(config.nodes)],
    ['--ref_num_gpus_per_node', String(config.gpusPerNode)],
    ['--vllm_num_engines', String(Math.max(1, Math.floor((config.gpusPerNode * config.nodes) / h.rolloutTensorParallel)))],
    ['--vllm_tensor_parallel_size', String(h.rolloutTensorParallel)],
    ['--vllm_gpu_memory_utilization', String(h.gpuMemoryUtilization)],
    ['--colocate_all_models'],
    ['--zero_stage', '3'],
    ['--bf16'],
    ['--gradient_checkpointing'],
    ['--save_path', config.output],
    ['--save_steps', String(h.saveFreq)],
    ['--eval_steps', String(h.testFreq)],
  ];
  const notes = [
    '# Data: `echolens memory grpo-data <memory config> --format openrlhf -o <prompts.jsonl>` (label = question id).',
    "# Reward: `echolens memory reward-server` on this machine, without --token (OpenRLHF's remote RM sends none).",
    '# Start Ray first (`ray start --head`); extra OpenRLHF flags: pass them as arguments.',
  ];
  const args = flags.map((f) => f.map((part, i) => (i === 0 ? part : shellQuote(part))).join(' '));
  return [grpoShellScript('openrlhf', config, notes, [], 'openrlhf.cli.train_ppo_ray', args)];
}

function trlScript(config: TrainConfig): TrainFile[] {
  checkPath(config.data.train, 'data.train', 'trl', /\.jsonl$/i, 'a .jsonl file (memory dpo-pairs: <out>/trl/mixed.jsonl)');
  if (config.data.val !== undefined) checkPath(config.data.val, 'data.val', 'trl', /\.jsonl$/i, 'a .jsonl file');
  const sourced = override(DPO_PAPER_HYPERPARAMETERS, 'this config', config.dpo as Partial<DpoHyperparameters>);
  const h = values(sourced);
  const lines = [
    ...headerLines('trl', config, sourced),
    '"""DPO on the SymPreference mix (DriftLens §5.1, App. I.1) with TRL.',
    '',
    'Data: `echolens memory dpo-pairs <config>` writes <out>/trl/{sympreference,mixed,quick}.jsonl',
    '(conversational prompt / chosen / rejected). Run with DeepSpeed ZeRO-3 on every GPU, e.g.',
    `    accelerate launch --num_processes ${config.gpusPerNode * config.nodes} <this file>`,
    '"""',
    'from datasets import load_dataset',
    'from transformers import AutoModelForCausalLM, AutoTokenizer',
    'from trl import DPOConfig, DPOTrainer',
    '',
    `MODEL = ${py(config.model)}`,
    `TRAIN_FILE = ${py(config.data.train)}`,
    `EVAL_FILE = ${config.data.val === undefined ? 'None' : py(config.data.val)}`,
    '',
    '# ZeRO-3 with bf16, as in the paper; "auto" values are filled in by the Trainer.',
    'ZERO3 = {',
    '    "zero_optimization": {"stage": 3, "overlap_comm": True, "stage3_gather_16bit_weights_on_model_save": True},',
    '    "bf16": {"enabled": True},',
    '    "train_micro_batch_size_per_gpu": "auto",',
    '    "gradient_accumulation_steps": "auto",',
    '}',
    '',
    '',
    'def main():',
    '    tokenizer = AutoTokenizer.from_pretrained(MODEL)',
    '    model = AutoModelForCausalLM.from_pretrained(MODEL, torch_dtype="bfloat16")',
    '    train = load_dataset("json", data_files=TRAIN_FILE, split="train")',
    '    evaluation = load_dataset("json", data_files=EVAL_FILE, split="train") if EVAL_FILE else None',
    '    args = DPOConfig(',
    `        output_dir=${py(config.output)},`,
    `        beta=${String(h.beta)},`,
    '        loss_type="sigmoid",',
    `        learning_rate=${String(h.learningRate)},`,
    `        num_train_epochs=${String(h.epochs)},`,
    '        lr_scheduler_type="cosine",',
    `        warmup_ratio=${String(h.warmupRatio)},`,
    '        bf16=True,',
    `        max_length=${String(h.maxLength)},`,
    `        per_device_train_batch_size=${String(h.perDeviceBatchSize)},`,
    `        gradient_accumulation_steps=${String(h.gradientAccumulation)},`,
    `        save_steps=${String(h.saveSteps)},`,
    `        logging_steps=${String(h.loggingSteps)},`,
    '        deepspeed=ZERO3,',
    '    )',
    '    # ref_model=None: TRL uses a frozen copy of the starting (SFT) model as the reference.',
    '    trainer = DPOTrainer(model=model, ref_model=None, args=args, train_dataset=train, eval_dataset=evaluation, processing_class=tokenizer)',
    '    trainer.train()',
    '    trainer.save_model(args.output_dir)',
    '',
    '',
    'if __name__ == "__main__":',
    '    main()',
    '',
  ];
  return [{ name: '', text: lines.join('\n'), kind: 'python' }];
}

/** The launch files of one engine: the main file first, then any helpers written beside it. */
export function buildTrainFiles(engine: TrainEngine, config: TrainConfig): TrainFile[] {
  return { verl: verlScript, openrlhf: openrlhfScript, trl: trlScript }[engine](config);
}
