import { parquetWriteBuffer } from 'hyparquet-writer';
import { InvalidArgumentError } from '../../core/errors.js';
import type { VerlPromptRow } from './grpo-data.js';

/**
 * verl's RL dataset as Parquet (verl reads `data.train_files` with the Hugging Face `datasets`
 * Parquet loader). The schema is the one verl's own data-preparation scripts produce:
 *
 * ```
 * data_source: string
 * prompt: list<struct<content: string, role: string>>
 * ability: string
 * reward_model: struct<ground_truth: string, style: string>
 * extra_info: struct<index: int64, question_id, condition, tier, stimulus_id: string>
 * ```
 *
 * `ground_truth` is always a string column (a Parquet column has one type): the question id, or
 * with inline references the symbol list written as a JSON array string, which the reward
 * server reads back as the reference trajectory (reward.ts `referenceFromLabel`).
 *
 * Written with hyparquet-writer (pure JavaScript, no native build; Snappy compression).
 */

const text = (name: string) => ({ name, type: 'BYTE_ARRAY' as const, converted_type: 'UTF8' as const, repetition_type: 'REQUIRED' as const });

const SCHEMA = [
  { name: 'root', num_children: 5 },
  text('data_source'),
  // The standard three-level LIST: prompt (LIST) → list (repeated) → element (struct).
  { name: 'prompt', repetition_type: 'REQUIRED' as const, converted_type: 'LIST' as const, num_children: 1 },
  { name: 'list', repetition_type: 'REPEATED' as const, num_children: 1 },
  { name: 'element', repetition_type: 'REQUIRED' as const, num_children: 2 },
  text('content'),
  text('role'),
  text('ability'),
  { name: 'reward_model', repetition_type: 'REQUIRED' as const, num_children: 2 },
  text('ground_truth'),
  text('style'),
  { name: 'extra_info', repetition_type: 'REQUIRED' as const, num_children: 5 },
  { name: 'index', type: 'INT64' as const, repetition_type: 'REQUIRED' as const },
  text('question_id'),
  text('condition'),
  text('tier'),
  text('stimulus_id'),
];

/** verl rows → the bytes of one Parquet file (one row group per 1,000 rows by default). */
export function verlRowsToParquet(rows: readonly VerlPromptRow[]): Uint8Array {
  if (rows.length === 0) throw new InvalidArgumentError('rows', 'needs at least one row (an empty Parquet file cannot be typed)');
  // Field order inside the structs follows the schema; the writer reads fields by name.
  const columns = {
    data_source: rows.map((r) => r.data_source),
    prompt: rows.map((r) => r.prompt.map((m) => ({ content: m.content, role: m.role }))),
    ability: rows.map((r) => r.ability),
    // ground_truth: an id as is, a reference list as a JSON array string.
    reward_model: rows.map(({ reward_model: { ground_truth, style } }) => ({
      ground_truth: typeof ground_truth === 'string' ? ground_truth : JSON.stringify(ground_truth),
      style,
    })),
    extra_info: rows.map((r) => ({ ...r.extra_info, index: BigInt(r.extra_info.index) })),
  };
  const buffer = parquetWriteBuffer({
    columnData: Object.entries(columns).map(([name, data]) => ({ name, data })) as Parameters<typeof parquetWriteBuffer>[0]['columnData'],
    schema: SCHEMA,
    createdBy: 'echolens memory grpo-data',
  });
  return new Uint8Array(buffer);
}
