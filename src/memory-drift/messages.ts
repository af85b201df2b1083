import { InvalidArgumentError } from '../core/errors.js';
import { fillTemplate, type StringPart } from '../materials/python-literal.js';
import type { ChatMessage } from '../models/types.js';

/**
 * Where the perturbation goes (docs/decisions.md#d10). `prepend`: one line before the
 * question (the paper, default). `system`: a memory block in the system prompt
 * (the reference code). `memory-tool`: the memory surfaced as a lookup result,
 * the way tool-using assistants read a memory store.
 */
export type InjectionMode = 'prepend' | 'system' | 'memory-tool';
export const INJECTION_MODES: readonly InjectionMode[] = ['prepend', 'system', 'memory-tool'];

export const GENERATION_SYSTEM_PROMPT = 'You are a helpful assistant. Answer in the exact format the user asks for.';

/** Marks where the question (and a prepended memory line) starts in the user message. */
export const QUESTION_MARKER = 'Question:\n';

export const GENERATION_INSTRUCTION = [
  'Think through the question below before you answer. Write your reasoning as a short sequence of numbered steps, ' +
    'one idea per step, inside <think> tags, then give your final answer inside <answer> tags. Use exactly this format:',
  '',
  '<think>',
  '<step_1>…</step_1>',
  '<step_2>…</step_2>',
  '…',
  '</think>',
  '<answer>…</answer>',
  '',
  'Write at least two steps and put nothing outside the tags.',
].join('\n');

/** Heading of the memory block in `system` mode. */
export const SYSTEM_MEMORY_HEADER = 'Saved memory about the user (from earlier conversations):';
/** The assistant turn that performs the lookup in `memory-tool` mode. */
export const MEMORY_TOOL_CALL = 'Before answering, I will check my saved memory about you.\n<memory_lookup path="/memories/user.md"/>';
export const MEMORY_RESULT_OPEN = '<memory_result path="/memories/user.md">';
export const MEMORY_RESULT_CLOSE = '</memory_result>';
export const MEMORY_TOOL_FOLLOWUP = 'Now answer the question above in the required format.';

export interface GenerationMessageOptions {
  /** System prompt; `null` sends none (models without a system role). Default GENERATION_SYSTEM_PROMPT. */
  systemPrompt?: string | null;
  /** Replaces GENERATION_INSTRUCTION (the step-format request). */
  instruction?: string;
  /**
   * The authors' own generation texts (from their repository): their system prompt (used when
   * `systemPrompt` is undefined) and their instruction template, whose `question` field gets the
   * persona string followed directly by the question (prepend mode only).
   */
  reference?: { systemPrompt: string; instruction: readonly StringPart[] };
}

/**
 * Builds the generation request for one question under one perturbation.
 *
 * Shapes (an empty perturbation gives the plain shape in every mode, so the
 * no-memory reference is the same cell whatever the mode):
 * - plain / prepend: [system?, user: instruction + "\n\nQuestion:\n" + (memory + "\n")? + question]
 * - system: [system: systemPrompt + "\n\n" + SYSTEM_MEMORY_HEADER + "\n" + memory, user: instruction + question]
 * - memory-tool: [system?, user: instruction + question, assistant: MEMORY_TOOL_CALL,
 *   user: MEMORY_RESULT_OPEN + "\n" + memory + "\n" + MEMORY_RESULT_CLOSE + "\n" + MEMORY_TOOL_FOLLOWUP]
 */
export function buildGenerationMessages(
  question: string,
  perturbation: string | { text: string } | null,
  mode: InjectionMode = 'prepend',
  options: GenerationMessageOptions = {},
): ChatMessage[] {
  if (question.trim() === '') throw new InvalidArgumentError('question', 'must be non-empty');
  if (!INJECTION_MODES.includes(mode)) throw new InvalidArgumentError('mode', `must be one of ${INJECTION_MODES.join(', ')}`);
  const memory = perturbation === null ? '' : typeof perturbation === 'string' ? perturbation : perturbation.text;
  if (/[\r\n]/.test(memory)) throw new InvalidArgumentError('perturbation', 'must be a single line');
  if (options.reference !== undefined) {
    if (mode !== 'prepend') throw new InvalidArgumentError('mode', 'the reference generation texts place the memory before the question (prepend)');
    const system = options.systemPrompt === undefined ? options.reference.systemPrompt : options.systemPrompt;
    // The authors' persona strings end with their own space; a borrowed string (echolens's noise
    // and life events, a user file) gets one, so memory and question stay two sentences.
    const joined = memory === '' || /\s$/u.test(memory) ? memory : `${memory} `;
    const user = fillTemplate(options.reference.instruction, { question: `${joined}${question.trim()}` });
    return [...(system === null ? [] : [{ role: 'system' as const, content: system }]), { role: 'user', content: user }];
  }
  const systemPrompt = options.systemPrompt === undefined ? GENERATION_SYSTEM_PROMPT : options.systemPrompt;
  const instruction = options.instruction ?? GENERATION_INSTRUCTION;
  const userText = (memoryLine: string) => `${instruction}\n\n${QUESTION_MARKER}${memoryLine}${question.trim()}`;

  // An empty memory gives the plain shape in every mode.
  const placed = memory === '' ? null : mode;
  const system = placed === 'system' ? [systemPrompt, `${SYSTEM_MEMORY_HEADER}\n${memory}`].filter((part) => part !== null).join('\n\n') : systemPrompt;
  const messages: ChatMessage[] = [
    ...(system === null ? [] : [{ role: 'system' as const, content: system }]),
    { role: 'user', content: userText(placed === 'prepend' ? `${memory}\n` : '') },
  ];
  if (placed === 'memory-tool') {
    messages.push(
      { role: 'assistant', content: MEMORY_TOOL_CALL },
      { role: 'user', content: `${MEMORY_RESULT_OPEN}\n${memory}\n${MEMORY_RESULT_CLOSE}\n${MEMORY_TOOL_FOLLOWUP}` },
    );
  }
  return messages;
}
