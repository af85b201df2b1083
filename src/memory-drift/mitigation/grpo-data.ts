import { sha256Hex } from '../../core/canonical-json.js';
import { InvalidArgumentError } from '../../core/errors.js';
import type { ChatMessage } from '../../models/types.js';
import type { CellSpec } from '../../store/types.js';
import type { ReferenceMap } from './reward.js';

/**
 * GRPO training prompts (DriftLens §5): one row per (question, perturbation) of a memory
 * config's plan, in the prompt-dataset shapes the trainers read, each labelled so that the
 * reward server (`memory reward-server`) can score the rollouts:
 *
 * - verl (RL dataset: `data_source`, `prompt` as chat messages, `ability`, `reward_model:
 *   { style: "rule", ground_truth }`, `extra_info`): `ground_truth` = the question id, or with
 *   `inline` the reference trajectory o*(x) itself (a list of symbols);
 * - OpenRLHF (`--input_key prompt --label_key label --apply_chat_template`): `prompt` as chat
 *   messages, `label` = the question id (or the reference list with `inline`).
 *
 * Pure: rows in, rows out; the CLI writes verl rows as Parquet (verl-parquet.ts) and OpenRLHF rows
 * as JSONL.
 */

export type GrpoFormat = 'verl' | 'openrlhf';

export interface VerlPromptRow {
  data_source: string;
  prompt: ChatMessage[];
  ability: string;
  reward_model: { style: 'rule'; ground_truth: string | string[] };
  extra_info: { index: number; question_id: string; condition: string; tier: string; stimulus_id: string };
}

export interface OpenRlhfPromptRow {
  prompt: ChatMessage[];
  label: string | string[];
  question_id: string;
  condition: string;
}

export interface GrpoExport {
  rows: Array<VerlPromptRow | OpenRlhfPromptRow>;
  /** Prompts left out because their question has no reference trajectory. */
  withoutReference: string[];
}

/** Rows for the sample-0 generation cells of a plan (one per question × stimulus). */
export function grpoPromptRows(
  cells: readonly CellSpec[],
  references: ReferenceMap,
  options: { format: GrpoFormat; inline?: boolean; dataSource?: string },
): GrpoExport {
  const rows: GrpoExport['rows'] = [];
  const missing = new Set<string>();
  for (const cell of cells) {
    if (cell.request.sample !== 0) continue;
    const l = cell.labels;
    const questionId = String(l.question_id);
    const reference = references.get(questionId);
    if (reference === undefined) {
      missing.add(questionId);
      continue;
    }
    const label = options.inline ? [...reference] : questionId;
    const prompt = cell.request.messages.map((m) => ({ ...m }));
    if (options.format === 'verl') {
      rows.push({
        data_source: options.dataSource ?? 'echolens-driftlens',
        prompt,
        ability: 'reasoning',
        reward_model: { style: 'rule', ground_truth: label },
        extra_info: { index: rows.length, question_id: questionId, condition: String(l.condition), tier: String(l.tier), stimulus_id: String(l.stimulus_id) },
      });
    } else {
      rows.push({ prompt, label, question_id: questionId, condition: String(l.condition) });
    }
  }
  return { rows, withoutReference: [...missing].sort() };
}

/**
 * A held-out split by question (the paper trains on 80% and validates on 20%, App. I.2): a
 * question's prompts all go to the same side, so no question is seen in both. The side is fixed
 * by the SHA-256 of the question id (its first 32 bits as a fraction of 2^32 below `fraction`
 * → validation), so the split does not depend on row order and a question stays on its side
 * when questions are added. `extra_info.index` is renumbered within each side.
 */
export function splitByQuestion<R extends VerlPromptRow | OpenRlhfPromptRow>(rows: readonly R[], fraction: number): { train: R[]; val: R[] } {
  if (!(fraction >= 0 && fraction < 1)) throw new InvalidArgumentError('fraction', `must be in [0, 1), got ${fraction}`);
  const train: R[] = [];
  const val: R[] = [];
  for (const row of rows) {
    const id = 'extra_info' in row ? row.extra_info.question_id : row.question_id;
    const u = Number.parseInt(sha256Hex(id).slice(0, 8), 16) / 2 ** 32;
    (u < fraction ? val : train).push(row);
  }
  const renumber = (side: R[]) => side.map((row, index) => ('extra_info' in row ? { ...row, extra_info: { ...row.extra_info, index } } : row));
  return { train: renumber(train), val: renumber(val) };
}
