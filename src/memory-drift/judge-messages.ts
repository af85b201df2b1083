import type { ChatMessage } from '../models/types.js';

/**
 * The two message shapes every memory-drift labeler, rater and judge uses: a prompt (a system
 * instruction and one user turn) and a re-ask after an unusable answer (the conversation so
 * far, the bad answer, and a reminder of the format).
 */

/** A system instruction and one user turn made of these lines. */
export function promptMessages(system: string, userLines: readonly string[]): ChatMessage[] {
  return [
    { role: 'system', content: system },
    { role: 'user', content: userLines.join('\n') },
  ];
}

/** Some providers reject an empty assistant turn, so an empty bad answer is shown as this marker. */
export const EMPTY_ANSWER_MARKER = '(empty response)';

/** The conversation so far, the bad answer as the assistant turn, then the reminder as a user turn. */
export function reaskMessages(previous: readonly ChatMessage[], badOutput: string, reminder: string): ChatMessage[] {
  const shown = badOutput.trim() === '' ? EMPTY_ANSWER_MARKER : badOutput;
  return [...previous, { role: 'assistant', content: shown }, { role: 'user', content: reminder }];
}
