import { parseDocument } from 'yaml';
import { InputError } from '../core/errors.js';
import type { Session } from '../sessions/types.js';
import { readInputText } from '../core/user-files.js';

/**
 * Task labels for the same-task / cross-task strata (pure apart from reading an override file).
 *
 * Heuristic: a task starts at every human prompt that is long enough to state a task
 * (at least `minPromptChars` characters, default 40); shorter prompts ("yes", "go on",
 * "run the tests") continue the current task. Each task is labelled `T1`, `T2`, … and
 * carries the first words of its prompt. An override file replaces the heuristic:
 *
 *   tasks:
 *     - { from: 0, label: setup }
 *     - { from: 57, label: fix-parser }
 *
 * (`from` = timeline message index where the task starts; labels may repeat, so two
 * segments of one task can share a label).
 */

export interface TaskSegment {
  /** First timeline message of the task. */
  from: number;
  label: string;
  /** First words of the prompt that opened it (heuristic only). */
  title?: string;
}

export const DEFAULT_MIN_PROMPT_CHARS = 40;

function textOf(session: Session, index: number): string {
  const m = session.messages[index]!;
  return m.blocks
    .map((b) => (b.type === 'text' ? b.text : ''))
    .join(' ')
    .trim();
}

/** Task segments from the human prompts of a session. */
export function taskSegments(session: Session, options: { minPromptChars?: number } = {}): TaskSegment[] {
  const min = options.minPromptChars ?? DEFAULT_MIN_PROMPT_CHARS;
  const segments: TaskSegment[] = [];
  for (const m of session.messages) {
    if (m.kind !== 'human') continue;
    const text = textOf(session, m.index);
    if (text.length < min && segments.length > 0) continue;
    segments.push({ from: m.index, label: `T${segments.length + 1}`, title: text.split(/\s+/).slice(0, 8).join(' ') });
  }
  if (segments.length === 0 || segments[0]!.from > 0) segments.unshift({ from: 0, label: 'T0', title: '(before the first prompt)' });
  return segments;
}

/** Reads a task override file (YAML or JSON): `tasks: [{ from, label }]`, sorted by `from`. */
export function loadTaskOverrides(file: string): TaskSegment[] {
  const text = readInputText(file, 'the task label file');
  let data: unknown;
  try {
    data = parseDocument(text).toJS();
  } catch (error) {
    throw new InputError(`not YAML or JSON: ${(error as Error).message}`, { file });
  }
  const list = (data as { tasks?: unknown } | null)?.tasks;
  if (!Array.isArray(list) || list.length === 0) throw new InputError('expected `tasks:` with a list of { from, label }', { file, field: 'tasks' });
  const out = list.map((entry, i): TaskSegment => {
    const e = entry as { from?: unknown; label?: unknown };
    if (!Number.isInteger(e.from) || (e.from as number) < 0) {
      throw new InputError(`must be a message index ≥ 0, got ${JSON.stringify(e.from)}`, { file, field: `tasks.${i}.from` });
    }
    if (typeof e.label !== 'string' || e.label.trim() === '') {
      throw new InputError('must be a non-empty string', { file, field: `tasks.${i}.label` });
    }
    return { from: e.from as number, label: e.label.trim() };
  });
  out.sort((a, b) => a.from - b.from);
  if (out[0]!.from > 0) out.unshift({ from: 0, label: '(unlabelled)' });
  return out;
}

/** The task label in force at timeline message `index`. */
export function taskAt(segments: readonly TaskSegment[], index: number): string {
  let label = segments[0]?.label ?? 'T0';
  for (const s of segments) {
    if (s.from <= index) label = s.label;
    else break;
  }
  return label;
}

/**
 * The task of a context window: the label that covers most of the window's messages
 * (ties go to the later task). `indices` are the timeline messages in the window.
 */
export function windowTask(segments: readonly TaskSegment[], indices: readonly number[]): string | undefined {
  const counts = new Map<string, number>();
  for (const index of indices) {
    if (index < 0) continue;
    const label = taskAt(segments, index);
    counts.set(label, (counts.get(label) ?? 0) + 1);
  }
  let best: string | undefined;
  let bestCount = 0;
  for (const [label, n] of counts) {
    if (n >= bestCount) {
      best = label;
      bestCount = n;
    }
  }
  return best;
}
