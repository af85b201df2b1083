import type { Session, SessionMessage } from './types.js';

/**
 * The session's goal for goal re-injection (pure): its first human prompt that states a task.
 * Skipped: slash commands typed as prompts (`/init`), the prompt a slash command expands to
 * (Claude Code writes it as a user message right after the `<command-name>` one, unless the
 * command was a local one that printed `<local-command-stdout>` instead), prompts the
 * harness writes itself (the `/init` instructions of either tool), and prompts with no text.
 * When nothing is left, the arguments of the first slash command that had some are the goal.
 */

export interface SessionGoal {
  text: string;
  /** Timeline index of the message it came from. */
  messageIndex: number;
  /** `prompt`, or `command arguments` when taken from a slash command's arguments. */
  source: 'prompt' | 'command arguments';
  /** Human messages passed over before it, and why. */
  skipped: Array<{ messageIndex: number; reason: string }>;
}

/** Openings of prompts that the tools write on the user's behalf. */
export const HARNESS_PROMPT_OPENINGS = [
  'Please analyze this codebase and create a CLAUDE.md file',
  'Generate a file named AGENTS.md',
  'Your task is to create a detailed summary of the conversation so far',
];

const DEFAULT_MAX_CHARS = 1000;

function textOf(m: SessionMessage): string {
  return m.blocks
    .map((b) => (b.type === 'text' ? b.text : ''))
    .join('\n')
    .trim();
}

function isCommandMessage(text: string): boolean {
  return text.startsWith('<command-name>') || text.startsWith('<command-message>');
}

export function sessionGoal(session: Session, maxChars: number = DEFAULT_MAX_CHARS): SessionGoal | undefined {
  const skipped: SessionGoal['skipped'] = [];
  let commandArgs: { text: string; messageIndex: number } | undefined;
  let afterCommand = false;
  for (const m of session.messages) {
    if (m.role !== 'user' || m.kind === 'tool_result') continue;
    const text = textOf(m);
    if (m.kind !== 'human') {
      if (m.kind === 'injected' && isCommandMessage(text)) {
        afterCommand = true;
        const args = /<command-args>([\s\S]*?)<\/command-args>/.exec(text)?.[1]?.trim();
        if (commandArgs === undefined && args) commandArgs = { text: args, messageIndex: m.index };
      } else if (text.startsWith('<local-command-')) {
        // A local command (/clear, /model …) printed its output: it expands to no prompt.
        afterCommand = false;
      }
      continue;
    }
    const wasAfterCommand = afterCommand;
    afterCommand = false;
    let reason: string | undefined;
    if (text === '') reason = 'no text';
    else if (/^\/[A-Za-z][\w:-]*(\s|$)/.test(text)) reason = 'slash command';
    else if (wasAfterCommand) reason = 'slash command expansion';
    else if (HARNESS_PROMPT_OPENINGS.some((opening) => text.startsWith(opening))) reason = 'harness prompt';
    if (reason === undefined) return { text: text.slice(0, maxChars), messageIndex: m.index, source: 'prompt', skipped };
    skipped.push({ messageIndex: m.index, reason });
  }
  if (commandArgs !== undefined)
    return { text: commandArgs.text.slice(0, maxChars), messageIndex: commandArgs.messageIndex, source: 'command arguments', skipped };
  return undefined;
}
