import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parquetReadObjects } from 'hyparquet';
import { memoryConfigSchema } from '../../memory-drift/config.js';
import { resolveMemoryStimuli } from '../../memory-drift/run.js';
import { registerMemoryMitigation } from './memory-mitigation.js';

const fixture = join(import.meta.dirname, '../../memory-drift/mitigation/__fixtures__/dpo-sim.yaml');

function program(): { root: Command; out: string[] } {
  const root = new Command().exitOverride();
  const memory = root.command('memory').exitOverride();
  registerMemoryMitigation(memory);
  for (const command of memory.commands) command.exitOverride();
  const out: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
  return { root, out };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('echolens memory mitigation commands', () => {
  it('registers dpo-pairs, references, reward-server, evaluate and grpo-data on the memory group, each with help', () => {
    const { root } = program();
    const memory = root.commands.find((c) => c.name() === 'memory')!;
    expect(memory.commands.map((c) => c.name())).toEqual(['dpo-pairs', 'references', 'reward-server', 'evaluate', 'grpo-data', 'train-config']);
    for (const command of memory.commands) expect(command.description().length).toBeGreaterThan(20);
  });

  it('dpo-pairs then references, end to end with simulated models', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-cli-dpo-'));
    const db = join(dir, 'nested', 'dpo.db');
    const out = join(dir, 'out');
    const first = program();
    await first.root.parseAsync(['node', 'echolens', 'memory', 'dpo-pairs', fixture, '--db', db, '--out', out, '--set', 'questions.limit=2']);
    expect(first.out.join('')).toMatch(/6 prompts, 60 candidates/);
    expect(existsSync(join(out, 'trl', 'mixed.jsonl')) && existsSync(join(out, 'openrlhf', 'quick.jsonl')) && existsSync(join(out, 'data-card.md'))).toBe(true);
    vi.restoreAllMocks();

    const refs = join(dir, 'refs.jsonl');
    const second = program();
    await second.root.parseAsync([
      'node',
      'echolens',
      'memory',
      'references',
      fixture,
      '--db',
      db,
      '--labeler',
      'sim:labeler',
      '-o',
      refs,
      '--set',
      'questions.limit=2',
    ]);
    expect(second.out.join('')).toMatch(/wrote \d+ references/);
    const lines = readFileSync(refs, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { question_id: string; symbols: string[] });
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.symbols.length).toBeGreaterThan(0);
  });

  it('grpo-data --format verl writes Parquet (read back with hyparquet) with a question-level validation split; openrlhf writes JSONL', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-cli-grpo-'));
    const config = join(dir, 'memory.yaml');
    writeFileSync(config, 'targets: [sim:memory]\nlabeler: sim:labeler\nquestions: { limit: 6 }\nconditions: [filler, gender]\nk: 1\n');
    const stimuli = await resolveMemoryStimuli(memoryConfigSchema.parse({ targets: ['sim:memory'], labeler: 'sim:labeler', questions: { limit: 6 } }));
    const refs = join(dir, 'refs.jsonl');
    writeFileSync(
      refs,
      stimuli.questions.questions.map((q) => JSON.stringify({ question_id: q.id, symbols: ['Protective/Security and stability'] })).join('\n'),
    );
    const train = join(dir, 'data', 'train.parquet');
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const { root } = program();
    await root.parseAsync(['node', 'echolens', 'memory', 'grpo-data', config, '--references', refs, '--val-fraction', '0.5', '-o', train]);
    const read = async (file: string) => {
      const bytes = readFileSync(file);
      const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
      return (await parquetReadObjects({ file: buffer })) as Array<{
        prompt: Array<{ role: string; content: string }>;
        reward_model: { ground_truth: string; style: string };
      }>;
    };
    const trainRows = await read(train);
    const valRows = await read(join(dir, 'data', 'train-val.parquet'));
    // 6 questions × 3 conditions (no_perturbation, filler, gender), split by question.
    expect(trainRows.length + valRows.length).toBe(18);
    expect(trainRows.length % 3).toBe(0);
    expect(valRows.length).toBeGreaterThan(0);
    for (const row of [...trainRows, ...valRows]) {
      expect(row.prompt.at(-1)!.role).toBe('user');
      expect(row.reward_model.style).toBe('rule');
    }
    const trainIds = new Set(trainRows.map((r) => r.reward_model.ground_truth));
    for (const row of valRows) expect(trainIds.has(row.reward_model.ground_truth)).toBe(false);

    await expect(
      program().root.parseAsync(['node', 'echolens', 'memory', 'grpo-data', config, '--references', refs, '-o', join(dir, 'train.jsonl')]),
    ).rejects.toThrow(/Parquet/);
    await expect(
      program().root.parseAsync([
        'node',
        'echolens',
        'memory',
        'grpo-data',
        config,
        '--references',
        refs,
        '--format',
        'openrlhf',
        '-o',
        join(dir, 'p.parquet'),
      ]),
    ).rejects.toThrow(/JSON lines/);
    const jsonl = join(dir, 'prompts.jsonl');
    await program().root.parseAsync(['node', 'echolens', 'memory', 'grpo-data', config, '--references', refs, '--format', 'openrlhf', '-o', jsonl]);
    const lines = readFileSync(jsonl, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { label: string; prompt: unknown[] });
    expect(lines).toHaveLength(18);
    expect(typeof lines[0]!.label).toBe('string');
  });

  it('reward-server --help offers the presets and the anti-distraction, readability and diversity rewards', () => {
    const { root } = program();
    const server = root.commands.find((c) => c.name() === 'memory')!.commands.find((c) => c.name() === 'reward-server')!;
    let help = '';
    server.configureOutput({ writeOut: (text) => (help += text) });
    server.outputHelp();
    for (const flag of ['--preset', '--w-anti-distraction', '--w-readability', '--w-diversity', '--readability-target', '--drift'])
      expect(help).toContain(flag);
    expect(help).toMatch(/authors = 0\.5·r_fmt \+ 0\.5·\(1 − DTW\)/);
  });

  it('train-config writes the verl launch script with its reward client, and the TRL DPO script', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-cli-train-'));
    const config = join(dir, 'train.yaml');
    writeFileSync(config, 'model: google/gemma-2-2b-it\ndata: { train: grpo/train.parquet }\n');
    const verl = join(dir, 'launch', 'train_grpo.sh');
    const first = program();
    await first.root.parseAsync(['node', 'echolens', 'memory', 'train-config', '--engine', 'verl', '-o', verl, config]);
    expect(first.out.join('')).toContain('echolens_reward.py');
    expect(readFileSync(verl, 'utf8')).toContain("'actor_rollout_ref.model.path=google/gemma-2-2b-it'");
    expect(readFileSync(join(dir, 'launch', 'echolens_reward.py'), 'utf8')).toContain('def compute_score(');
    vi.restoreAllMocks();
    const trl = join(dir, 'train_dpo.py');
    await program().root.parseAsync([
      'node',
      'echolens',
      'memory',
      'train-config',
      '--engine',
      'trl',
      '-o',
      trl,
      config,
      '--set',
      'data.train=dpo/trl/mixed.jsonl',
      '--set',
      'dpo.beta=0.05',
    ]);
    expect(readFileSync(trl, 'utf8')).toContain('beta=0.05,');
    // --set data.val=null drops the validation file the config names (JSON null, not the text "null").
    writeFileSync(config, 'model: google/gemma-2-2b-it\ndata: { train: dpo/trl/mixed.jsonl, val: dpo/trl/val.jsonl }\n');
    await program().root.parseAsync(['node', 'echolens', 'memory', 'train-config', '--engine', 'trl', '-o', trl, config]);
    expect(readFileSync(trl, 'utf8')).toContain('EVAL_FILE = "dpo/trl/val.jsonl"');
    await program().root.parseAsync(['node', 'echolens', 'memory', 'train-config', '--engine', 'trl', '-o', trl, config, '--set', 'data.val=null']);
    expect(readFileSync(trl, 'utf8')).toContain('EVAL_FILE = None');
    await expect(program().root.parseAsync(['node', 'echolens', 'memory', 'train-config', '--engine', 'deepspeed', '-o', trl, config])).rejects.toThrow(
      /--engine/,
    );
  });

  it('rejects a malformed --model with a named argument', async () => {
    const refs = join(mkdtempSync(join(tmpdir(), 'echolens-cli-eval-')), 'refs.jsonl');
    writeFileSync(refs, '{"question_id":"q1","symbols":["Protective/Security and stability"]}\n');
    const { root } = program();
    await expect(
      root.parseAsync(['node', 'echolens', 'memory', 'evaluate', '--references', refs, '--labeler', 'sim:labeler', '--model', 'no-equals-sign']),
    ).rejects.toThrow(/--model/);
  });
});
